"""What a software-pipelined loop issues for one iteration ahead: its address arithmetic evaluated at another
iteration (``eval_slice``) and the copies into a stage (``issue_copies``). Used by the pipelined loop
(pipeline.py) and by the prefetch of a persistent kernel's next tile (pipeline_prefetch.py), which is why it
lives below both."""
from __future__ import annotations

from typing import Any, Optional

from ..._mlir import block_ops
from .context import Context
from .descriptor_bulk import BulkStages
from .memory import access_vector
from .phis import carried
from .pipeline_planner import PipelinePlan
from .reduce import _Overlay
from .shared import SharedTile
from .tiles import tile_ptr, tile_vec
from .values import Scalar


# -- evaluating the address arithmetic for another iteration --------------------------------------------
def eval_slice(ctx: Context, op: Any, plan: PipelinePlan, iv: str, state: dict[int, Any], depth: int) -> tuple:
    block = op.regions[0].blocks[0]
    args = list(block.arguments)
    saved_values, saved_memo = ctx.values, ctx.memo
    ctx.values = _Overlay(saved_values)
    ctx.memo = saved_memo[:depth] + [{}]
    try:
        ctx.values[args[0]] = Scalar(iv, saved_values[args[0]].ty if args[0] in saved_values else "i32")
        for i, v in state.items():
            ctx.values[args[1 + i]] = v
        for o in plan.slice_ops:
            ctx.lower_op(o)
        operands = []
        for o, parts in plan.loads:
            if "desc" in parts:
                operands.append((ctx.values[parts["desc"][0]], [ctx.scalar_of(v) for v in parts["indices"]]))
                continue
            lay = ctx.layout_of(o.results[0])
            ptr = ctx.tensor_in(parts["ptr"][0], lay)
            mask = ctx.tensor_in(parts["mask"][0], lay) if parts["mask"] else None
            operands.append((ptr, mask))
        yields = list(block_ops(block)[-1].operands)
        new_state = {i: carried(ctx, yields[i], args[1 + i]) for i in plan.args}
    finally:
        ctx.values, ctx.memo = saved_values, saved_memo
    return operands, new_state


def issue_copies(ctx: Context, plan: PipelinePlan, operands: list, bases: list[str], stage: str,
                 valid: Optional[str], bulk: Optional[BulkStages] = None) -> None:
    fn = ctx.fn
    for k, ((o, parts), (ptr, mask), (tile_proto, stage_bytes)) in enumerate(zip(plan.loads, operands, bases)):
        if "desc" in parts:
            from .pipeline_desc import issue_descriptor_copies
            if bulk is not None and bulk.maps[k] is not None:
                continue
            issue_descriptor_copies(ctx, o, parts, ptr, mask, tile_proto, stage_bytes, stage, valid)
            continue
        lay = ptr.layout
        smem = tile_proto.smem
        eb = smem.eb
        vec = access_vector(ctx, parts["ptr"][0], parts["mask"][0] if parts["mask"] else None, lay, eb)
        vec = min(vec, tile_vec(ctx, lay, smem))
        base = ctx.smem_ptr(tile_proto.base, ctx.imul(stage, stage_bytes))
        tile = SharedTile(base, smem, tile_proto.ty)
        unique = set(lay.unique_regs())

        def copies(lay=lay, vec=vec, tile=tile, ptr=ptr, mask=mask, eb=eb, unique=unique) -> None:
            for g in range(0, lay.num_regs, vec):
                if g in unique:
                    pred = ctx.and_pred(mask.regs[g] if mask is not None else None, valid)
                    ctx.target.async_copy(fn, ctx.module, tile_ptr(ctx, tile, lay, g), ptr.regs[g], vec * eb,
                                           pred)

        from ..target import guarded
        # only the threads holding an element's first copy copy it: a predicated-off copy writes zeros,
        # and the duplicates' zeros would race with it
        guarded(fn, ctx.unique_pred(lay), copies)
    if bulk is not None:
        bulk.issue(ctx, operands, bases, stage, valid)
        bulk.zero_stage(ctx, bases, stage)
        if getattr(bulk, "fence_zeros", False):
            # no barrier at the loop's top: the zeros written (an empty tensor) are ordered before their reads here
            from ..target import guarded
            guarded(fn, bulk.not_ok, lambda: ctx.target.barrier(fn))
    ctx.target.async_commit(fn)
