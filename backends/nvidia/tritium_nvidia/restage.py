"""An 8-bit wgmma operand staged along its other dimension (fp8/int8 B stored (K, N), N contiguous) rewritten
K-major into scratch, as wgmma reads 8-bit operands only K-major.

Before, the stage was read into registers in the load's layout (16 consecutive n per thread) and each byte stored
alone: 128 one-byte shared stores per thread per iteration for a 128 x 256 tile (Triton 3.6 does the same from
registers), several of them to one bank. Here each thread moves 4 x 4-byte blocks: four 4-byte reads along the
stage's contiguous dimension, a byte transpose in registers (PRMT), four 4-byte writes along K: 32 reads and 32
writes per thread for that tile.

Lanes map to blocks so that both sides are free of bank conflicts with 128-byte swizzled rows (16-byte chunk
c of row r at c ^ (r % 8)): with a = the block's K index (k = 4a) and b = its other index (o = 4b), a read of
row k + i touches bank ((b / 4 ^ k % 8) * 4 + b % 4) and a write of row o + j bank ((a / 4 ^ o % 8) * 4 + a % 4).
Lane bits (l0..l4) give a = l2 + 2 l3 + 4 l1 + 8 l4 and b = l0 + 2 l1 + 4 l3 + 8 l4, which makes both 32
distinct; the lanes' blocks form a subspace of the 16 x 16 blocks of a 64 x 64-byte region (over XOR), and its
8 cosets (a ^ 2c, c < 8) tile the region, each a warp's task, conflict-free for the same reason. Other shapes
and swizzles keep the general rewrite (correct either way; only the bank pattern depends on this)."""
from __future__ import annotations

from typing import Any

from tritium.gpu.lower.context import Context
from tritium.gpu.lower.shared import SharedTile, SmemLayout

_REGION = 64        # bytes along each dimension of the region the 8 cosets of one warp pattern tile


def can_restage(src: SmemLayout, k_dim: int, num_warps: int) -> bool:
    if src.eb != 1 or len(src.shape) != 2 or src.fast == k_dim:
        return False
    k_len, o_len = src.shape[k_dim], src.shape[1 - k_dim]
    regions = (k_len // _REGION) * (o_len // _REGION)
    return k_len % _REGION == 0 and o_len % _REGION == 0 and regions * 8 % num_warps == 0


def restage(lo: Context, src: SharedTile, dst: SharedTile, k_dim: int) -> None:
    """Copy ``src`` into ``dst`` (its K-major twin) in 4 x 4-byte blocks (``can_restage`` must hold)."""
    fn = lo.fn
    sp = lo.target.shared_ptr
    k_len, o_len = src.smem.shape[k_dim], src.smem.shape[1 - k_dim]

    def bit(i: int) -> str:
        return fn.inst(f"and i32 {fn.inst(f'lshr i32 {lo.lane}, {i}')}, 1")

    def place(parts: list[tuple[str, int]]) -> str:
        acc = "0"
        for x, sh in parts:
            acc = fn.inst(f"or i32 {acc}, {fn.inst(f'shl i32 {x}, {sh}')}")
        return acc

    l0, l1, l2, l3, l4 = (bit(i) for i in range(5))
    a_lane = place([(l2, 0), (l3, 1), (l1, 2), (l4, 3)])
    b_lane = place([(l0, 0), (l1, 1), (l3, 2), (l4, 3)])
    o_regions = o_len // _REGION
    tasks = (k_len // _REGION) * o_regions * 8
    for r in range(tasks // lo.num_warps):
        t = fn.inst(f"add i32 {lo.warp}, {r * lo.num_warps}")
        coset = fn.inst(f"and i32 {t}, 7")
        region = fn.inst(f"lshr i32 {t}, 3")
        rk = fn.inst(f"udiv i32 {region}, {o_regions}")
        ro = fn.inst(f"urem i32 {region}, {o_regions}")
        a = fn.inst(f"xor i32 {a_lane}, {fn.inst(f'shl i32 {coset}, 1')}")
        k0 = fn.inst(f"add i32 {fn.inst(f'mul i32 {rk}, {_REGION}')}, {fn.inst(f'shl i32 {a}, 2')}")
        o0 = fn.inst(f"add i32 {fn.inst(f'mul i32 {ro}, {_REGION}')}, {fn.inst(f'shl i32 {b_lane}, 2')}")

        def at(tile: SharedTile, k: str, o: str) -> str:
            coords = [k, o] if k_dim == 0 else [o, k]
            return lo.smem_ptr(tile.base, tile.smem.offset(lo, coords))

        words = []
        for i in range(4):
            p = at(src, k0 if i == 0 else fn.inst(f"add i32 {k0}, {i}"), o0)
            words.append(fn.inst(f"bitcast i32 {fn.inst(f'load i32, {sp} {p}, align 4')} to <4 x i8>"))
        # byte j of word i (k0 + i, o0 + j) goes to byte i of output word j (o0 + j, k0 + i)
        lo01 = fn.inst(f"shufflevector <4 x i8> {words[0]}, <4 x i8> {words[1]}, "
                       "<8 x i32> <i32 0, i32 4, i32 1, i32 5, i32 2, i32 6, i32 3, i32 7>")
        lo23 = fn.inst(f"shufflevector <4 x i8> {words[2]}, <4 x i8> {words[3]}, "
                       "<8 x i32> <i32 0, i32 4, i32 1, i32 5, i32 2, i32 6, i32 3, i32 7>")
        for j in range(4):
            out = fn.inst(f"shufflevector <8 x i8> {lo01}, <8 x i8> {lo23}, <4 x i32> <i32 {2 * j}, "
                          f"i32 {2 * j + 1}, i32 {8 + 2 * j}, i32 {9 + 2 * j}>")
            p = at(dst, k0, o0 if j == 0 else fn.inst(f"add i32 {o0}, {j}"))
            fn.emit(f"store i32 {fn.inst(f'bitcast <4 x i8> {out} to i32')}, {sp} {p}, align 4")
