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
