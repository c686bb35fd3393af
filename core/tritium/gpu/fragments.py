"""Layouts of a dot computed with a matrix instruction (an MMA/MFMA-like unit): the instruction's fragment, the
register and lane bases of one tile_m x tile_n x tile_k tile, is spread over the warps and then repeated over
registers to cover the whole M x N x K dot. Target-neutral: a backend gives its instruction's fragment."""
from __future__ import annotations

from typing import Sequence

from . import layout as L

Bases = Sequence[tuple[int, int]]


def warp_grid(M: int, N: int, tile_m: int, tile_n: int, num_warps: int) -> tuple[int, int]:
    """Warps along M and N: split the larger remaining dimension (counted in instruction tiles)."""
    wm = wn = 1
    while wm * wn < num_warps:
        if M // (tile_m * wm) >= N // (tile_n * wn) and M // (tile_m * wm) > 1:
            wm *= 2
        elif N // (tile_n * wn) > 1:
            wn *= 2
        else:
            wm *= 2
    return wm, wn


def repeats(step: int, size: int, dim: int) -> list[tuple[int, int]]:
    """Register bases that repeat a tile of extent ``step`` along ``dim`` up to ``size``."""
    out, v = [], step
    while v < size:
        out.append((v, 0) if dim == 0 else (0, v))
        v <<= 1
    return out


def tiled_layouts(M: int, N: int, K: int, tile: tuple[int, int, int], a_reg: Bases, a_lane: Bases, b_reg: Bases,
                  b_lane: Bases, c_reg: Bases, c_lane: Bases,
                  num_warps: int) -> tuple[L.Layout, L.Layout, L.Layout]:
    """(accumulator, A, B) layouts of an M x N x K dot made of ``tile`` = (m, n, k) instruction tiles."""
    tile_m, tile_n, tile_k = tile
    wm, wn = warp_grid(M, N, tile_m, tile_n, num_warps)
    wbits_m = [(tile_m << i, 0) for i in range(wm.bit_length() - 1)]
    wbits_n = [(0, tile_n << i) for i in range(wn.bit_length() - 1)]
    # warps past the tile's extent hold copies
    wbits_m = [b if b[0] < M else (0, 0) for b in wbits_m]
    wbits_n = [b if b[1] < N else (0, 0) for b in wbits_n]
    rep_m, rep_n = repeats(tile_m * wm, M, 0), repeats(tile_n * wn, N, 1)
    zero = (0, 0)
    acc = L.Layout((M, N), list(c_reg) + rep_n + rep_m, c_lane, wbits_m + wbits_n)
    a = L.Layout((M, K), list(a_reg) + repeats(tile_k, K, 1) + rep_m, a_lane, wbits_m + [zero] * len(wbits_n))
    b = L.Layout((K, N), list(b_reg) + repeats(tile_k, K, 0) + rep_n, b_lane, [zero] * len(wbits_m) + wbits_n)
    return acc, a, b
