"""A producer warp for a persistent kernel's K loop of bulk copies (warp specialization, as CUTLASS's Hopper
mainloops and FA3 do; Triton 3.6 does not specialize warps on sm_90).

Taken where the target asks for producer warps (``producer_warps``: every such loop; ``ws_producer_warps``: only
the loops the user wrote as ``tl.range(..., warp_specialize=True)``), on a K loop that the tile prefetch takes
with carried phases (pipeline_prefetch.py, mode 2: its copies' operands depend only on the tile loop's induction
variable and values from before it, its bounds do not change with the tile) and whose stages are freed through
empty barriers (pipeline_empty.py), in a tile loop at the kernel's top level. Then:

- the kernel runs ``producer_warps`` more warps than the program's ``num_warps`` (the consumers: every layout,
  every thread index of the lowering is theirs, unchanged);
- before the tile loop, after the stages' barriers are initialized and a barrier of every thread, the extra
  warps branch off: one thread of them walks the same tiles and K steps as the consumers will (its own loops,
  the copies' coordinates evaluated per tile and per K step as the prefetch evaluates them), and for each step
  waits for the stage's empty barrier (the consumers' release of its previous read), arms its full barrier and
  issues the copies; then the extra warps leave (``ret``);
- the consumers run the kernel as before without issuing any copy (``BulkStages.producer``): their K loop waits
  for each stage's landing, runs the dots and releases the stage; they never wait for the producer's thread
  but through the stages' barriers, so the copies of the next steps and of the next tile go on while the
  consumers run the dots or the epilogue;
- every CTA barrier after the split is the consumers' alone: the target makes them named barriers of
  ``num_warps`` warps (``split_warp_roles``);
- an empty tensor's zero fill stays with the consumers (their issue points, in the not-ok branch; the producer
  issues nothing there).

The stage and phase sequence is the one of the carried-phase prefetch: stage 0, parity 0 at the first tile's
first step, one stage per K step across tiles; a write waits for empty parity ``phase ^ 1`` (pipeline_empty.py).
"""
from __future__ import annotations

from typing import Any

from ...compiler.loops import WARP_SPECIALIZE_ATTR
from ..target import guarded
from .context import Context
from .descriptor_bulk import issue_bulk_loads
from .pipeline_prefetch import Prefetch, at_tile, outer_bounds


def asked(ctx: Context, pf: Any) -> int:
    """The producer warps for a K loop (prefetch plan ``pf``) whose tile loop the user wrote as
    ``tl.range(..., warp_specialize=True)``, where the target gives such loops producer warps
    (``ws_producer_warps``) and the loop is one this module takes; 0 otherwise. The caller then frees the stages
    through empty barriers too, whatever the target's ``bulk_empty_barriers`` says: the hint is the user's
    opt-in, so it decides for this loop alone."""
    n = int(getattr(ctx.target, "ws_producer_warps", 0) or 0)
    if not (n and len(ctx.loops) == 1 and WARP_SPECIALIZE_ATTR in ctx.loops[0].op.operation.attributes):
        return 0
    return n if isinstance(pf, Prefetch) and pf.carried is not None else 0


def wanted(ctx: Context, pf: Any, empties: bool, ws: int = 0) -> int:
    """The producer warps the K loop with the prefetch plan ``pf`` runs with (0: none); ``ws``: what
    :func:`asked` gave for it."""
    n = ws or int(getattr(ctx.target, "producer_warps", 0) or 0)
    if not (n and empties and isinstance(pf, Prefetch) and pf.carried is not None and len(ctx.loops) == 1):
        return 0
    return n


def _issue(ctx: Context, bulk: Any, operands: list, bases: list, stage: str, parity: str) -> None:
    fn = ctx.fn

    def emit() -> None:
        # the consumers released the stage's previous read (the first write finds parity 1 complete)
        ctx.target.bulk_wait(fn, bulk.empty_bar(ctx, stage), fn.inst(f"xor i32 {parity}, 1"))
        bar = bulk.bar(ctx, stage)
        ctx.target.bulk_expect(fn, bar, bulk.nbytes)
        for m, (_, idx), (proto, stage_bytes) in zip(bulk.maps, operands, bases):
            if m is not None:
                issue_bulk_loads(ctx, m, idx, ctx.smem_ptr(proto.base, ctx.imul(stage, stage_bytes)), bar)
    guarded(fn, bulk.ok, emit)


