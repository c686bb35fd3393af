"""Tiles in shared memory (:class:`~.shared.SharedTile`) written from and read into registers, vectorized along
the tile's contiguous dimension; reading asks the target first (matrix loads such as ``ldmatrix``)."""
from __future__ import annotations

from .. import layout as L
from ..target import guarded, pack, unpack
from .context import Context
from .convert import _aligned_vec, distinct_groups, from_storage, to_storage
from .shared import SharedTile, SmemLayout
from .values import Tensor


def tile_vec(ctx: Context, lay: L.Layout, smem: SmemLayout) -> int:
    return _aligned_vec(lay, smem.fast, min(lay.reg_run(smem.fast), smem.chunk))


def tile_ptr(ctx: Context, tile: SharedTile, lay: L.Layout, r: int) -> str:
    coords = [ctx.coord(lay, r, d) for d in range(lay.rank)]
    off = tile.smem.offset(ctx, coords)
    return ctx.smem_ptr(tile.base, ctx.imul(off, tile.smem.eb))


def write_tile(ctx: Context, t: Tensor, tile: SharedTile) -> None:
    """Store every unique element of ``t`` (by the thread holding its first copy)."""
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
