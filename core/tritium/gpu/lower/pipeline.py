"""Software pipelining of loads that feed ``tt.dot`` in ``scf.for`` loops (``num_stages`` deep).

A load qualifies when its result is only a dot operand, its ``other`` is absent or zero, and its pointer
and mask come from pure arithmetic on the induction variable, loop-invariant values and loop-carried values
that themselves advance by pure arithmetic (``a_ptrs += BLOCK_K * stride``). Then the loop becomes:

- before it, copies for iterations 0 .. S-2 start into S shared-memory stages (target ``async_copy``,
  one committed group per iteration), the address arithmetic evaluated for each of those iterations;
- in iteration i: wait until iteration i's group has landed, barrier, start the copies of iteration
  i + S - 1 into the stage read in iteration i - 1, then run the body with the dot reading stage i % S;
- after it, wait for every copy.

The address arithmetic for the iteration S - 1 ahead is carried in extra loop values. Copies past the
end of the loop are predicated off (they write zeros, never read).

Tensor-descriptor loads (``desc.load([i, j])``, zero padding) qualify the same way, also when their only use
is a transpose feeding dots (``b.T``): the stage is then read through a transposed view. Their copies are
vectors along the contiguous last dimension as wide as the index's divisibility allows (the base and the
other strides are 16-byte multiples by the descriptor's rules); a vector that runs past the end of that
dimension copies only its in-bounds bytes (the target zero-fills the rest).
"""
from __future__ import annotations

from typing import Any

from ..._mlir import block_ops
from ...llvmir.types import BYTES
from . import carry_dot
from .convert import storage_type
from .descriptor_bulk import BulkStages, aligned_start
from .context import Context, staged_row_vector
from .phis import carried, fill_phis, make_phis
from .pipeline_decoupled import decoupled
from .pipeline_rows import early_reads
from .pipeline_turns import turns
# which loads of a loop are pipelined is decided in its own module; its names stay importable from here
from .pipeline_planner import (_OTHER_STAGE_BYTES, _SLICE_OPS, PipelinePlan, _dot_kind,  # noqa: F401
                               _dot_operand_uses, _is_zero_constant, _stage_layout, _zero_padded_descriptor,
                               pipeline_plan)
from .shared import SharedTile, smem_layout_for
from .values import Scalar, Tensor


# the copies of one iteration ahead live below this module and pipeline_prefetch (pipeline_copies)
from .pipeline_copies import eval_slice, issue_copies  # noqa: E402,F401


