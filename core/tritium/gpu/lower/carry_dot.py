"""A pipelined loop's last dot left running into the next iteration, finished by the next iteration's first dot.

Attention's forward loop computes S = Q K^T (first dot), the softmax of S, then acc = P V + acc * alpha (last
dot, the result only carried). On targets whose tensor cores run asynchronously (``target.carry_dots``), the
last dot need not be waited for in its own iteration: the next iteration's loop-top wait, barrier and first dot
are issued while it runs, and the first dot's wait retires both (as Triton 3.6 and FlashAttention 3 do).

What has to hold, checked here on the loop body before it is lowered (``plan``):

- the body has no nested loops or branches, at least two dots, the first and the last of a strategy (``ttg.dot``)
  the target can leave running (``target.carries_dot(kind)``), with the same accumulator type;
- the last dot's result is read only by the ``scf.yield``, as iter arg ``j``;
- iter arg ``j`` is read only after the first dot (the carried registers are valid only after its wait).

The backend's dot strategy does the rest: at the first dot it leaves a placeholder for its
wait, at the last dot it skips the wait and records the registers the dot reads (A in registers: P). Here,
at the end of the body, those registers become loop-carried values, and the first dot's wait is written
with the carried accumulator and them as its operands, so that nothing touches them while the dot runs. The
stage the last dot read is refilled only after that wait, behind a barrier, at the end of the body.

Such a loop is tested at its entry and at its end, and its last iteration retires the running dot on its way out
(``exit_edge``), never in the exit block that the path skipping the loop shares (ptxas serialized every wgmma then).

The attention backward's loops (dK/dV, dQ) leave their shared-A dots in flight already (pipeline.py's
``deferred``); their last dot (dK += dS^T Q, dQ += dS K) reads A from registers and so waited for itself. With
``register_a`` it runs on as above (Triton 3.6's backward loops), its A registers carried to the next wait.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional

from ..._mlir import ir
from ..assign import tensor_shape
from .context import Context
from .values import Tensor


@dataclass
class CarriedDot:
    j: int                      # the iter arg the last dot's result is carried in
    first: Any                  # the body's first dot (its wait retires the carried one)
    last: Any                   # the dot left running
    acc: Tensor                 # the phi of iter arg j (registers the running dot writes)
    names: list[str]            # iter arg j's registers in the body, defined by the first dot's wait
    a_slot: Any                 # the loop header line for the phis of the registers the running dot reads
    wait_slot: Any = None       # the first dot's wait, written at the end of the body
    first_regs: list[str] = field(default_factory=list)     # the first dot's accumulators, before its wait
    first_keep: list[str] = field(default_factory=list)     # registers the first dot reads
    first_names: list[str] = field(default_factory=list)    # the first dot's results, after its wait
    ty: str = "float"
    wait_text: Any = None       # the target's wait, as lines to place (set with wait_slot)
    running: bool = False       # the last dot was left running (else it waited for itself)
    a_live: list[str] = field(default_factory=list)         # registers the last dot reads
    a_phis: list[str] = field(default_factory=list)


def _op(o: Any) -> Any:
    return o.operation if hasattr(o, "operation") else o


def _carried_kind(ctx: Context, o: Any, register_a: bool, acc_regs: int) -> bool:
    kind = ir.StringAttr(o.attributes["ttg.dot"]).value if "ttg.dot" in o.attributes else None
    if kind is None:
        return False
    if "max_num_imprecise_acc" in o.attributes and ir.IntegerAttr(o.attributes["max_num_imprecise_acc"]).value > 0:
        return False    # its accumulator is added to in registers, chunk by chunk: the dot waits for itself
    return ctx.target.carries_dot(kind, register_a, acc_regs) if register_a else ctx.target.carries_dot(kind)


def _accumulator_regs(ctx: Context, args: list) -> int:
    """Registers per thread of the loop's iter args that a dot accumulates into (one element per register)."""
    n = 0
    for a in args[1:]:
        if any(u.owner.name == "tt.dot" and u.operand_number == 2 for u in a.uses):
            n += math.prod(tensor_shape(a.type)) // (32 * ctx.num_warps)
    return n