def _loops(ctx: Context, pf: Prefetch, op: Any, plan: Any, bases: list, bulk: Any, bounds: tuple,
           depth: int) -> None:
    """The producer thread's tile loop and, per tile, its K loop of copies."""
    from .pipeline_copies import eval_slice
    fn = ctx.fn
    lb, ub, step = bounds
    olb, oub, ostep = outer_bounds(ctx, pf)
    S = bulk.stages
    pre = fn.current
    ohead, obody, oexit = fn.label("ptile"), fn.label("ptilebody"), fn.label("ptileexit")
    fn.br(ohead)
    fn.start_block(ohead)
    t, s, ph = fn.tmp("ptile"), fn.tmp("pstage"), fn.tmp("pphase")
    slots = [fn.placeholder() for _ in range(3)]
    fn.cond_br(fn.inst(f"icmp slt {olb.ty} {t}, {oub.value}"), obody, oexit)
    fn.start_block(obody)
    with at_tile(ctx, pf, t):
        kpre = fn.current
        khead, kbody, kexit = fn.label("pk"), fn.label("pkbody"), fn.label("pkexit")
        fn.br(khead)
        fn.start_block(khead)
        k, ks, kph = fn.tmp("pk"), fn.tmp("pks"), fn.tmp("pkph")
        kslots = [fn.placeholder() for _ in range(3)]
        fn.cond_br(fn.inst(f"icmp slt {lb.ty} {k}, {ub.value}"), kbody, kexit)
        fn.start_block(kbody)
        operands, _ = eval_slice(ctx, op, plan, k, {}, depth)
        _issue(ctx, bulk, operands, bases, ks, kph)
        s1 = fn.inst(f"add i32 {ks}, 1")
        wrap = fn.inst(f"icmp eq i32 {s1}, {S}")
        ks_n = fn.inst(f"select i1 {wrap}, i32 0, i32 {s1}")
        kph_n = fn.inst(f"select i1 {wrap}, i32 {fn.inst(f'xor i32 {kph}, 1')}, i32 {kph}")
        k_n = fn.inst(f"add {lb.ty} {k}, {step.value}")
        klatch = fn.current
        fn.br(khead)
        fn.fill(kslots[0], f"{k} = phi {lb.ty} [{lb.value}, %{kpre}], [{k_n}, %{klatch}]")
        fn.fill(kslots[1], f"{ks} = phi i32 [{s}, %{kpre}], [{ks_n}, %{klatch}]")
        fn.fill(kslots[2], f"{kph} = phi i32 [{ph}, %{kpre}], [{kph_n}, %{klatch}]")
        fn.start_block(kexit)
    t_n = fn.inst(f"add {olb.ty} {t}, {ostep.value}")
    olatch = fn.current
    fn.br(ohead)
    fn.fill(slots[0], f"{t} = phi {olb.ty} [{olb.value}, %{pre}], [{t_n}, %{olatch}]")
    fn.fill(slots[1], f"{s} = phi i32 [0, %{pre}], [{ks}, %{olatch}]")
    fn.fill(slots[2], f"{ph} = phi i32 [0, %{pre}], [{kph}, %{olatch}]")
    fn.start_block(oexit)


def split(ctx: Context, pf: Prefetch, op: Any, plan: Any, bases: list, bulk: Any, bounds: tuple, depth: int,
          warps: int) -> None:
    """Before the tile loop (its preheader; the stages' barriers initialized and every thread past a barrier):
    the extra warps run the producer and leave; the consumers go on in a block of their own."""
    fn = ctx.fn
    consumers = ctx.num_warps * ctx.warp_size
    prod, cons = fn.label("producer"), fn.label("consumers")
    fn.cond_br(fn.inst(f"icmp uge i32 {ctx.tid}, {consumers}"), prod, cons)
    fn.start_block(prod)
    ctx.target.producer_start(fn, warps)
    run, done = fn.label("prodrun"), fn.label("proddone")
    fn.cond_br(fn.inst(f"icmp eq i32 {ctx.tid}, {consumers}"), run, done)
    fn.start_block(run)
    _loops(ctx, pf, op, plan, bases, bulk, bounds, depth)
    fn.br(done)
    fn.start_block(done)
    fn.emit("ret void")
    fn.start_block(cons)
    ctx.target.split_warp_roles(fn, cons, ctx.num_warps, warps)
    bulk.producer = True