# -- the loop --------------------------------------------------------------------------------------------
def lower_pipelined_for(ctx: Context, op: Any, plan: PipelinePlan) -> None:
    fn = ctx.fn
    S = plan.stages
    operands = list(op.operands)
    lb, ub, step = (ctx.scalar_of(v) for v in operands[:3])
    ity = lb.ty
    block = op.regions[0].blocks[0]
    args = list(block.arguments)
    inits = [carried(ctx, v, a) for v, a in zip(operands[3:], args[1:])]
    depth = len(ctx.memo)
    bases = []
    buffers = []
    # a load whose boxes may start off a 16-byte multiple fills its stages the portable way (aligned_start)
    maps = [ctx.values[parts["desc"][0]].tmap if "desc" in parts and aligned_start(
        ctx, ctx.values[parts["desc"][0]], parts["indices"]) else None for _, parts in plan.loads]
    # a persistent kernel's next tile: its first stages issued before this tile's epilogue (pipeline_prefetch)
    from .pipeline_prefetch import entry_state, first_tile, next_tile, own_buffer, prefetch_plan
    pf = prefetch_plan(ctx, op, plan, maps)
    for (o, parts), m in zip(plan.loads, maps):
        lay = ctx.layout_of(o.results[0])
        if "desc" in parts:
            st = ctx.values[parts["desc"][0]].elem
        else:
            mem_t, _ = ctx.pointee(parts["ptr"][0].type)
            st = storage_type(ctx, mem_t)
        smem = m.smem if m is not None else smem_layout_for(lay, st) if "desc" in parts else \
            _stage_layout(ctx, o.results[0], lay, st)
        stage_bytes = (smem.nbytes + 1023) // 1024 * 1024    # swizzle atoms are 1024-byte aligned
        k, base = ctx.shared_buffer(S * stage_bytes, 1024)
        if pf is not None:
            own_buffer(ctx, pf, k)
        else:
            buffers.append(k)
        bases.append((SharedTile(base, smem, st), stage_bytes))
    # barriers per stage instead of the loop top's CTA barrier, copies one iteration ahead (pipeline_decoupled)
    dec = decoupled(ctx, op, plan, maps, pf)
    A = 1 if dec is not None else S - 1          # how many iterations ahead the copies run
    # and its two warpgroups taking turns at the dots (pipeline_turns)
    tn = turns(ctx, block_ops(op.regions[0].blocks[0])) if dec is not None else None
    if dec is not None:
        buffers.append(dec.key)
    deferring = bool(plan.deferred) and ctx.target.async_dots
    # every stage a bulk copy whose landing its barrier tells: no barrier at the top of an iteration where the
    # dots run on (the refill waits for the barrier after their wait instead)
    top_barrier = not (deferring and maps and all(m is not None for m in maps)
                       and not getattr(ctx.target, "bulk_loop_top_barrier", True))
    # or its stages freed by barriers of their own (pipeline_empty.py): no CTA barrier in the loop at all
    from . import pipeline_empty
    from .pipeline_producer import asked, split as producer_split, wanted as producer_warps
    ws = asked(ctx, pf)                                 # the user's warp_specialize=True on the tile loop
    empties = pipeline_empty.wanted(ctx, op, plan, maps, deferring, bool(ws))
    top_barrier = top_barrier and not empties
    producer = producer_warps(ctx, pf, empties, ws)     # its copies issued by warps of their own
    # handed to first_tile, not imported there: pipeline_producer builds on pipeline_prefetch
    split = (lambda *at: producer_split(*at, producer)) if producer else None
    state = {i: inits[i] for i in plan.args}
    if pf is not None:
        # the prologue ran before the outer loop or after the previous tile's K loop
        bulk = first_tile(ctx, pf, op, plan, maps, bases, S, (lb, ub, step), depth, not top_barrier, empties,
                          split)
    else:
        # prologue: iterations 0 .. S-2. The stages may take bytes that earlier buffers used: wait for their
        # readers
        if ctx.scratch_dirty:
            ctx.target.barrier(fn)
            ctx.scratch_dirty = False
        if dec is not None:
            dec.init(ctx)
        bulk = BulkStages(ctx, maps, S, empties) if any(m is not None for m in maps) else None
        if bulk is not None:
            bulk.fence_zeros = not top_barrier
            buffers.append(bulk.key)
            # the other threads first wait on them after the loop's first barrier
            bulk.init(ctx)
        for s in range(A):
            iv_s = lb.value if s == 0 else fn.inst(f"add {ity} {lb.value}, {fn.inst(f'mul {ity} {step.value}, {s}')}")
            valid = fn.inst(f"icmp slt {ity} {iv_s}, {ub.value}")
            ops_s, state = eval_slice(ctx, op, plan, iv_s, state, depth)
            issue_copies(ctx, plan, ops_s, bases, str(s), valid, bulk)
            if dec is not None:
                dec.arrive(ctx, str(s))
        if bulk is not None and not top_barrier:
            # the barriers' init before any thread's first wait on them (the loop's top barrier did that)
            ctx.target.barrier(fn)
    if tn is not None:
        tn.bounds(ity, fn.tmp("iv"), lb.value, ub.value)
        tn.before_loop(ctx)
    ctx.scratch_dirty = True
    frame = ctx.enter_loop(op, True)
    rd0, wr0, phase0 = entry_state(ctx, pf, S)
    if dec is not None:
        wr0 = str(A)
    pre = fn.current
    head, body, exit_ = fn.label("pfor"), fn.label("pforbody"), fn.label("pforexit")
    found = carry_dot.plan(ctx, block_ops(block), args, register_a=bool(plan.deferred))
    # a loop whose last dot may run on is tested at its entry and its end (carry_dot.exit_edge says why)
    rotated = bool(found) and pf is None
    if rotated:
        fn.cond_br(fn.inst(f"icmp slt {ity} {lb.value}, {ub.value}"), head, exit_)
    else:
        fn.br(head)
    fn.start_block(head)
    iv = tn.iv if tn is not None else fn.tmp("iv")
    iv_slot = fn.placeholder()
    phis, slots = make_phis(ctx, args[1:], inits)
    ahead_init = [state[i] for i in plan.args]
    ahead, ahead_slots = make_phis(ctx, [args[1 + i] for i in plan.args], ahead_init)
    a_slot = fn.placeholder() if found else None     # phis of what the dot left running reads
    rd, wr = fn.tmp("rstage"), fn.tmp("wstage")
    rd_slot, wr_slot = fn.placeholder(), fn.placeholder()
    phase, phase_slot = fn.tmp("phase"), fn.placeholder()    # of stage rd's barrier: flips when rd wraps
    if rotated:
        fn.br(body)
    else:
        fn.cond_br(fn.inst(f"icmp slt {ity} {iv}, {ub.value}"), body, exit_)
    fn.start_block(body)
    ctx.push_scope()
    found_top = (top_barrier or found) and dec is None
    if found_top:
        ctx.target.async_wait(fn, S - 2)
        ctx.target.barrier(fn)
    ctx.scratch_dirty = not found_top
    if bulk is not None:
        bulk.wait(ctx, rd, phase)
    if dec is not None:
        dec.wait(ctx, rd, phase)
    ctx.deferred_dots = set(plan.deferred) if deferring else set()

    def copies_ahead() -> Any:
        # start the copies of iteration i + A (S - 1) into the stage iteration i + A - S (i - 1) read
        ahead_iv = fn.inst(f"add {ity} {iv}, {fn.inst(f'mul {ity} {step.value}, {A}')}")
        valid = fn.inst(f"icmp slt {ity} {ahead_iv}, {ub.value}")
        # the loop body's cache is left out: once the body is lowered (dots left in flight), it holds this
        # iteration's index vectors, which the ahead iteration must compute for itself
        ops_a, next_state = eval_slice(ctx, op, plan, ahead_iv, dict(zip(plan.args, ahead)), depth)
        issue_copies(ctx, plan, ops_a, bases, wr, valid, bulk)
        if dec is not None:
            dec.arrive(ctx, wr)
        return next_state

    ctx.values[args[0]] = Scalar(iv, ity)
    for a, p in zip(args[1:], phis):
        ctx.values[a] = p
    rec = ctx.carried_dot = carry_dot.start(ctx, found, args, a_slot) if found else None
    if not deferring and rec is None:
        next_state = copies_ahead()
    skip = set()
    for (o, parts), (proto, stage_bytes) in zip(plan.loads, bases):
        base = ctx.smem_ptr(proto.base, ctx.imul(rd, stage_bytes))
        ctx.values[o.results[0]] = SharedTile(base, proto.smem, proto.ty)
        skip.add(o.results[0])
    ops = block_ops(block)
    early = early_reads(ctx, ops, skip)         # row vectors read ahead of a dot (pipeline_rows.py)
    done = []
    for k, o in enumerate(ops[:-1]):
        for e in early.get(k, ()):
            ctx.lower_op(e)
            done.append(e)
        if any(o == e for e in done):
            continue
        if o.results and o.results[0] in skip:
            r = o.results[0]
            if not _dot_operand_uses(r) and not staged_row_vector(ctx, r):
                # read where the load was: its users expect registers (a row vector only broadcast is read
                # by each broadcast, in the layout it needs: the attention backward's row maxima and sums
                # were converted through shared memory, two barriers each, every iteration)
                ctx.values[r] = ctx.read_tile(ctx.values[r], ctx.layout_of(r), ctx.value_type(r))
            continue
        if tn is not None:
            tn.before(ctx, o)
        ctx.lower_op(o)
        if tn is not None:
            tn.after(ctx, o)
    if rec is not None:
        carry_dot.finish_body(ctx, rec)
        # the stage the last iteration read is free once its dots are retired (the first dot's wait) in
        # every warp
        ctx.target.barrier(fn)
        next_state = copies_ahead()
    elif empties:
        pipeline_empty.release_previous(ctx, bulk, iv, lb, rd, phase, S, bool(ctx.deferred_dots))
        next_state = copies_ahead()
        bulk.empty_parity = None
    elif deferring:
        if ctx.deferred_dots:
            # this iteration's dots run on; the previous iteration's are done (in every warp, after the
            # barrier), so the stage they read can be refilled
            ctx.target.async_dot_wait(fn, 1, [])
            ctx.target.barrier(fn)
        # else every dot waited for itself (the strategy dropped it from deferred_dots): the stage iteration
        # i - 1 read was free at this iteration's first barrier (where there is none, at this one)
        elif not found_top:
            ctx.target.barrier(fn)
        next_state = copies_ahead()
    ctx.deferred_dots = set()
    ctx.carried_dot = None
    yielded = [carried(ctx, v, a) for v, a in zip(ops[-1].operands, args[1:])]
    nxt = fn.inst(f"add {ity} {iv}, {step.value}")
    rd1 = fn.inst(f"add i32 {rd}, 1")
    rdw = fn.inst(f"select i1 {fn.inst(f'icmp eq i32 {rd1}, {S}')}, i32 0, i32 {rd1}")
    wr1 = fn.inst(f"add i32 {wr}, 1")
    wrw = fn.inst(f"select i1 {fn.inst(f'icmp eq i32 {wr1}, {S}')}, i32 0, i32 {wr1}")
    phn = fn.inst(f"select i1 {fn.inst(f'icmp eq i32 {rd1}, {S}')}, i32 {fn.inst(f'xor i32 {phase}, 1')}, "
                  f"i32 {phase}")
    ctx.pop_scope()
    ctx.scratch_dirty = True
    latch = fn.current
    if rotated:
        last, leaving = carry_dot.exit_edge(ctx, rec, yielded, fn.inst(f"icmp slt {ity} {nxt}, {ub.value}"), head,
                                            exit_)
    else:
        fn.br(head)
    pre = frame.pre                         # code hoisted out of the body may have added blocks
    fn.fill(iv_slot, f"{iv} = phi {ity} [{lb.value}, %{pre}], [{nxt}, %{latch}]")
    fn.fill(rd_slot, f"{rd} = phi i32 [{rd0}, %{pre}], [{rdw}, %{latch}]")
    fn.fill(wr_slot, f"{wr} = phi i32 [{wr0}, %{pre}], [{wrw}, %{latch}]")
    fn.fill(phase_slot, f"{phase} = phi i32 [{phase0}, %{pre}], [{phn}, %{latch}]")
    fill_phis(ctx, phis, slots, [[(i, pre), (y, latch)] for i, y in zip(inits, yielded)])
    if rec is not None:
        carry_dot.fill_header(ctx, rec, pre, latch)
    fill_phis(ctx, ahead, ahead_slots, [[(a0, pre), (next_state[i], latch)]
                                         for a0, i in zip(ahead_init, plan.args)])
    fn.start_block(exit_)
    if rotated:
        # the loop's values: skipped (its initial values) or left from its last iteration
        phis, out_slots = make_phis(ctx, args[1:], inits)
        fill_phis(ctx, phis, out_slots, [[(i, pre), (y, last)] for i, y in zip(inits, leaving)])
    ctx.target.async_wait(fn, 0)
    if tn is not None:
        tn.after_loop(ctx)          # before any CTA barrier: the other warpgroup waits for it in its last iteration
    if dec is not None:
        dec.drain(ctx, rd, phase)
    for r, p, j in zip(op.results, phis, range(len(phis))):
        if rotated and rec.running and j == rec.j:
            pass                                # retired on the way out (carry_dot.exit_edge)
        elif rec is not None and rec.running and j == rec.j:
            p = Tensor(p.layout, carry_dot.retire(ctx, rec, p.regs), p.ty)
        elif deferring and j in plan.deferred.values():
            # the last iteration's dots finish here; their registers are read only after this
            p = Tensor(p.layout, ctx.target.async_dot_wait(fn, 0, p.regs, p.ty), p.ty)
        ctx.values[r] = p
    if empties:
        pipeline_empty.release_last(ctx, bulk, iv, lb, rd, S)
    # every copy has landed and every dot has read its operands, in every thread: the stages are dead
    ctx.target.barrier(fn)
    if pf is not None:
        next_tile(ctx, pf, op, plan, bases, bulk, (lb, ub, step), depth, rd, phase)
    elif bulk is not None:
        # every phase armed was waited for; the barriers' bytes become ordinary shared memory again
        bulk.inval(ctx)
    if dec is not None:
        dec.inval(ctx)
    for k in buffers:
        ctx.smem.close(k)
    ctx.exit_loop()


_unused = (BYTES, Tensor)
