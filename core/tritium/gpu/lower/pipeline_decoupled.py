"""A software-pipelined loop without the CTA barrier at the top of each iteration (``target.decoupled_stage_warps``).

The plain pipeline (pipeline.py) starts, at the top of iteration i, the copies of iteration i + S - 1 into the
stage iteration i - 1 read. Every thread must have finished reading it, and every thread's copies of stage i must
have landed, so each iteration begins with ``cp.async.wait_group``, then a CTA barrier. In a 128 x 128 attention
forward at 8 warps (one CTA per SM) the two warpgroups therefore meet every iteration and run their softmax at
the same time, while the tensor core waits.

Here the copies run one iteration ahead (A = 1): iteration i starts those of iteration i + 1 into the stage that
iteration i + 1 - S read (S >= 3: a stage two or more iterations old). Each stage has a barrier with one arrival
per thread per fill: a thread arrives right after starting its copies of a stage, and the arrival counts only
once those copies have landed (``target.stage_arrive``). The top of iteration i waits for stage i's phase:
every thread's copies of it have landed, and every thread has started iteration i - 1, so has finished reading
every stage of iteration i - 2 and earlier (its dots wait for themselves), among them the one this iteration
refills (i + 1 - S <= i - 2). A thread may so run up to one iteration ahead of the slowest, never onto a stage
still read. The price: one iteration of latency for the copies instead of S - 1 (the H200 measures whether the
slack is worth it).

Taken only where the loop's dots wait for themselves (no dot left running into the next iteration, no carried
dot), every load is a cp.async copy (no bulk tensor copies, whose barriers are their own: descriptor_bulk.py) and
no next tile is prefetched (pipeline_prefetch.py).
"""
from __future__ import annotations

from typing import Any, Optional

from ..._mlir import block_ops
from ..target import guarded
from . import carry_dot
from .context import Context


class StageBarriers:
    """One 8-byte barrier per stage, in shared memory of their own for the loop's lifetime."""

    def __init__(self, ctx: Context, stages: int) -> None:
        self.stages = stages
        self.key, self.bars = ctx.shared_buffer(8 * stages, 8)
        self.leader = ctx.fn.inst(f"icmp eq i32 {ctx.tid}, 0")

    def bar(self, ctx: Context, stage: str) -> str:
        return ctx.smem_ptr(self.bars, ctx.imul(stage, 8))

    def init(self, ctx: Context) -> None:
        """Before the prologue's copies (after the barrier that frees the bytes earlier buffers used): one thread
        initializes, a CTA barrier orders it before every arrival."""
        threads = ctx.num_warps * ctx.warp_size

        def all_stages() -> None:
            for s in range(self.stages):
                ctx.target.stage_barrier_init(ctx.fn, ctx.smem_ptr(self.bars, str(8 * s)), threads)
        guarded(ctx.fn, self.leader, all_stages)
        ctx.target.barrier(ctx.fn)

    def arrive(self, ctx: Context, stage: str) -> None:
        ctx.target.stage_arrive(ctx.fn, self.bar(ctx, stage))

    def wait(self, ctx: Context, stage: str, phase: str) -> None:
        ctx.target.stage_wait(ctx.fn, self.bar(ctx, stage), phase)

    def drain(self, ctx: Context, stage: str, phase: str) -> None:
        """After the loop (at the exit, ``stage``/``phase`` name the iteration that did not run): the last
        arrivals (of the copies past the end, predicated off) are waited for, so that none lands on these bytes
        once they are reused (the loop's CTA barrier after the drain orders it before :meth:`inval`)."""
        self.wait(ctx, stage, phase)

    def inval(self, ctx: Context) -> None:
        def all_stages() -> None:
            for s in range(self.stages):
                ctx.target.stage_barrier_inval(ctx.fn, ctx.smem_ptr(self.bars, str(8 * s)))
        guarded(ctx.fn, self.leader, all_stages)


def decoupled(ctx: Context, op: Any, plan: Any, maps: list, pf: Any) -> Optional[StageBarriers]:
    """The loop's stage barriers when it takes this form (allocated, not yet initialized), else None."""
    warps = getattr(ctx.target, "decoupled_stage_warps", 0)
    if not warps or ctx.num_warps < warps or plan.stages < 3 or pf is not None:
        return None
    if plan.deferred or any(m is not None for m in maps) or any("desc" in parts for _, parts in plan.loads):
        return None
    block = op.regions[0].blocks[0]
    if carry_dot.plan(ctx, block_ops(block), list(block.arguments)):
        return None
    return StageBarriers(ctx, plan.stages)
