"""Two warpgroups of a pipelined loop taking turns at its dots (``target.warpgroup_turns``), as FA3's ping-pong.

On barriers per stage (pipeline_decoupled.py) the two warpgroups of a 128 x 128 attention forward may drift up to
an iteration apart, but nothing makes them: both may still run their softmax at the same time while the tensor
core waits. Here a warpgroup's dots run in blocks, the last dot of iteration i - 1 (P @ V) with the first of
iteration i (Q K^T), and the blocks alternate between the warpgroups: warpgroup w waits on barrier w before its
block (before P @ V) and, once its block is done (after Q K^T's wait), lets the other go (arrives on barrier
1 - w). So while one runs its softmax, the other's P @ V and Q K^T run.

Rounds: before a loop that runs at all, warpgroup 1 arrives on barrier 0 (warpgroup 0 goes first); in the first
iteration each waits for its turn before Q K^T (the first block: Q K^T of iteration 0 alone); after the loop
warpgroup 0 arrives on barrier 1 (the last block: P @ V of the last iteration alone), before any CTA barrier. Each
barrier then has as many arrivals as waits, and no warpgroup waits for its turn outside the loop, where the code
hoisted before it has CTA barriers of its own (examples/07's Q written to shared memory). Not with the loop top's
CTA barrier: a warpgroup waiting for its turn inside the iteration and the other at the loop top would deadlock;
nor where the dots' own lowering has one (``target.warpgroup_turns`` says for which dot kinds it has none: the
emulator's dots convert operands through shared memory, so it never takes turns; tests/gpu runs it on the GPU).
"""
from __future__ import annotations

from typing import Any, Optional

from ..target import guarded
from .context import Context
from .pipeline_planner import _dot_kind


class Turns:
    def __init__(self, ctx: Context, first: Any, last: Any) -> None:
        self.first, self.last = first, last
        fn = ctx.fn
        self.wg = fn.inst(f"lshr i32 {ctx.warp}, 2")        # 0 or 1
        self.other = fn.inst(f"xor i32 {self.wg}, 1")
        self.threads = ctx.num_warps * ctx.warp_size

    def _bar(self, ctx: Context, which: str, wait: bool) -> None:
        ctx.target.turn_barrier(ctx.fn, which, self.threads, wait)

    def bounds(self, ity: str, iv: str, lb: str, ub: str) -> None:
        """The loop's induction variable (this iteration's), type, start and end."""
        self.ity, self.iv, self.lb, self.ub = ity, iv, lb, ub

    def _runs_and(self, ctx: Context, wg: int) -> str:
        fn = ctx.fn
        runs = fn.inst(f"icmp slt {self.ity} {self.lb}, {self.ub}")
        return fn.inst(f"and i1 {runs}, {fn.inst(f'icmp eq i32 {self.wg}, {wg}')}")

    def before_loop(self, ctx: Context) -> None:
        guarded(ctx.fn, self._runs_and(ctx, 1), lambda: self._bar(ctx, "0", False))

    def before(self, ctx: Context, o: Any) -> None:
        if o == self.first:
            first = ctx.fn.inst(f"icmp eq {self.ity} {self.iv}, {self.lb}")
            guarded(ctx.fn, first, lambda: self._bar(ctx, self.wg, True))
        if o == self.last:
            self._bar(ctx, self.wg, True)

    def after(self, ctx: Context, o: Any) -> None:
        if o == self.first:
            self._bar(ctx, self.other, False)

    def after_loop(self, ctx: Context) -> None:
        guarded(ctx.fn, self._runs_and(ctx, 0), lambda: self._bar(ctx, "1", False))


def turns(ctx: Context, ops: list) -> Optional[Turns]:
    """Where the loop (its body ``ops``, on stage barriers) takes turns: two warpgroups, two or more dots."""
    if ctx.num_warps != 8:
        return None
    dots = [o for o in ops if o.name == "tt.dot"]
    if len(dots) < 2 or not ctx.target.warpgroup_turns([_dot_kind(d) for d in dots]):
        return None
    return Turns(ctx, dots[0], dots[-1])
