"""Which loads of an ``scf.for`` are software-pipelined (pipeline.py lowers the loop so): the dot operands whose
pointer, mask and zero ``other`` come from pure arithmetic on the induction variable, loop-invariant values and
loop-carried values that advance by pure arithmetic, the small loads staged beside them, that arithmetic (the
slice evaluated again for later iterations), and the accumulators that may stay in flight across iterations."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ..._mlir import block_ops
from ..assign import operand_contiguous, tensor_shape
from ...llvmir.types import BYTES
from .convert import storage_type
from .context import Context
from .operands import split_operands
from .scalar import EXPENSIVE, is_scalar_op
from .shared import SmemLayout, smem_layout_for
from .values import owner_op

#: the largest tile (bytes per stage) of a load that does not feed a dot that is staged
_OTHER_STAGE_BYTES = 4096


_SLICE_OPS = {"tt.splat", "tt.make_range", "arith.constant", "tt.broadcast", "tt.expand_dims", "tt.addptr"}


@dataclass
class PipelinePlan:
    stages: int
    loads: list[tuple[Any, dict]]     # (load op, its operands by name)
    slice_ops: list[Any]              # pure ops computing the loads' operands and the carried addresses
    args: list[int]                   # indices (into the iter args) of the carried values the slice reads
    deferred: dict                    # dot result -> iter arg index: accumulators left in flight across iterations


def _dot_operand_uses(res: Any) -> bool:
    """Every use of ``res`` is a dot's A or B, directly or through one 2-D transpose used only so (or, for a
    block of rank 3 to 5, through a reshape that drops its leading unit dimensions: pipeline_desc.py)."""
    from .pipeline_desc import squeezed_to_2d
    uses = list(res.uses)
    if not uses:
        return False
    squeezed = squeezed_to_2d(res)
    if squeezed is not None:
        return _dot_operand_uses(squeezed)
    for u in uses:
        o = u.owner
        if o.name == "tt.trans" and len(list(o.results[0].uses)) > 0:
            if any(w.owner.name != "tt.dot" or w.operand_number not in (0, 1) for w in o.results[0].uses):
                return False
        elif o.name != "tt.dot" or u.operand_number not in (0, 1):
            return False
    return True


def _dot_kind(o: Any) -> Optional[str]:
    from ..._mlir import ir
    return ir.StringAttr(o.attributes["ttg.dot"]).value if "ttg.dot" in o.attributes else None


def _stage_layout(ctx: Context, res: Any, lay: Any, st: str) -> SmemLayout:
    """A stage runs along the dimension its registers run along (16-byte copies), unless its dots can read it only
    along the other (a tf32 B stored (K, N) on wgmma): it is then staged their way, one 4-byte copy per element,
    as Triton does, rather than rewritten by the dot in every iteration (which also kept the dot from overlapping
    the next iteration)."""
    smem = smem_layout_for(lay, st)
    # element by element means one copy per element: 8- and 16-bit ones would be too narrow to run asynchronously
    want = operand_contiguous(res, ctx.target.policy(ctx.num_warps), _dot_kind) \
        if lay.rank == 2 and smem.eb >= 4 else None
    return smem if want is None or want == smem.fast else SmemLayout(lay.shape, want, smem.eb)


def _zero_padded_descriptor(v: Any) -> bool:
    from ..._mlir import ir
    o = owner_op(v)
    if o is None or o.name != "tt.make_tensor_descriptor":
        return False
    return "padding" not in o.attributes or ir.StringAttr(o.attributes["padding"]).value == "zero"


def _is_zero_constant(v: Any) -> bool:
    from ..._mlir import ir
    op = owner_op(v)
    while op is not None and op.name == "tt.splat":
        v = op.operands[0]
        op = owner_op(v)
    if op is None or op.name != "arith.constant":
        return False
    attr = op.attributes["value"]
    try:
        if isinstance(attr, (ir.IntegerAttr, ir.FloatAttr)):
            return float(attr.value) == 0.0
        dense = ir.DenseElementsAttr(attr)
        return dense.is_splat and float(dense.get_splat_value().value) == 0.0
    except Exception:
        return False


def pipeline_plan(ctx: Context, op: Any) -> Optional[PipelinePlan]:
    stages = int(getattr(ctx.options, "num_stages", 1) or 1)
    if stages < 2:
        return None
    block = op.regions[0].blocks[0]
    ops = block_ops(block)
    args = list(block.arguments)
    iters = args[1:]
    defined = set(args)
    for o in ops:
        defined.update(o.results)
    loads = []
    for o in ops:
        if o.name == "tt.descriptor_load":
            shape = tensor_shape(o.results[0].type)
            parts = split_operands(o, ["desc", "indices"])
            if shape is not None and len(shape) >= 2 and _dot_operand_uses(o.results[0]) \
                    and _zero_padded_descriptor(parts["desc"][0]):
                loads.append((o, parts))
            continue
        if o.name != "tt.load" or "is_volatile" in o.attributes and str(o.attributes["is_volatile"]) == "true":
            continue
        res = o.results[0]
        shape = tensor_shape(res.type)
        if shape is None or len(shape) != 2:
            continue
        if not _dot_operand_uses(res):
            continue
        parts = split_operands(o, ["ptr", "mask", "other"])
        if parts["other"] and not _is_zero_constant(parts["other"][0]):
            continue
        loads.append((o, parts))
    if not loads:
        return None
    # in a loop that is pipelined for its dots, the other small loads are staged too (the row maxima and
    # sums the attention backward reads next to its dot operands); larger tiles are left alone so that a
    # kernel that fit in shared memory still does
    others = []
    staged = {o for o, _ in loads}
    for o in ops:
        if o.name != "tt.load" or o in staged or "is_volatile" in o.attributes \
                and str(o.attributes["is_volatile"]) == "true":
            continue
        shape = tensor_shape(o.results[0].type)
        parts = split_operands(o, ["ptr", "mask", "other"])
        if shape is None or len(shape) not in (1, 2) or "!tt.ptr<tensor" in str(parts["ptr"][0].type) \
                or any(u.owner.name == "scf.yield" for u in o.results[0].uses):
            continue
        numel = shape[0] * (shape[1] if len(shape) == 2 else 1)
        if numel * BYTES.get(storage_type(ctx, ctx.pointee(parts["ptr"][0].type)[0]), 8) > _OTHER_STAGE_BYTES:
            continue
        if parts["other"] and not _is_zero_constant(parts["other"][0]):
            continue
        others.append((o, parts))
    chosen: dict[Any, Any] = {}
    used: set[int] = set()

    def visit(v: Any) -> bool:
        if v not in defined:
            return True
        if v in iters:
            used.add(iters.index(v))
            return True
        if v == args[0]:
            return True
        o = owner_op(v)
        if o is None or len(o.results) != 1:
            return False
        if o.results[0] in chosen:
            return True
        if not (o.name in _SLICE_OPS or (is_scalar_op(o.name) and o.name not in EXPENSIVE)):
            return False
        if not all(visit(x) for x in o.operands):
            return False
        chosen[o.results[0]] = o
        return True

    for o, parts in loads:
        for group in parts.values():
            for v in group:
                if not visit(v):
                    return None
    for o, parts in others:
        before = (dict(chosen), set(used))
        if all(visit(v) for group in parts.values() for v in group):
            loads.append((o, parts))
        else:
            chosen, used = before
    yields = list(ops[-1].operands)
    done: set[int] = set()
    while used - done:
        i = min(used - done)
        done.add(i)
        if not visit(yields[i]):
            return None
    order = {o.results[0]: k for k, o in enumerate(ops) if o.results}
    slice_ops = sorted(chosen.values(), key=lambda o: order[o.results[0]])
    # a dot whose accumulator is carried (acc = dot(a, b, acc) and nothing else reads it) may finish in the
    # next iteration, on targets whose tensor cores run asynchronously
    deferred = {}
    for o in ops:
        if o.name == "tt.dot" and o.operands[2] in iters:
            j = iters.index(o.operands[2])
            uses = list(o.results[0].uses)
            if len(uses) == 1 and uses[0].owner.name == "scf.yield" and uses[0].operand_number == j \
                    and len(list(o.operands[2].uses)) == 1:
                deferred[o.results[0]] = j
    return PipelinePlan(stages, loads, slice_ops, sorted(used), deferred)
