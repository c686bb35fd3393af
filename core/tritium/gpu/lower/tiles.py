"""Tiles in shared memory (:class:`~.shared.SharedTile`) written from and read into registers, vectorized along
the tile's contiguous dimension; reading asks the target first (matrix loads such as ``ldmatrix``), and so may
writing (matrix stores such as ``stmatrix``)."""
from __future__ import annotations

from typing import Optional

from .. import layout as L
from ..target import guarded, pack, unpack
from .context import Context
from .convert import _aligned_vec, distinct_groups, from_storage, to_storage
from .shared import SharedTile, SmemLayout
from .values import Tensor


def tile_vec(ctx: Context, lay: L.Layout, smem: SmemLayout) -> int:
    return _aligned_vec(lay, smem.fast, min(lay.reg_run(smem.fast), smem.chunk))


def tile_ptr(ctx: Context, tile: SharedTile, lay: L.Layout, r: int) -> str:
    eb = tile.smem.eb
    split = split_offset(ctx, tile.smem, lay, r)
    if split is not None:
        # register groups share this thread's offset and differ by constants: a pipelined stage's copies address
        # [base + imm] instead of one loop-invariant register per group added to the stage every iteration (8
        # adds and 8 registers in a 128x128x64 matmul's loop)
        thread_off, c = split
        return ctx.smem_ptr(ctx.smem_ptr(tile.base, ctx.imul(thread_off, eb)), str(c * eb))
    coords = [ctx.coord(lay, r, d) for d in range(lay.rank)]
    off = tile.smem.offset(ctx, coords)
    return ctx.smem_ptr(tile.base, ctx.imul(off, eb))


def _pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def split_offset(ctx: Context, smem: SmemLayout, lay: L.Layout, r: int) -> Optional[tuple[str, int]]:
    """(an i32, a constant) whose sum is the element offset of register ``r``'s element, the i32 shared by every
    register whose constant differs only in bits no thread's part sets; None where that does not hold.

    With every dimension a power of two, the swizzled offset is linear over XOR in the coordinates' bits, and a
    coordinate is the XOR of its thread part and its register part, so offset = offset(thread) ^ offset(reg).
    The register part's bits that some lane or warp bit may also set stay in the XOR; the others are added."""
    if lay.rank != len(smem.shape) or not all(_pow2(s) for s in smem.shape):
        return None
    c = smem.offset(ctx, [str(x) for x in lay.reg_coords(r)])
    touched = 0
    for b in lay.lane + lay.warp:
        t = smem.offset(ctx, [str(x) for x in b])
        if not t.isdigit():
            return None
        touched |= int(t)
    if not c.isdigit():
        return None
    mixed, added = int(c) & touched, int(c) & ~touched
    off = smem.offset(ctx, [ctx.thread_part(lay, d) for d in range(lay.rank)])
    if mixed:
        off = str(int(off) ^ mixed) if off.isdigit() else ctx.fn.inst(f"xor i32 {off}, {mixed}")
    return off, added


def write_tile(ctx: Context, t: Tensor, tile: SharedTile, matrix: bool = False) -> None:
    """Store every unique element of ``t`` (by the thread holding its first copy). With ``matrix``, the target's
    matrix stores where it has them (asked only by the callers measured with them: descriptor stores)."""
    if matrix and ctx.target.write_shared_tile(ctx, t, tile):
        return
    fn = ctx.fn
    lay = t.layout
    vec = tile_vec(ctx, lay, tile.smem)
    unique = set(lay.unique_regs())
    st = tile.ty

    def emit() -> None:
        for g in range(0, lay.num_regs, vec):
            if g not in unique:
                continue
            p = tile_ptr(ctx, tile, lay, g)
            vals = [to_storage(ctx, t.regs[g + i], t.ty) for i in range(vec)]
            vt = st if vec == 1 else f"<{vec} x {st}>"
            fn.emit(f"store {vt} {pack(fn, vals, st)}, {ctx.target.shared_ptr} {p}, align {tile.smem.eb * vec}")

    guarded(fn, ctx.unique_pred(lay), emit)


def read_tile(ctx: Context, tile: SharedTile, lay: L.Layout, ty: str) -> Tensor:
    """Load ``tile`` into registers of layout ``lay`` (the target's matrix loads when it has them)."""
    special = ctx.target.read_shared_tile(ctx, tile, lay, ty)
    if special is not None:
        return special
    fn = ctx.fn
    vec = tile_vec(ctx, lay, tile.smem)
    st = tile.ty
    regs: list[str] = [""] * lay.num_regs
    for g in distinct_groups(lay, vec, regs):
        p = tile_ptr(ctx, tile, lay, g)
        vt = st if vec == 1 else f"<{vec} x {st}>"
        v = fn.inst(f"load {vt}, {ctx.target.shared_ptr} {p}, align {tile.smem.eb * vec}")
        regs[g:g + vec] = [from_storage(ctx, x, ty) for x in unpack(fn, v, st, vec)]
    return Tensor(lay, regs, ty)
