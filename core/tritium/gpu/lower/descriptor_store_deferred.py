"""Descriptor stores in loops whose bulk copies read shared memory while the loop goes on.

A bulk tensor store copies its block from shared memory; the issuing thread may go on once the copy has *read*
that memory (``cp.async.bulk.wait_group.read``). examples/08's persistent matmul stores one tile per iteration
of its tile loop: staged through the short-lived scratch buffer (whose bytes the next tile's pipeline stages
reuse), each store waited for its read before the next tile's first loads could be issued. Here, as in Triton
3.6's persistent kernels, a store inside a loop gets a buffer of its own, live through the loop (its bytes are
no other buffer's), so the wait moves to where that buffer is written again, the next iteration's store, and
once after the loop (the buffer's bytes may then be reused, and a program must not end with a copy still
reading its shared memory). Only the thread that issued the copies has them to wait for (the others' waits return
at once); the barrier that follows its wait (the one before the block is written, or the next writer's after
the loop, through ``scratch_dirty``) holds the other threads back until then.

Taken where the target says so (``bulk_store_deferred``) and the loop's buffers, this one included, fit the
target's shared memory even if none of them shared bytes (a bound: the allocator may do better), and the kernel
is lowered again without it where its shared memory still does not fit (``roomy``, lower_module); else the
scratch path of :func:`~.descriptor_bulk.store_block_bulk`.
"""
from __future__ import annotations

from typing import Any, Optional

from ..target import guarded
from .context import Context
from .descriptor_bulk import box_coords
from .descriptor_fallback import unless_inside
from .loops import LoopFrame
from .shared import SharedTile
from .tiles import write_tile


def deferred_store_frame(ctx: Context, c: Any, kind: str) -> Optional[LoopFrame]:
    """The loop whose buffer the store of ``c`` may stage its block in (the innermost loop around it), or None
    where the store waits for its reads at once (module doc)."""
    m = getattr(c, "tmap", None)
    if kind or m is None or not ctx.loops or not getattr(ctx.target, "bulk_store_deferred", False) \
            or not getattr(ctx, "roomy", True):
        return None
    frame = ctx.loops[-1]
    live = sum(b.size + b.align for b in ctx.smem.buffers if b.end is None or b.end > frame.start)
    if live + m.nbytes + 1024 > ctx.target.max_shared_bytes:
        return None
    ctx.roomy_used = True
    return frame


def store_block_deferred(ctx: Context, c: Any, idx: list, value_v: Any, frame: LoopFrame,
                         inside: str = "true") -> None:
    """``c.store(idx, value)`` through a buffer of the loop ``frame`` and bulk copies whose read of it is waited
    for before its next write (module doc). Where the i1 ``inside`` is false, the block goes out of the buffer
    element by element instead (descriptor_fallback.py: a start that may be negative, rows that may end off 16
    bytes)."""
    m = c.tmap
    fn = ctx.fn
    val = ctx.tensor(value_v)
    leader = fn.inst(f"icmp eq i32 {ctx.target.thread_id(fn)}, 0")
    if "deferred_store_wait" not in frame.memo:
        frame.memo["deferred_store_wait"] = True

        def after_loop() -> None:
            ctx.target.bulk_store_drain(fn)
            ctx.scratch_dirty = True        # the next writer's barrier follows the wait
        frame.on_exit.append(after_loop)
    yes, join = fn.label("bulkst"), fn.label("stj")
    fn.cond_br(m.ok, yes, join)         # an empty tensor: nothing to store
    fn.start_block(yes)
    ctx.push_scope()
    base = ctx.loop_buffer(frame, m.nbytes, 1024)
    # the previous iteration's copies out of this buffer have read it (thread 0 waits, the barrier tells the
    # others); the barrier also orders this write after every earlier reader of shared memory. Every thread
    # waits (at once where it issued nothing), as in Triton: a branch around the wait would keep LLVM from
    # sinking the tile's conversion to the stores (256 cvt.rn.f16.f32 instead of 128 cvt.rn.f16x2.f32)
    ctx.target.bulk_store_drain(fn)
    ctx.target.barrier(fn)
    ctx.scratch_dirty = False
    write_tile(ctx, val, SharedTile(base, m.smem, c.elem), matrix=True)
    ctx.target.bulk_store_fence(fn)
    ctx.target.barrier(fn)
    unless_inside(ctx, c, m, idx, base, inside, join)
    boxes = box_coords(ctx, m, idx)

    def emit() -> None:
        for coords, off in boxes:
            ctx.target.bulk_tensor_store(fn, m.addr, coords, ctx.smem_ptr(base, str(off)) if off else base)
        ctx.target.bulk_store_commit(fn)
    guarded(fn, leader, emit)
    ctx.pop_scope()
    fn.br(join)
    fn.start_block(join)
