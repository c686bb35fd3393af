"""The linear layout type: which element register ``r`` of lane ``l`` of warp ``w`` holds (the XOR of the bases
of the set bits), its text form, and Triton's blocked layouts (built, and recognized for the text form).
The operations that derive one layout from another live in ``layout.py``, which re-exports all of this.
"""
from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Optional, Sequence

Vec = tuple[int, ...]


def _log2(n: int) -> int:
    if n <= 0 or n & (n - 1):
        raise ValueError(f"{n} is not a power of two")
    return n.bit_length() - 1


def _xor(a: Vec, b: Vec) -> Vec:
    return tuple(x ^ y for x, y in zip(a, b))


class Layout:
    """A linear layout of a tile of ``shape`` over registers, lanes and warps."""

    __slots__ = ("shape", "reg", "lane", "warp", "_hash", "_reg_coords")

    def __init__(self, shape: Sequence[int], reg: Sequence[Vec], lane: Sequence[Vec], warp: Sequence[Vec]):
        self.shape = tuple(int(s) for s in shape)
        self.reg = tuple(tuple(int(x) for x in b) for b in reg)
        self.lane = tuple(tuple(int(x) for x in b) for b in lane)
        self.warp = tuple(tuple(int(x) for x in b) for b in warp)
        for b in self.reg + self.lane + self.warp:
            if len(b) != len(self.shape):
                raise ValueError(f"basis {b} does not match the rank of shape {self.shape}")
        self._hash = hash((self.shape, self.reg, self.lane, self.warp))
        self._reg_coords: Optional[list[Vec]] = None

    # -- identity ----------------------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Layout) and self._hash == other._hash and self.shape == other.shape
                and self.reg == other.reg and self.lane == other.lane and self.warp == other.warp)

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"Layout({self.text()}, shape={list(self.shape)})"

    # -- sizes -------------------------------------------------------------------------------------
    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def num_regs(self) -> int:
        return 1 << len(self.reg)

    @property
    def warp_size(self) -> int:
        return 1 << len(self.lane)

    @property
    def num_warps(self) -> int:
        return 1 << len(self.warp)

    # -- coordinates -------------------------------------------------------------------------------
    def zero(self) -> Vec:
        return (0, ) * self.rank

    def combine(self, bases: Sequence[Vec], index: int) -> Vec:
        out = self.zero()
        i = 0
        while index:
            if index & 1:
                out = _xor(out, bases[i])
            index >>= 1
            i += 1
        return out

    def reg_coords(self, r: int) -> Vec:
        """The coordinates register ``r`` holds in lane 0 of warp 0."""
        if self._reg_coords is None:
            self._reg_coords = [self.combine(self.reg, i) for i in range(self.num_regs)]
        return self._reg_coords[r]

    def coords(self, r: int, lane: int, warp: int) -> Vec:
        return _xor(_xor(self.reg_coords(r), self.combine(self.lane, lane)), self.combine(self.warp, warp))

    def unique_regs(self) -> list[int]:
        """Registers that are not copies of a lower register (zero register bases duplicate data)."""
        dup = sum(1 << i for i, b in enumerate(self.reg) if not any(b))
        return [r for r in range(self.num_regs) if not r & dup]

    def dup_mask(self, kind: str) -> int:
        """Bits of the lane (or warp) index whose threads hold copies of the same data."""
        bases = self.lane if kind == "lane" else self.warp
        return sum(1 << i for i, b in enumerate(bases) if not any(b))

    def reg_run(self, dim: int) -> int:
        """How many consecutive registers (from register 0, 1, 2, ...) hold consecutive elements along
        ``dim``: the width of a vector access along that dimension."""
        n = 0
        for i, b in enumerate(self.reg):
            if b == tuple((1 << i) if d == dim else 0 for d in range(self.rank)):
                n += 1
            else:
                break
        return 1 << n

    def is_single_dim(self) -> bool:
        return all(sum(1 for x in b if x) <= 1 and all(x & (x - 1) == 0 for x in b)
                   for b in self.reg + self.lane + self.warp)

    # -- text form ---------------------------------------------------------------------------------
    def text(self) -> str:
        b = as_blocked(self)
        if b is not None:
            spt, tpw, wpc, order = b
            return f"blocked{{spt={_l(spt)},tpw={_l(tpw)},wpc={_l(wpc)},order={_l(order)}}}"
        return "linear{" + ",".join(f"{k}={json.dumps([list(v) for v in getattr(self, k)], separators=(',', ':'))}"
                                    for k in ("reg", "lane", "warp")) + "}"


def _l(v: Sequence[int]) -> str:
    return "[" + ",".join(str(x) for x in v) + "]"


_BLOCKED_RE = re.compile(r"blocked\{spt=(\[[^\]]*\]),tpw=(\[[^\]]*\]),wpc=(\[[^\]]*\]),order=(\[[^\]]*\])\}")
_LINEAR_RE = re.compile(r"linear\{reg=(\[.*?\]),lane=(\[.*?\]),warp=(\[.*?\])\}$")


