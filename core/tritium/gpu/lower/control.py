"""``scf.for``, ``scf.if`` and ``scf.while``: loop-carried and branch values are phi nodes, one per register
(control flow in a Triton kernel is uniform across the program, so every thread takes the same path and
barriers inside loops are safe)."""
from __future__ import annotations

from typing import Any

from ..._mlir import block_ops
from .context import Context
from .optable import GPU_OPS
from .phis import carried, fill_phis, flat_regs, flat_values, make_phis, rebuild
from .pipeline import lower_pipelined_for, pipeline_plan
from .values import Scalar


@GPU_OPS.lowers("scf.for")
def op_for(ctx: Context, op: Any) -> None:
    plan = pipeline_plan(ctx, op)
    if plan is not None:
        lower_pipelined_for(ctx, op, plan)
        return
    fn = ctx.fn
    operands = list(op.operands)
    lb, ub, step = (ctx.scalar_of(v) for v in operands[:3])
    block = op.regions[0].blocks[0]
    args = list(block.arguments)
    inits = [carried(ctx, v, a) for v, a in zip(operands[3:], args[1:])]
    ctx.scratch_dirty = True
    frame = ctx.enter_loop(op, True)
    pre = fn.current
    head, body, exit_ = fn.label("for"), fn.label("forbody"), fn.label("forexit")
    fn.br(head)
    fn.start_block(head)
    iv = fn.tmp("iv")
    iv_slot = fn.placeholder()
    phis, slots = make_phis(ctx, args[1:], inits)
    cond = fn.inst(f"icmp slt {lb.ty} {iv}, {ub.value}")
    fn.cond_br(cond, body, exit_)
    fn.start_block(body)
    ctx.push_scope()
    ctx.values[args[0]] = Scalar(iv, lb.ty)
    for a, p in zip(args[1:], phis):
        ctx.values[a] = p
    ops = block_ops(block)
    ctx.lower_ops(ops[:-1])
    yielded = [carried(ctx, v, a) for v, a in zip(ops[-1].operands, args[1:])]
    nxt = fn.inst(f"add {lb.ty} {iv}, {step.value}")
    ctx.pop_scope()
    ctx.scratch_dirty = True
    latch = fn.current
    fn.br(head)
    pre = frame.pre                         # code hoisted out of the body may have added blocks
    fn.fill(iv_slot, f"{iv} = phi {lb.ty} [{lb.value}, %{pre}], [{nxt}, %{latch}]")
    fill_phis(ctx, phis, slots, [[(i, pre), (y, latch)] for i, y in zip(inits, yielded)])
    fn.start_block(exit_)
    # the last iteration's reads of shared memory are ordered before later writes by the barrier the next
    # writer emits (scratch_dirty is set)
    ctx.exit_loop()
    for r, p in zip(op.results, phis):
        ctx.values[r] = p


@GPU_OPS.lowers("scf.if")
def op_if(ctx: Context, op: Any) -> None:
    fn = ctx.fn
    cond = ctx.scalar_of(op.operands[0])
    results = list(op.results)
    then_l, else_l, join = fn.label("then"), fn.label("else"), fn.label("endif")
    fn.cond_br(cond.value, then_l, else_l)
    incoming: list[list[tuple[Any, str]]] = [[] for _ in results]
    dirty = ctx.scratch_dirty
    for region, label in ((op.regions[0], then_l), (op.regions[1], else_l)):
        fn.start_block(label)
        ctx.scratch_dirty = dirty
        ctx.push_scope()
        blocks = list(region.blocks)
        if blocks:
            ops = block_ops(blocks[0])
            ctx.lower_ops(ops[:-1])
            for k, (v, r) in enumerate(zip(ops[-1].operands, results)):
                incoming[k].append((carried(ctx, v, r), None))
        ctx.pop_scope()
        for k in range(len(results)):
            incoming[k][-1] = (incoming[k][-1][0], fn.current)
        fn.br(join)
    fn.start_block(join)
    ctx.scratch_dirty = True
    for k, r in enumerate(results):
        first = incoming[k][0][0]
        flat = flat_values(first)
        names = [fn.tmp("ifv") for _ in flat]
        for i, (name, (_, ty)) in enumerate(zip(names, flat)):
            edges = ", ".join(f"[{flat_regs(v)[i]}, %{label}]" for v, label in incoming[k])
            fn.emit(f"{name} = phi {ty} {edges}")
        ctx.values[r] = rebuild(first, names)


@GPU_OPS.lowers("scf.while")
def op_while(ctx: Context, op: Any) -> None:
    fn = ctx.fn
    before = list(op.regions[0].blocks)[0]
    after = list(op.regions[1].blocks)[0]
    bargs = list(before.arguments)
    inits = [carried(ctx, v, a) for v, a in zip(op.operands, bargs)]
    ctx.scratch_dirty = True
    pre = fn.current
    head, body, exit_ = fn.label("while"), fn.label("whilebody"), fn.label("whileexit")
    fn.br(head)
    fn.start_block(head)
    phis, slots = make_phis(ctx, bargs, inits)
    ctx.enter_loop(op, False)
    ctx.push_scope()
    for a, p in zip(bargs, phis):
        ctx.values[a] = p
    ops = block_ops(before)
    ctx.lower_ops(ops[:-1])
    cond_op = ops[-1]
    cond = ctx.scalar_of(cond_op.operands[0])
    forwarded = [carried(ctx, v, r) for v, r in zip(list(cond_op.operands)[1:], op.results)]
    ctx.pop_scope()
    fn.cond_br(cond.value, body, exit_)
    fn.start_block(body)
    ctx.push_scope()
    for a, v in zip(after.arguments, forwarded):
        ctx.values[a] = v
    ops = block_ops(after)
    ctx.lower_ops(ops[:-1])
    yielded = [carried(ctx, v, a) for v, a in zip(ops[-1].operands, bargs)]
    ctx.pop_scope()
    ctx.scratch_dirty = True
    latch = fn.current
    fn.br(head)
    fill_phis(ctx, phis, slots, [[(i, pre), (y, latch)] for i, y in zip(inits, yielded)])
    fn.start_block(exit_)
    ctx.exit_loop()
    for r, v in zip(op.results, forwarded):
        ctx.values[r] = v
