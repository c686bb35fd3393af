"""wide-accumulate: make fp16/bf16 ``tt.reduce``/``tt.scan`` accumulate in f32.

Triton sums fp16 in fp16: ``tl.sum`` of 4096 ones gives 4084 or 2048 depending on the order of additions,
because 2048 + 1 rounds back to 2048. This pass rewrites

    %r = "tt.reduce"(%x : tensor<Nxf16>) ({ ^bb0(%a: f16, %b: f16): arith.addf ... gpu.yield })

into ``extf`` -> the same reduction on f32 (its combine region cloned with f32 types) -> ``truncf``, so
only the final result is rounded to the narrow type. Only combine regions made of arithmetic this file
knows (add, sub, mul, fma, min/max, compare, select, constants) and that accumulate (add, sub, mul or fma)
are rewritten; min/max reductions are exact in any width and are left alone.

Pass options (``tritium-opt -p 'wide-accumulate{types=f16 scans=0}'``) override the knobs.
"""
from __future__ import annotations

from typing import Any

ACCUMULATING = {"arith.addf", "arith.subf", "arith.mulf", "math.fma"}
ALLOWED = ACCUMULATING | {"arith.maximumf", "arith.minimumf", "arith.maxnumf", "arith.minnumf", "arith.negf",
                          "arith.cmpf", "arith.select", "arith.constant", "gpu.yield"}


def _settings(ctx: Any) -> tuple[set[str], bool]:
    from .knobs import wideacc
    opts = getattr(ctx, "pass_options", None) or {}
    types = opts.get("types", wideacc.types or "")
    scans = opts.get("scans")
    scans = wideacc.scans if scans is None else scans.lower() in ("1", "true", "on", "yes")
    return {t.strip() for t in types.replace("+", ",").split(",") if t.strip()}, scans


def _elem(t: Any) -> str:
    from mlir import ir
    return str(t.element_type) if isinstance(t, ir.ShapedType) else str(t)


def _widen(t: Any, narrow: set[str]) -> Any:
    from mlir import ir
    f32 = ir.F32Type.get()
    if isinstance(t, ir.RankedTensorType):
        if str(t.element_type) in narrow:
            return ir.RankedTensorType.get(t.shape, f32, t.encoding)
        return t
    return f32 if str(t) in narrow else t


def _rewritable(op: Any, narrow: set[str]) -> bool:
    if not len(op.operands) or any(_elem(v.type) not in narrow for v in op.operands):
        return False
    body = op.regions[0].blocks[0]
    names = [o.name for o in body.operations]
    if not set(names) <= ALLOWED or not (set(names) & ACCUMULATING):
        return False
    inside = set(body.arguments) | {r for o in body.operations for r in o.results}
    # a value from outside the region would keep its narrow type: leave such reductions alone
    return all(v in inside for o in body.operations for v in o.operands)


def _clone_body(old: Any, new_op: Any, narrow: set[str]) -> None:
    from mlir import ir
    f32 = ir.F32Type.get()
    block = new_op.regions[0].blocks.append(*[_widen(a.type, narrow) for a in old.arguments])
    mapping = dict(zip(old.arguments, block.arguments))
    with ir.InsertionPoint(block):
        for o in old.operations:
            attrs = {name: o.attributes[name] for name in o.attributes}
            if o.name == "arith.constant" and str(o.results[0].type) in narrow:
                attrs["value"] = ir.FloatAttr.get(f32, ir.FloatAttr(o.attributes["value"]).value)
            new = ir.Operation.create(o.name, results=[_widen(r.type, narrow) for r in o.results],
                                      operands=[mapping[v] for v in o.operands], attributes=attrs, loc=o.location)
            mapping.update(zip(o.results, new.results))


def _rewrite(op: Any, narrow: set[str]) -> None:
    from mlir import ir
    ip = ir.InsertionPoint(op)
    wide = [ir.Operation.create("arith.extf", results=[_widen(v.type, narrow)], operands=[v], loc=op.location,
                                ip=ip).result for v in op.operands]
    attrs = {name: op.attributes[name] for name in op.attributes}
    new = ir.Operation.create(op.name, results=[_widen(r.type, narrow) for r in op.results], operands=wide,
                              attributes=attrs, regions=1, loc=op.location, ip=ip)
    _clone_body(op.regions[0].blocks[0], new, narrow)
    for old_r, new_r in zip(op.results, new.results):
        back = ir.Operation.create("arith.truncf", results=[old_r.type], operands=[new_r], loc=op.location, ip=ip)
        old_r.replace_all_uses_with(back.result)
    op.erase()


def wide_accumulate(module: Any, ctx: Any = None) -> None:
    from tritium.passes import all_ops
    narrow, scans = _settings(ctx)
    kinds = {"tt.reduce", "tt.scan"} if scans else {"tt.reduce"}
    with module.context:
        for op in all_ops(module):
            if op.name in kinds and _rewritable(op, narrow):
                with op.location:  # block arguments and attributes need a location
                    _rewrite(op, narrow)