def parse(text: str, shape: Sequence[int]) -> Layout:
    """Read a layout written by :meth:`Layout.text` back, for a tile of ``shape``."""
    m = _BLOCKED_RE.fullmatch(text.strip())
    if m:
        spt, tpw, wpc, order = (json.loads(g) for g in m.groups())
        return blocked(shape, spt, tpw, wpc, order)
    m = _LINEAR_RE.fullmatch(text.strip())
    if m:
        reg, lane, warp = (json.loads(g) for g in m.groups())
        return Layout(shape, [tuple(b) for b in reg], [tuple(b) for b in lane], [tuple(b) for b in warp])
    raise ValueError(f"cannot read layout {text!r} (expected blocked{{...}} or linear{{...}})")


# -- constructors ------------------------------------------------------------------------------------
def blocked(shape: Sequence[int], spt: Sequence[int], tpw: Sequence[int], wpc: Sequence[int],
            order: Sequence[int]) -> Layout:
    """Triton's blocked layout: each thread holds ``spt`` contiguous elements per dimension, ``tpw`` threads
    of a warp and ``wpc`` warps tile the dimensions in ``order`` (fastest first), repeating to cover the
    shape; a layout larger than the shape wraps around (its extra threads hold copies)."""
    return _blocked(tuple(shape), tuple(spt), tuple(tpw), tuple(wpc), tuple(order))


@lru_cache(maxsize=4096)
def _blocked(shape: Vec, spt: Vec, tpw: Vec, wpc: Vec, order: Vec) -> Layout:
    rank = len(shape)

    def unit(d: int, v: int) -> Vec:
        v = v if v < shape[d] else 0      # past the shape: a copy (broadcast)
        return tuple(v if i == d else 0 for i in range(rank))

    reg, lane, warp = [], [], []
    for d in order:
        reg += [unit(d, 1 << i) for i in range(_log2(spt[d]))]
    for d in order:
        lane += [unit(d, spt[d] << i) for i in range(_log2(tpw[d]))]
    for d in order:
        warp += [unit(d, spt[d] * tpw[d] << i) for i in range(_log2(wpc[d]))]
    for d in order:
        tile = spt[d] * tpw[d] * wpc[d]
        v = tile
        while v < shape[d]:
            reg.append(unit(d, v))
            v <<= 1
    return Layout(shape, reg, lane, warp)


def default_blocked(shape: Sequence[int], num_warps: int, warp_size: int, vec: int = 1,
                    order: Optional[Sequence[int]] = None) -> Layout:
    """A blocked layout covering ``shape`` with ``vec`` contiguous elements per thread along the fastest
    dimension of ``order`` (default: the last), threads then warps filling the dimensions in order."""
    rank = len(shape)
    if rank == 0:
        raise ValueError("a layout needs a tile of rank >= 1")
    order = tuple(order) if order is not None else tuple(range(rank - 1, -1, -1))
    spt = [1] * rank
    spt[order[0]] = max(1, min(vec, shape[order[0]]))
    tpw = [1] * rank
    left = warp_size
    for d in order:
        room = max(1, shape[d] // (spt[d]))
        t = min(left, room)
        tpw[d] = t
        left //= t
    tpw[order[-1]] *= left          # more threads than elements: the rest hold copies
    wpc = [1] * rank
    left = num_warps
    for d in order[::-1] if rank > 1 else order:
        room = max(1, shape[d] // (spt[d] * tpw[d]))
        w = min(left, room)
        wpc[d] = w
        left //= w
    wpc[order[0] if rank == 1 else order[-1]] *= left
    return blocked(shape, spt, tpw, wpc, order)


def as_blocked(layout: Layout) -> Optional[tuple[list[int], list[int], list[int], list[int]]]:
    """(spt, tpw, wpc, order) if ``layout`` is a blocked layout of its shape, else None."""
    return _as_blocked(layout)


@lru_cache(maxsize=4096)
def _as_blocked(layout: Layout) -> Optional[tuple[list[int], list[int], list[int], list[int]]]:
    rank = layout.rank
    if not layout.is_single_dim():
        return None

    def dim_of(b: Vec) -> Optional[int]:
        for d, x in enumerate(b):
            if x:
                return d
        return None

    # order: the dims in the order their first register (or lane, warp) basis appears
    order: list[int] = []
    for b in layout.reg + layout.lane + layout.warp:
        d = dim_of(b)
        if d is not None and d not in order:
            order.append(d)
    order += [d for d in range(rank - 1, -1, -1) if d not in order]
    spt = [1] * rank
    for b in layout.reg:
        d = dim_of(b)
        if d is None or b[d] != spt[d]:
            break
        spt[d] *= 2
    tpw = [1 << sum(1 for b in layout.lane if dim_of(b) == d) for d in range(rank)]
    wpc = [1 << sum(1 for b in layout.warp if dim_of(b) == d) for d in range(rank)]
    # zero lane/warp bases are copies; a blocked layout puts them where the shape runs out, so try the
    # candidates that put them on each dimension
    zl = sum(1 for b in layout.lane if dim_of(b) is None)
    zw = sum(1 for b in layout.warp if dim_of(b) is None)
    for dl in ([order[-1]] + list(order) if zl else [None]):
        for dw in ([order[0] if rank == 1 else order[-1]] + list(order) if zw else [None]):
            t = list(tpw)
            w = list(wpc)
            if dl is not None:
                t[dl] <<= zl
            if dw is not None:
                w[dw] <<= zw
            try:
                cand = blocked(layout.shape, spt, t, w, order)
            except ValueError:
                continue
            if cand == layout:
                return spt, t, w, order
    return None
