"""Tiles kept in shared memory: a swizzled row-major buffer (:class:`SmemLayout`) and the value that refers to
one (:class:`SharedTile`), used for software-pipelined loads and for layout conversions that tensor-core
operand loads (ldmatrix) read.

Swizzle: rows of ``row`` elements are split into 16-byte chunks; chunk ``c`` of row ``r`` is stored at chunk
``c ^ ((r // per_phase) % max_phase)``, so that the 8 rows a matrix load reads in one phase fall in
different banks (Triton's shared encoding with vec = one chunk). Rows wider than 128 bytes are cut into
128-byte panels stored one after the other (all rows of panel 0, then of panel 1...), which is the
canonical swizzled layout tensor-core descriptors describe (8-row, 1024-byte swizzle atoms).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...llvmir.types import BYTES
from .. import layout as L
from ..target import guarded, pack, unpack
from .values import Tensor


@dataclass(frozen=True)
class SmemLayout:
    """A [rows, cols] tile (``cols`` = the contiguous dimension ``fast``) of ``eb``-byte elements."""
    shape: tuple[int, ...]
    fast: int
    eb: int

    @property
    def rows(self) -> int:
        n = 1
        for d, s in enumerate(self.shape):
            if d != self.fast:
                n *= s
        return n

    @property
    def cols(self) -> int:
        return self.shape[self.fast]

    @property
    def panel(self) -> int:
        """Elements per row of one panel (the whole row when it fits in 128 bytes)."""
        return min(self.cols, max(1, 128 // self.eb))

    @property
    def row_bytes(self) -> int:
        return self.panel * self.eb

    @property
    def chunk(self) -> int:
        """Elements per 16-byte chunk (the unit of swizzling and the widest access)."""
        return max(1, min(16 // self.eb, self.cols))

    @property
    def max_phase(self) -> int:
        return max(1, min(8, self.row_bytes // 16))

    @property
    def per_phase(self) -> int:
        return max(1, 128 // max(1, self.row_bytes))

    @property
    def nbytes(self) -> int:
        return self.rows * self.cols * self.eb

    def row_of(self, coords: list[Any], lo: Any) -> str:
        """The row index (all dims but ``fast``, row-major) of the element at ``coords``."""
        acc = "0"
        stride = 1
        for d in range(len(self.shape) - 1, -1, -1):
            if d == self.fast:
                continue
            acc = lo.iadd(acc, lo.imul(coords[d], stride))
            stride *= self.shape[d]
        return acc

    def offset(self, lo: Any, coords: list[str]) -> str:
        """Element offset (i32) of the element at ``coords`` (i32 values or literals)."""
        fn = lo.fn
        row = self.row_of(coords, lo)
        col = coords[self.fast]
        ch = self.chunk
        P = self.panel
        base = "0"
        if P < self.cols:      # which panel, and the column inside it
            pidx = _lit_or(fn, col, lambda c: c // P, lambda c: _shr(fn, c, P))
            base = lo.imul(pidx, self.rows * P)
            col = _lit_or(fn, col, lambda c: c % P, lambda c: fn.inst(f"and i32 {c}, {P - 1}"))
        if self.max_phase == 1:
            return lo.iadd(base, lo.iadd(lo.imul(row, P), col))
        phase = _lit_or(fn, row, lambda r: (r // self.per_phase) % self.max_phase,
                        lambda r: fn.inst(f"and i32 {_shr(fn, r, self.per_phase)}, {self.max_phase - 1}"))
        cchunk = _lit_or(fn, col, lambda c: c // ch, lambda c: _shr(fn, c, ch))
        within = _lit_or(fn, col, lambda c: c % ch, lambda c: fn.inst(f"and i32 {c}, {ch - 1}"))
        if phase.isdigit() and cchunk.isdigit():
            sw = str(int(phase) ^ int(cchunk))
        else:
            sw = fn.inst(f"xor i32 {cchunk}, {phase}")
        return lo.iadd(base, lo.iadd(lo.iadd(lo.imul(row, P), lo.imul(sw, ch)), within))


def _shr(fn: Any, x: str, by: int) -> str:
    n = by.bit_length() - 1
    return x if n == 0 else fn.inst(f"lshr i32 {x}, {n}")


def _lit_or(fn: Any, x: str, lit, dyn) -> str:
    if x.isdigit():
        return str(lit(int(x)))
    return dyn(x)


class SharedTile:
    """A tile in shared memory at ``base`` (a shared pointer), laid out by ``smem``."""
    __slots__ = ("base", "smem", "ty", "shape")

    def __init__(self, base: str, smem: SmemLayout, ty: str) -> None:
        self.base, self.smem, self.ty = base, smem, ty
        self.shape = smem.shape

    def __repr__(self) -> str:
        return f"SharedTile({self.base}, {self.smem})"


def smem_layout_for(lay: L.Layout, st: str) -> SmemLayout:
    """The shared layout for a tile held in ``lay``: rows along the dimension its registers run along."""
    fast = max(range(lay.rank), key=lambda d: (lay.reg_run(d), d))
    return SmemLayout(lay.shape, fast, BYTES[st])


class SharedMixin:
    def tile_vec(self, lay: L.Layout, smem: SmemLayout) -> int:
        from .convert import _aligned_vec
        return _aligned_vec(lay, smem.fast, min(lay.reg_run(smem.fast), smem.chunk))

    def tile_ptr(self, tile: SharedTile, lay: L.Layout, r: int) -> str:
        coords = [self.coord(lay, r, d) for d in range(lay.rank)]
        off = tile.smem.offset(self, coords)
        return self.smem_ptr(tile.base, self.imul(off, tile.smem.eb))

    def write_tile(self, t: Tensor, tile: SharedTile) -> None:
        """Store every unique element of ``t`` (by the thread holding its first copy)."""
        fn = self.fn
        lay = t.layout
        vec = self.tile_vec(lay, tile.smem)
        unique = set(lay.unique_regs())
        st = tile.ty

        def emit() -> None:
            for g in range(0, lay.num_regs, vec):
                if g not in unique:
                    continue
                p = self.tile_ptr(tile, lay, g)
                vals = [self.to_storage(t.regs[g + i], t.ty) for i in range(vec)]
                vt = st if vec == 1 else f"<{vec} x {st}>"
                fn.emit(f"store {vt} {pack(fn, vals, st)}, {self.target.shared_ptr} {p}, align {tile.smem.eb * vec}")

        guarded(fn, self.unique_pred(lay), emit)

    def read_tile(self, tile: SharedTile, lay: L.Layout, ty: str) -> Tensor:
        """Load ``tile`` into registers of layout ``lay`` (the target's matrix loads when it has them)."""
        special = self.target.read_shared_tile(self, tile, lay, ty)
        if special is not None:
            return special
        fn = self.fn
        vec = self.tile_vec(lay, tile.smem)
        st = tile.ty
        regs: list[str] = [""] * lay.num_regs
        first_of: dict[tuple, int] = {}
        for g in range(0, lay.num_regs, vec):
            c = lay.reg_coords(g)
            if c in first_of:
                s = first_of[c]
                regs[g:g + vec] = regs[s:s + vec]
                continue
            first_of[c] = g
            p = self.tile_ptr(tile, lay, g)
            vt = st if vec == 1 else f"<{vec} x {st}>"
            v = fn.inst(f"load {vt}, {self.target.shared_ptr} {p}, align {tile.smem.eb * vec}")
            regs[g:g + vec] = [self.from_storage(x, ty) for x in unpack(fn, v, st, vec)]
        return Tensor(lay, regs, ty)
