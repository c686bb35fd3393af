"""The next tile's first stages, issued before this tile's epilogue (a persistent kernel's tile loop).

examples/08 walks its tiles in an outer ``for`` loop; each tile runs a software-pipelined K loop
(pipeline.py), then converts and stores its accumulator. Pipelined on its own, the K loop fills its first
S - 1 stages when it starts, so every tile waits a full load latency before its first dot, after the
previous tile's epilogue. Triton 3.6 fuses the two loops (``flatten=True``), which keeps the loads of the next
tile in flight during the epilogue; a fused loop tried in tritium measured slower (PERF.md, fourth session:
the tile coordinates were evaluated ahead in every K step). Here the loops stay as they are and only the
prologue moves:

- the stages and their barriers live through the outer loop (their bytes are no other buffer's, so the
  epilogue's buffers cannot take them while the next tile's copies land);
- before the outer loop: the barriers' init and the first tile's S - 1 stages (the copies predicated off where
  the program has no tile);
- the K loop itself runs as before, without a prologue;
- after it (every copy waited for, every dot retired, a barrier): the S - 1 stages of the next tile, evaluated
  at the outer induction variable plus its step (predicated off past the last tile). Mode 1: on barriers
  invalidated and initialized again (their phases restart: each K loop starts at stage 0, phase 0). Mode 2:
  into the stages the K loop would have filled next, on barriers whose phases go on; the next K loop starts
  at the stage and phase this one ended with (two i32 allocas, registers once LLVM promotes them), as if the
  K loops were one loop;
- after the outer loop: the barriers invalidated.

Taken where the target asks for it (``prefetch_next_tile``), when the K loop's loads are all bulk tensor copies
without carried addresses, sit directly in the body of an outer ``for`` loop, its bounds do not change with the
outer loop, and the outer loop's values the copies' coordinates read are pure scalar arithmetic on its
induction variable and on values from before it. Everything else keeps pipeline.py's prologue.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional

from ..._mlir import ir
from .context import Context
from .loops import LoopFrame, defined_inside
from .pipeline_planner import _SLICE_OPS
from .reduce import _Overlay
from .scalar import is_scalar_op
from .values import Scalar, owner_op


@dataclass
class Prefetch:
    frame: LoopFrame            # the outer loop's
    ops: list[Any]              # its body's ops the copies' operands need, in order
    depth: int                  # memo scopes outside the outer loop's body
    carried: Optional[tuple[str, str]] = None   # allocas of the stage read next and its barrier's phase


def _outer_needs(op: Any, plan: Any) -> list[Any]:
    """Values defined outside the K loop ``op`` that its copies' operands read."""
    needs = []
    for o in plan.slice_ops:
        needs += [x for x in o.operands if not defined_inside(x, op)]
    for _, parts in plan.loads:
        needs += [x for group in parts.values() for x in group if not defined_inside(x, op)]
    return needs


def prefetch_plan(ctx: Context, op: Any, plan: Any, maps: list) -> Optional[Prefetch]:
    mode = getattr(ctx.target, "prefetch_next_tile", 0)
    if not mode or not getattr(ctx, "roomy", True):
        return None
    if plan.args or not plan.loads or any(m is None for m in maps) or not ctx.loops:
        return None
    frame = ctx.loops[-1]
    outer = frame.op.operation if hasattr(frame.op, "operation") else frame.op
    parent = op.operation.parent
    parent = parent.operation if parent is not None and hasattr(parent, "operation") else parent
    if outer.name != "scf.for" or parent is None or parent != outer or frame.pre is None \
            or frame.memo.get("prefetched"):
        return None
    if any(defined_inside(v, outer) and getattr(owner_op(v), "name", "") != "arith.constant"
           for v in list(op.operands)[:3]):
        return None
    body = outer.regions[0].blocks[0]
    iv = body.arguments[0]
    chosen: dict[Any, Any] = {}

    def visit(v: Any) -> bool:
        if not defined_inside(v, outer):
            return True
        if isinstance(v, ir.BlockArgument):
            return v == iv
        o = owner_op(v)
        if o is None or len(o.results) != 1:
            return False
        up = o.parent.operation if hasattr(o.parent, "operation") else o.parent
        if up != outer:
            return False
        if o.results[0] in chosen:
            return True
        if not (o.name in _SLICE_OPS or is_scalar_op(o.name)) or "tensor<" in str(o.results[0].type):
            return False
        if not all(visit(x) for x in o.operands):
            return False
        chosen[o.results[0]] = o
        return True

    if not all(visit(v) for v in _outer_needs(op, plan)):
        return None
    order = {o.results[0]: k for k, o in enumerate(body.operations) if len(o.results) == 1}
    ops = sorted(chosen.values(), key=lambda o: order[o.results[0]])
    ctx.roomy_used = True
    carried = None
    if mode == 2:
        carried = (ctx.fn.alloca("i32", 1, 4, "rdstage"), ctx.fn.alloca("i32", 1, 4, "rdphase"))
    return Prefetch(frame, ops, len(ctx.memo) - 1, carried)


