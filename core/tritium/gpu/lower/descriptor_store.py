"""Descriptor stores and reductions through the copy engine only where every box starts inside the tensor.

On sm_90 a bulk tensor store or reduction (``cp.async.bulk.tensor`` / ``cp.reduce.async.bulk.tensor`` from shared
to global memory) whose box has a negative coordinate in any dimension stops the kernel with an illegal
instruction; a box that runs past the end is clipped, and loads accept negative coordinates too (they read the
padding). Measured on the H200 with Triton 3.6's own kernels, which fault the same way (PERF.md, "Issue 14, sixth
session"). A descriptor store at a block start that may be negative therefore checks it when the program runs:
all coordinates at least 0 take the bulk copies (descriptor_bulk.store_block_bulk), otherwise every thread copies
the block out of its shared-memory copy element by element (descriptor_fallback.py; a reduction: the portable
per-element atomics), dropping the elements outside the tensor. The start is the same in every thread of a
program, so both paths may hold barriers. Where the start is provably non-negative (descriptor_range.py:
program ids, loop counters, ``tl.assume``, arithmetic that keeps them so) there is no check. Both checks on
every path, every rank's TMA or not: a 2-D store at a negative start is right where Triton 3.6 faults.

The same run showed one more store hazard: an int8 5-D block of 32-byte rows (the engine's 32-byte swizzle)
stored into a tensor whose rows end 40 bytes in wrote 8 bytes past that end, into the next 16 bytes, while
fp16 rows ending 300 bytes in (128-byte swizzle) and 1-D fp16 blocks ending 154 bytes in were clipped exactly,
and loads were right in all three. Which of the element size or the swizzle is the cause is not known yet, so
for 1-byte elements and 32/64-byte swizzled rows the check also asks the innermost extent to end on a 16-byte
boundary (what every contiguous tensor of rank 2 or more the engine can describe has: its rows are 16-byte
multiples) unless that is proved. The H200 then showed the same overwrite on the default 2-D path, and not
only for 1-byte elements: int8 rows ending 40 bytes in (32/64-byte swizzle), fp16 rows ending 72 bytes in and
fp32 rows ending 152 bytes in (128-byte swizzle), launcher-encoded and kernel-made maps alike
(tests/gpu/test_tma_store_row_end.py). So every store asks it: a row end not proved on a 16-byte boundary is
checked when the program runs.
"""
from __future__ import annotations

from typing import Any, Callable

from ..._mlir import ir
from ...llvmir.types import BYTES
from .context import Context
from .descriptor_bulk import store_block_bulk
from .descriptor_range import provably_nonnegative
from .descriptor_store_deferred import deferred_store_frame, store_block_deferred
from .operands import split_operands
from .values import owner_op

def nonnegative_start(ctx: Context, idx: list, indices: list) -> str:
    """An i1 (or "true"): every coordinate of the block at ``idx`` (Scalars, outermost first; ``indices`` the IR
    values) is at least 0. The block's other boxes start later than its first, so its start decides."""
    fn = ctx.fn
    ok = "true"
    for s, v in zip(idx, indices):
        if provably_nonnegative(v):
            continue
        ge = fn.inst(f"icmp sge {s.ty} {s.value}, 0")
        ok = ge if ok == "true" else fn.inst(f"and i1 {ok}, {ge}")
    return ok


def rows_end_aligned(ctx: Context, c: Any, desc_v: Any) -> str:
    """An i1 (or "true"): the innermost extent of ``c`` (made by the op defining ``desc_v``) is a multiple of 16
    bytes, asked of every store (module doc: rows ending off a 16-byte boundary were overwritten past their end
    at every element size and swizzle the H200 ran)."""
    eb = BYTES.get(c.elem, 0)
    if eb == 0 or 16 % eb:
        return "true"
    o = owner_op(desc_v) if desc_v is not None else None
    if o is not None and o.name == "tt.make_tensor_descriptor":
        last = split_operands(o, ["base", "shape", "strides"])["shape"][-1]
        if ctx.axis.info(last).div[0] * eb % 16 == 0:
            return "true"
    n = c.shape[-1]
    low = ctx.fn.inst(f"and {n.ty} {n.value}, {16 // eb - 1}")
    return ctx.fn.inst(f"icmp eq {n.ty} {low}, 0")


def store_bulk_or_portable(ctx: Context, c: Any, idx: list, indices: list, value_v: Any,
                           portable: Callable[[], None], kind: str = "", desc_v: Any = None) -> None:
    """``c.store(idx, value)`` (with ``kind``, the descriptor reduction) through the copy engine where the block
    starts inside the tensor and its rows end on a 16-byte boundary, else through ``portable`` (module doc)."""
    fn = ctx.fn
    # both checks on every path (module doc): the other path is a loop over shared memory (a few instructions
    # and registers in examples/08's epilogue; PERF.md, seventh session, measured it on the H200)
    inside = rows_end_aligned(ctx, c, desc_v)
    start = nonnegative_start(ctx, idx, indices)
    inside = start if inside == "true" else inside if start == "true" else fn.inst(f"and i1 {inside}, {start}")
    frame = deferred_store_frame(ctx, c, kind)

    def bulk_store() -> None:
        if frame is not None:
            store_block_deferred(ctx, c, idx, value_v, frame)
        else:
            store_block_bulk(ctx, c, idx, value_v, kind)
    if inside == "true":
        bulk_store()
        return
    if not kind:
        # a plain store's other path copies the block out of shared memory in a loop (descriptor_fallback.py)
        if frame is not None:
            store_block_deferred(ctx, c, idx, value_v, frame, inside)
        else:
            store_block_bulk(ctx, c, idx, value_v, kind, inside)
        return
    bulk, other, join = fn.label("bulkok"), fn.label("bulkneg"), fn.label("bulkj")
    fn.cond_br(inside, bulk, other)
    # the scratch buffer's "read since the last barrier" state is tracked along the emitted code: each path
    # starts from the state before the branch, and after the join it is dirty if either path left it so
    dirty = ctx.scratch_dirty
    fn.start_block(bulk)
    ctx.push_scope()
    bulk_store()
    ctx.pop_scope()
    fn.br(join)
    after_bulk = ctx.scratch_dirty
    ctx.scratch_dirty = dirty
    fn.start_block(other)
    ctx.push_scope()
    portable()
    ctx.pop_scope()
    fn.br(join)
    fn.start_block(join)
    ctx.scratch_dirty = ctx.scratch_dirty or after_bulk