def plan(ctx: Context, ops: list, args: list, register_a: bool = False) -> Optional[tuple[Any, Any, int]]:
    """(first dot, last dot, iter arg index) when the body ``ops`` (its yield last) has the shape above;
    ``register_a``: the loop's carried accumulators are already left in flight (the backward's loops), and
    what is asked is whether the last dot, which waits for itself because it reads A from registers, may run on
    too (``target.carries_dot(kind, register_a=True)``)."""
    if not hasattr(ctx.target, "carries_dot"):
        return None
    if any(o.name in ("scf.for", "scf.while", "scf.if") for o in ops[:-1]):     # (reductions' regions are fine)
        return None
    dots = [o for o in ops if o.name == "tt.dot"]
    held = _accumulator_regs(ctx, args) if register_a else 0
    if len(dots) < 2 or not all(_carried_kind(ctx, d, register_a, held) for d in (dots[0], dots[-1])):
        return None
    first, last = dots[0], dots[-1]
    if str(first.results[0].type).split("x")[-1] != str(last.results[0].type).split("x")[-1]:
        return None
    uses = list(last.results[0].uses)
    if len(uses) != 1 or uses[0].owner.name != "scf.yield":
        return None
    j = uses[0].operand_number
    body = [_op(o) for o in ops]
    at_first = body.index(_op(first))
    for u in args[1 + j].uses:
        owner = _op(u.owner)
        at = next((k for k, o in enumerate(body) if o == owner), None)
        if at is None or at <= at_first or owner.name == "scf.yield":
            return None
    return first, last, j


def start(ctx: Context, found: tuple[Any, Any, int], args: list, a_slot: Any) -> CarriedDot:
    """At the top of the body: iter arg j reads as names the first dot's wait will define."""
    first, last, j = found
    acc = ctx.values[args[1 + j]]
    names = [ctx.fn.tmp("carried") for _ in acc.regs]
    rec = CarriedDot(j, first, last, acc, names, a_slot, ty=acc.ty)
    ctx.values[args[1 + j]] = Tensor(acc.layout, names, acc.ty)
    return rec


def finish_body(ctx: Context, rec: CarriedDot) -> None:
    """At the end of the body: the carried registers' phis get names, and the first dot's wait is written
    (``rec.wait_text(fn, regs, keep, ty)`` -> (lines, result names): the target's form of the dots' wait)."""
    fn = ctx.fn
    if rec.wait_slot is None:
        raise AssertionError("the first dot of a loop planned to carry a dot was not lowered as an async dot")
    if rec.running:
        rec.a_phis = [fn.tmp("carried_a") for _ in rec.a_live]
    lines, out = rec.wait_text(fn, rec.first_regs + rec.acc.regs, rec.first_keep + rec.a_phis, rec.ty)
    lines += [f"{n} = bitcast {rec.ty} {o} to {rec.ty}" for n, o in zip(rec.first_names + rec.names, out)]
    fn.fill(rec.wait_slot, "\n  ".join(lines))


def exit_edge(ctx: Context, rec: CarriedDot, yielded: list, more: str, head: str, exit_: str) -> tuple[str, list]:
    """The back edge of a loop planned to carry a dot, at the end of its body (``yielded``: the values carried
    on; ``more``: another iteration follows). Such a loop is tested at its entry (pipeline.py) and here, and where
    the last dot was left running, the last iteration leaves through a block of its own that retires it.

    Why: with the retiring wait in the loop's exit block, which the path that skips the loop also reaches, that
    path's copies of the initial accumulator (moves of zeros) reached the wait that ends the running dot's
    stage, and ptxas serialized every wgmma of the kernel (C7515, seen with LLVM's loop strength reduction on);
    with a wait on the way out but the test at the loop's top, ptxas saw a path from the running dot out of the
    loop without a wait (C7514). Returns the block the loop leaves from and the values it leaves with."""
    fn = ctx.fn
    if not rec.running:
        fn.cond_br(more, head, exit_)
        return fn.current, yielded
    last = fn.label("pforlast")
    fn.cond_br(more, head, last)
    fn.start_block(last)
    acc = yielded[rec.j]
    leaving = list(yielded)
    leaving[rec.j] = Tensor(acc.layout, retire(ctx, rec, acc.regs, rec.a_live), acc.ty)
    fn.br(exit_)
    return last, leaving


def retire(ctx: Context, rec: CarriedDot, regs: list[str], keep: Optional[list[str]] = None) -> list[str]:
    """After the loop: wait for the dot the last iteration left running; its registers, finished (``keep``: the
    registers it reads, by default their loop phis)."""
    lines, out = rec.wait_text(ctx.fn, regs, rec.a_phis if keep is None else keep, rec.ty)
    for line in lines:
        ctx.fn.emit(line)
    return out


def fill_header(ctx: Context, rec: CarriedDot, pre: str, latch: str) -> None:
    """The phis of the registers the running dot reads (nothing runs on entry: zeros)."""
    ctx.fn.fill(rec.a_slot, "\n  ".join(f"{p} = phi i32 [0, %{pre}], [{a}, %{latch}]"
                                       for p, a in zip(rec.a_phis, rec.a_live)))
