"""Per-stage "empty" barriers in a software-pipelined loop of bulk copies (pipeline.py), instead of CTA barriers.

A loop whose stages are all bulk tensor copies and whose dots run on into the next iteration (examples/08's K
loop on sm_90) refills, in iteration i, the stage that iteration i - 1 read. Without this, every warp waits at a
CTA barrier after its dots' wait (``wait_group 1``: iteration i - 1's dots retired) so that the issuing thread
knows every warp is done with that stage, and at another at the top of each iteration: the warpgroups run in
lock step, every K step. CUTLASS's Hopper mainloops (and its non-specialized one, whose producer is thread 0 of
the CTA, as here) free each stage through an mbarrier of its own instead:

- each stage has a second barrier, ``empty[s]``, initialized for one arrival per warp;
- in iteration i, after its dots' wait retired iteration i - 1's reads, lane 0 of every warp arrives on the
  empty barrier of the stage iteration i - 1 read (not in a loop run's first iteration: the stage read before it
  was released after the previous run, below);
- the issuing thread waits on ``empty[s]`` before it re-arms the stage's (full) barrier and issues the copies;
  the other warps go on to the next iteration without waiting for anyone but the copies' landing;
- after the loop (every dot retired), the stage the last iteration read is released the same way, so that
  every read of every stage has exactly one phase of its empty barrier, across the runs of a persistent
  kernel's K loop whose stage and phase carry on (pipeline_prefetch.py, mode 2).

Phases: write n of stage s (n >= 1) waits for the phase completed by read n - 1 of stage s, whose parity is the
parity of the full barrier's phase that read waited for; the first write waits for parity 1, which a barrier
just initialized reports as complete. So a write whose read will wait for full parity p waits for empty parity
p ^ 1. In iteration i the refilled stage is the one iteration i - 1 read: its parity is ``phase`` (that of the
stage read now), flipped where the read stage wrapped to 0.

The loop's top barrier goes too (the stages' full barriers tell the landing, as with
``bulk_loop_top_barrier`` off); zeros written for an empty tensor keep two CTA barriers in their branch (before:
the stage's readers are done; after: the zeros before their reads). Taken where the target asks for it
(``bulk_empty_barriers``), the loads are all bulk copies, the dots are deferred and no dot is carried into the
next iteration (carry_dot.py keeps its own barrier).
"""
from __future__ import annotations

from typing import Any

from ..._mlir import block_ops
from ..target import guarded
from .context import Context


def wanted(ctx: Context, op: Any, plan: Any, maps: list, deferring: bool, asked: bool = False) -> bool:
    """Whether the pipelined loop ``op`` frees its stages through empty barriers (``asked``: a producer warp
    wants them for this loop, pipeline_producer.asked)."""
    if not (deferring and maps and all(m is not None for m in maps)):
        return False
    if not (asked or getattr(ctx.target, "bulk_empty_barriers", False)):
        return False
    from . import carry_dot
    block = op.regions[0].blocks[0]
    return carry_dot.plan(ctx, block_ops(block), list(block.arguments), register_a=bool(plan.deferred)) is None


def _previous_stage(ctx: Context, rd: str, stages: int) -> str:
    fn = ctx.fn
    return fn.inst(f"select i1 {fn.inst(f'icmp eq i32 {rd}, 0')}, i32 {stages - 1}, "
                   f"i32 {fn.inst(f'sub i32 {rd}, 1')}")


def release(ctx: Context, bulk: Any, stage: str) -> None:
    """Lane 0 of every warp arrives on ``stage``'s empty barrier (after the warp's reads of it retired)."""
    guarded(ctx.fn, ctx.fn.inst(f"icmp eq i32 {ctx.lane}, 0"),
            lambda: ctx.target.bulk_release(ctx.fn, bulk.empty_bar(ctx, stage)))


def release_previous(ctx: Context, bulk: Any, iv: str, lb: Any, rd: str, phase: str, stages: int,
                     dots_running: bool) -> None:
    """In iteration ``iv`` (reading stage ``rd`` at full parity ``phase``), after this iteration's dots were
    issued: retire the previous iteration's dots, release the stage it read, and set the parity the refill of
    that stage waits for (``bulk.empty_parity``)."""
    fn = ctx.fn
    if dots_running:
        ctx.target.async_dot_wait(fn, 1, [])
    prev = _previous_stage(ctx, rd, stages)
    not_first = fn.inst(f"icmp ne {lb.ty} {iv}, {lb.value}")
    guarded(fn, not_first, lambda: release(ctx, bulk, prev))
    wrapped = fn.inst(f"icmp eq i32 {rd}, 0")
    # the stage refilled now was read at the previous iteration's parity; its refill waits for that phase
    bulk.empty_parity = fn.inst(f"select i1 {wrapped}, i32 {fn.inst(f'xor i32 {phase}, 1')}, i32 {phase}")


def release_last(ctx: Context, bulk: Any, iv: str, lb: Any, rd: str, stages: int) -> None:
    """After the loop (every dot retired; ``rd`` the stage it would read next): release the stage its last
    iteration read, where it ran at all."""
    fn = ctx.fn
    ran = fn.inst(f"icmp ne {lb.ty} {iv}, {lb.value}")
    prev = _previous_stage(ctx, rd, stages)
    guarded(fn, ran, lambda: release(ctx, bulk, prev))


def write_parity(ctx: Context, stage_wraps: str, phase: str) -> str:
    """The empty parity a write waits for when the stage it fills is read next at full parity ``phase``,
    flipped where ``stage_wraps`` (i1) says that stage comes after the read stage wraps to 0."""
    fn = ctx.fn
    p = fn.inst(f"select i1 {stage_wraps}, i32 {fn.inst(f'xor i32 {phase}, 1')}, i32 {phase}")
    return fn.inst(f"xor i32 {p}, 1")
