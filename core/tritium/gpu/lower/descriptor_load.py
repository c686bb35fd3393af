"""A tensor-descriptor load outside a software-pipelined loop, copied by the target's copy engine (the
descriptor has a tensor map: descriptor_bulk.py), as Triton 3.6 lowers every descriptor load where the
target has such an engine.

One thread arms a shared-memory barrier with the block's bytes and starts the boxes' copies into a scratch
buffer laid out as :class:`~.shared.SmemLayout` (the engine's swizzle); every thread waits for the barrier,
then reads the block into the load's layout. Out-of-bounds elements arrive as the descriptor's padding (zeros,
or NaN where the map says so). A tensor with an empty dimension has no usable map: the copies are skipped and
every element is the padding.

A descriptor that the kernel also stores or reduces through keeps the portable load: the copy engine reads
global memory through another proxy than the program's own stores, and ordering the two would need a proxy
fence per load.
"""
from __future__ import annotations

from typing import Any

from ...llvmir.types import const
from ..target import guarded
from .context import Context
from .descriptor_bulk import aligned_start, issue_bulk_loads
from .operands import split_operands
from .shared import SharedTile
from .tiles import read_tile
from .values import Tensor

_WRITERS = ("tt.descriptor_store", "tt.descriptor_reduce", "tt.descriptor_scatter")


def takes_bulk_load(ctx: Context, op: Any, desc_v: Any, c: Any) -> bool:
    """``op`` (a ``tt.descriptor_load`` of ``c``) is copied whole by the engine."""
    if c.tmap is None or ctx.value_type(op.results[0]) != c.elem or not ctx.target.bulk_tensor_every_rank:
        return False
    if ctx.loops and not ctx.target.bulk_loads_in_loops:
        return False
    if not aligned_start(ctx, c, split_operands(op, ["desc", "indices"])["indices"]):
        return False
    return not any(u.owner.name in _WRITERS for u in desc_v.uses)


def load_block_bulk(ctx: Context, op: Any, c: Any, idx: list) -> None:
    """``c.load(idx)`` through one bulk copy and a barrier (module doc)."""
    m = c.tmap
    fn = ctx.fn
    res = op.results[0]
    lay = ctx.layout_of(res)
    ty = ctx.value_type(res)
    tile_bytes = (m.nbytes + 7) // 8 * 8
    base = ctx.scratch(tile_bytes + 8, 1024)
    bar = ctx.smem_ptr(base, str(tile_bytes))
    leader = fn.inst(f"icmp eq i32 {ctx.target.thread_id(fn)}, 0")

    def scoped(pred: str, body: Any) -> None:
        # values made inside a guarded block must not be reused after it
        ctx.push_scope()
        guarded(fn, pred, body)
        ctx.pop_scope()

    scoped(leader, lambda: ctx.target.bulk_barrier_init(fn, bar))
    # the barrier is initialized before anyone waits on it, and earlier reads of the scratch bytes (generic
    # proxy) come before the engine's writes (async proxy)
    ctx.target.barrier(fn)

    def issue() -> None:
        ctx.target.bulk_store_fence(fn)
        ctx.target.bulk_expect(fn, bar, m.nbytes)
        issue_bulk_loads(ctx, m, idx, base, bar)
    scoped(ctx.and_pred(leader, m.ok), issue)
    scoped(m.ok, lambda: ctx.target.bulk_wait(fn, bar, "0"))
    t = read_tile(ctx, SharedTile(base, m.smem, c.elem), lay, ty)
    regs = t.regs
    if m.ok != "true":
        pad = const(ty, float("nan")) if c.padding == "nan" else const(ty, 0)
        regs = [fn.inst(f"select i1 {m.ok}, {ty} {r}, {ty} {pad}") for r in regs]
    # every thread is past its wait and its reads: the barrier's bytes may be given back
    ctx.target.barrier(fn)
    scoped(leader, lambda: ctx.target.bulk_barrier_inval(fn, bar))
    ctx.scratch_read_done()
    ctx.values[res] = Tensor(lay, regs, ty)