@contextmanager
def at_tile(ctx: Context, pf: Prefetch, tile: str) -> Iterator[None]:
    """The outer loop's values the copies read, evaluated for the outer iteration ``tile`` (an i32/i64 value of
    the induction variable's type) while the block runs."""
    outer = pf.frame.op.operation if hasattr(pf.frame.op, "operation") else pf.frame.op
    iv = outer.regions[0].blocks[0].arguments[0]
    saved_values, saved_memo = ctx.values, ctx.memo
    ctx.values = _Overlay(saved_values)
    ctx.memo = saved_memo[:pf.depth] + [{}]
    try:
        ctx.values[iv] = Scalar(tile, ctx.scalar_of(outer.operands[0]).ty)
        for o in pf.ops:
            ctx.lower_op(o)
        yield
    finally:
        ctx.values, ctx.memo = saved_values, saved_memo


def outer_bounds(ctx: Context, pf: Prefetch) -> tuple[Scalar, Scalar, Scalar]:
    outer = pf.frame.op.operation if hasattr(pf.frame.op, "operation") else pf.frame.op
    lb, ub, step = (ctx.scalar_of(v) for v in list(outer.operands)[:3])
    return lb, ub, step


def outer_iv(ctx: Context, pf: Prefetch) -> str:
    outer = pf.frame.op.operation if hasattr(pf.frame.op, "operation") else pf.frame.op
    return ctx.values[outer.regions[0].blocks[0].arguments[0]].value


def own_buffer(ctx: Context, pf: Prefetch, key: int) -> None:
    """Buffer ``key`` (opened during the K loop's lowering) lives through the outer loop instead."""
    ctx.smem.buffers[key].start = pf.frame.start
    pf.frame.buffers.append(key)


def issue_stages(ctx: Context, op: Any, plan: Any, bases: list, bulk: Any, lb: Scalar, ub: Scalar, step: Scalar,
                 depth: int, tile_ok: str, first: str = "0", phase: Optional[str] = None) -> None:
    """The copies of the K loop's iterations 0 .. S - 2 into stages ``first`` .. ``first`` + S - 2 (modulo S;
    where ``tile_ok`` holds). ``phase``: the full barrier's parity stage ``first`` is read at next, where the
    stages have empty barriers whose phases carry on (pipeline_empty.py; else the barriers are fresh)."""
    from .pipeline_copies import eval_slice, issue_copies
    fn = ctx.fn
    ity = lb.ty
    S = bulk.stages
    state: dict = {}
    for s in range(S - 1):
        iv_s = lb.value if s == 0 else fn.inst(f"add {ity} {lb.value}, {fn.inst(f'mul {ity} {step.value}, {s}')}")
        valid = ctx.and_pred(fn.inst(f"icmp slt {ity} {iv_s}, {ub.value}"), tile_ok)
        ops_s, state = eval_slice(ctx, op, plan, iv_s, state, depth)
        stage = str(s)
        if first != "0":
            k = fn.inst(f"add i32 {first}, {s}") if s else first
            wraps = fn.inst(f"icmp uge i32 {k}, {S}") if s else "false"
            stage = fn.inst(f"select i1 {wraps}, i32 {fn.inst(f'sub i32 {k}, {S}')}, i32 {k}") if s else k
            if phase is not None and bulk.empties:
                from .pipeline_empty import write_parity
                bulk.empty_parity = write_parity(ctx, wraps, phase)
        issue_copies(ctx, plan, ops_s, bases, stage, valid, bulk)
        bulk.empty_parity = None


