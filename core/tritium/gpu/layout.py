"""Distributed layouts: which thread of a program holds which element of a tile.

A layout is *linear* (as in Triton's linear layouts): the coordinates of the element that register ``r``
of lane ``l`` of warp ``w`` holds are the XOR of the basis vectors of the set bits of ``r``, ``l`` and
``w``. Tile dimensions are powers of two, so every layout Triton uses (blocked, slice, the tensor-core
fragment layouts) is linear, and so are the shape operations: a broadcast zeroes bases, ``trans`` permutes
their components, ``reshape`` re-reads them through the row-major index, ``join``/``cat`` add a register
basis. A zero basis means duplication: the threads (or registers) that differ in that bit hold the same
element.

The text form (used by the ``ttgir`` stage, and parsed back when that stage is overridden) is
``blocked{spt=[1,4],tpw=[4,8],wpc=[4,1],order=[1,0]}`` when the layout is a blocked layout of its shape,
else ``linear{reg=[[0,1]],lane=[...],warp=[...]}``.

This module holds the shape operations (one layout derived from another, and which registers a conversion
can keep); the type, its text form and the blocked constructors are ``linear_layout.py``'s, re-exported here.
"""
from __future__ import annotations

from typing import Optional, Sequence

# the layout type and its constructors, at the path the assignment, the lowering and the backends use
from .linear_layout import Layout, Vec, as_blocked, blocked, default_blocked, parse  # noqa: F401


# -- algebra -----------------------------------------------------------------------------------------
def _map(layout: Layout, shape: Sequence[int], f, drop_zero_regs: bool = False, keep_reg=None) -> Layout:
    reg = [f(b) for b in layout.reg]
    if keep_reg is not None:
        reg = [b for b, k in zip(reg, keep_reg) if k]
    return Layout(shape, reg, [f(b) for b in layout.lane], [f(b) for b in layout.warp])


def restrict(layout: Layout, shape: Sequence[int]) -> Layout:
    """The layout of a size-1-broadcast source: components of dims where ``shape`` is 1 are zeroed (the
    registers and threads that held them now hold copies)."""
    shape = tuple(shape)
    for a, b in zip(shape, layout.shape):
        if a not in (1, b):
            raise ValueError(f"cannot restrict a layout of shape {layout.shape} to {shape}")
    keep = [s != 1 for s in shape]
    return _map(layout, shape, lambda b: tuple(x if k else 0 for x, k in zip(b, keep)))


def expand_dims(layout: Layout, axis: int) -> Layout:
    shape = layout.shape[:axis] + (1, ) + layout.shape[axis:]
    return _map(layout, shape, lambda b: b[:axis] + (0, ) + b[axis:])


def squeeze(layout: Layout, axis: int) -> Layout:
    """Remove a size-1 dimension (its components must be zero)."""
    if layout.shape[axis] != 1:
        raise ValueError(f"dimension {axis} of {layout.shape} is not of size 1")
    shape = layout.shape[:axis] + layout.shape[axis + 1:]
    return _map(layout, shape, lambda b: b[:axis] + b[axis + 1:])


def slice_layout(layout: Layout, axis: int) -> Layout:
    """The layout of a reduction's result along ``axis``: registers whose basis runs along ``axis`` are
    combined away; lanes and warps that did become copies."""
    shape = layout.shape[:axis] + layout.shape[axis + 1:]
    keep = [b[axis] == 0 for b in layout.reg]
    return _map(layout, shape, lambda b: b[:axis] + b[axis + 1:], keep_reg=keep)


def permute(layout: Layout, order: Sequence[int]) -> Layout:
    """Result dim i is source dim order[i] (``tl.trans``/``tl.permute``)."""
    shape = tuple(layout.shape[o] for o in order)
    return _map(layout, shape, lambda b: tuple(b[o] for o in order))


def reshape(layout: Layout, shape: Sequence[int]) -> Layout:
    """The same registers seen through the row-major index of another shape."""
    old = layout.shape
    new = tuple(shape)

    def flat(b: Vec) -> int:
        f = 0
        for x, s in zip(b, old):
            f = f * s + x
        return f

    def unflat(f: int) -> Vec:
        out = []
        for s in reversed(new):
            out.append(f % s)
            f //= s
        return tuple(reversed(out))

    if not new:
        new = (1, )
    return _map(layout, new, lambda b: unflat(flat(b)))


def join(layout: Layout) -> Layout:
    """``tl.join``: a new minor dimension of size 2, held in a new highest register bit."""
    shape = layout.shape + (2, )
    out = _map(layout, shape, lambda b: b + (0, ))
    return Layout(shape, out.reg + ((0, ) * layout.rank + (1, ), ), out.lane, out.warp)


def cat(layout: Layout) -> Layout:
    """``tl.cat`` of two tiles of this layout: the second tile's registers follow the first's, offset by the
    size of dimension 0."""
    shape = (2 * layout.shape[0], ) + layout.shape[1:]
    top = (layout.shape[0], ) + (0, ) * (layout.rank - 1)
    return Layout(shape, layout.reg + (top, ), layout.lane, layout.warp)


def split_bit(layout: Layout) -> Optional[int]:
    """The register bit that selects the two halves of the last (size-2) dimension, if there is one."""
    unit = (0, ) * (layout.rank - 1) + (1, )
    for i, b in enumerate(layout.reg):
        if b == unit:
            return i
    return None


def split(layout: Layout) -> tuple[Layout, int]:
    bit = split_bit(layout)
    if bit is None:
        raise ValueError("the last dimension is not held in registers")
    shape = layout.shape[:-1]
    keep = [i != bit for i in range(len(layout.reg))]
    return _map(layout, shape, lambda b: b[:-1], keep_reg=keep), bit


def reg_map(src: Layout, dst: Layout) -> Optional[list[int]]:
    """For each register of ``dst``, the register of ``src`` (same shape) in the same thread holding the
    same element, or None when the conversion must move data between threads."""
    if src.shape != dst.shape or src.lane != dst.lane or src.warp != dst.warp:
        return None
    where: dict[Vec, int] = {}
    for r in range(src.num_regs):
        where.setdefault(src.reg_coords(r), r)
    out = []
    for r in range(dst.num_regs):
        s = where.get(dst.reg_coords(r))
        if s is None:
            return None
        out.append(s)
    return out


def scatter_bits(value: int, bits: list[int]) -> int:
    """``value``'s bit i moved to bit ``bits[i]`` (a coordinate made of register, lane or warp index bits)."""
    out = 0
    for i, b in enumerate(bits):
        if value >> i & 1:
            out |= 1 << b
    return out


def bit_ranks(n: int, chosen: list[int]) -> list[int]:
    """For each of n bits, its rank among ``chosen`` (0 for the others)."""
    return [chosen.index(i) if i in chosen else 0 for i in range(n)]