def entry_state(ctx: Context, pf: Optional[Prefetch], stages: int) -> tuple[str, str, str]:
    """The K loop's first (stage read, stage written, phase of the read stage's barrier): 0, S - 1, 0 unless
    they carry on from the previous tile's K loop (``carried``), whose barriers then kept their phases."""
    if pf is None or pf.carried is None:
        return "0", str(stages - 1), "0"
    fn = ctx.fn
    rd = fn.inst(f"load i32, ptr {pf.carried[0]}, align 4")
    ph = fn.inst(f"load i32, ptr {pf.carried[1]}, align 4")
    k = fn.inst(f"add i32 {rd}, {stages - 1}")
    wr = fn.inst(f"select i1 {fn.inst(f'icmp uge i32 {k}, {stages}')}, i32 {fn.inst(f'sub i32 {k}, {stages}')}, "
                 f"i32 {k}")
    return rd, wr, ph


def first_tile(ctx: Context, pf: Prefetch, op: Any, plan: Any, maps: list, bases: list, stages: int,
               bounds: tuple, depth: int, fence_zeros: bool = False, empties: bool = False,
               split_producer: Optional[Callable[..., None]] = None) -> Any:
    """Before the outer loop: the stages' barriers (BulkStages, living through the outer loop) and the first
    tile's copies; with ``split_producer`` (pipeline_producer.split bound to its warp count), the producer warps'
    split from the consumers, who then issue no copies. Returns the BulkStages."""
    from .descriptor_bulk import BulkStages
    fn = ctx.fn
    pf.frame.memo["prefetched"] = True

    def emit() -> Any:
        # the stages' bytes may have been an earlier buffer's: its readers are done first
        ctx.target.barrier(fn)
        bulk = BulkStages(ctx, maps, stages, empties)
        bulk.fence_zeros = fence_zeros
        own_buffer(ctx, pf, bulk.key)
        bulk.init(ctx)
        if fence_zeros:
            # no barrier at the K loop's top: the init is ordered before every thread's first wait here
            ctx.target.barrier(fn)
        if split_producer is not None:
            split_producer(ctx, pf, op, plan, bases, bulk, bounds, depth)
        if pf.carried is not None:
            for slot in pf.carried:
                fn.emit(f"store i32 0, ptr {slot}, align 4")
        olb, oub, _ = outer_bounds(ctx, pf)
        any_tile = fn.inst(f"icmp slt {olb.ty} {olb.value}, {oub.value}")
        with at_tile(ctx, pf, olb.value):
            issue_stages(ctx, op, plan, bases, bulk, *bounds, depth, any_tile)
        return bulk
    bulk = ctx.hoist(pf.frame, emit)
    pf.frame.on_exit.append(lambda: bulk.inval(ctx))
    return bulk


def next_tile(ctx: Context, pf: Prefetch, op: Any, plan: Any, bases: list, bulk: Any, bounds: tuple,
              depth: int, rd: str, phase: str) -> None:
    """After the K loop (its copies waited for, its dots retired, a barrier; ``rd``/``phase``: its stage read
    next and that barrier's phase): the next tile's copies issued, into stages 0 .. S - 2 on restarted barriers,
    or (``carried``) into the stages the K loop would have filled next, on barriers whose phases go on."""
    fn = ctx.fn
    first = "0"
    if pf.carried is None:
        bulk.inval(ctx)
        bulk.init(ctx)
        if getattr(bulk, "fence_zeros", False):
            # no barrier at the K loop's top: the new init before every thread's next wait
            ctx.target.barrier(fn)
    else:
        fn.emit(f"store i32 {rd}, ptr {pf.carried[0]}, align 4")
        fn.emit(f"store i32 {phase}, ptr {pf.carried[1]}, align 4")
        first = rd
    _, oub, ostep = outer_bounds(ctx, pf)
    nxt = fn.inst(f"add {oub.ty} {outer_iv(ctx, pf)}, {ostep.value}")
    more = fn.inst(f"icmp slt {oub.ty} {nxt}, {oub.value}")
    with at_tile(ctx, pf, nxt):
        issue_stages(ctx, op, plan, bases, bulk, *bounds, depth, more, first, phase if pf.carried else None)
