"""tt-split-dot: an fp32 ``tt.dot`` asked for with ``input_precision`` ``tf32x3``, ``bf16x3`` or ``bf16x6`` becomes
three (six) dots of narrower operands that tensor cores run, summed into the same accumulator, smallest terms
first.

Each operand x is split into a sum of narrow parts: ``x = hi + lo`` (``tf32x3``: hi is x with its low 13 mantissa
bits cleared, a tf32 value, and lo = x - hi is exact; ``bf16x3``: hi = bf16(x), lo = bf16(x - hi)); ``bf16x6`` adds a
third part. The products of parts whose orders add up to the highest kept order are summed: for three parts
a_lo*b_hi + a_hi*b_lo + a_hi*b_hi, which is x*y up to about fp32's precision. A non-finite x keeps its hi part and
has zero lower parts and takes part only in the hi * hi product, so infinities and NaNs reach the result as the
IEEE dot's would.

Only the GPU backends that have such tensor-core dots put this pass in their ``ttir`` pipeline; elsewhere an fp32
dot is computed in IEEE precision, at least as precise as asked.
"""
from __future__ import annotations

from typing import Any

from .._mlir import ir
from ._util import all_ops

#: input precision -> (number of parts, narrow element type, precision of the narrow dots, products as part orders)
SPLITS = {
    "tf32x3": (2, "f32", "tf32", [(1, 0), (0, 1), (0, 0)]),
    "bf16x3": (2, "bf16", "ieee", [(1, 0), (0, 1), (0, 0)]),
    "bf16x6": (3, "bf16", "ieee", [(2, 0), (1, 1), (0, 2), (1, 0), (0, 1), (0, 0)]),
}


class _Builder:
    def __init__(self, at: Any) -> None:
        self.at = at

    def op(self, name: str, operands: list, result: Any, attrs: dict | None = None) -> Any:
        return ir.Operation.create(name, results=[result], operands=operands, attributes=attrs or {},
                                   loc=self.at.location, ip=ir.InsertionPoint(self.at)).result

    def const(self, ty: Any, value: Any) -> Any:
        elem = ir.RankedTensorType(ty).element_type
        attr = ir.DenseElementsAttr.get_splat(ty, ir.IntegerAttr.get(elem, value) if isinstance(elem, ir.IntegerType)
                                              else ir.FloatAttr.get(elem, value))
        return self.op("arith.constant", [], ty, {"value": attr})


def _parts(b: _Builder, x: Any, count: int, narrow: str) -> tuple[list[Any], Any]:
    """``count`` parts of the f32 tensor ``x``, highest first, each of the narrow type (f32 holding tf32 values for
    tf32x3), and the highest part with zeros where ``x`` is not finite (for the products with the other operand's
    lower parts: inf * a negative lower part would add -inf to the inf of hi * hi)."""
    ty = ir.RankedTensorType(x.type)
    f32 = ty
    i32 = ir.RankedTensorType.get(ty.shape, ir.IntegerType.get_signless(32))
    i1 = ir.RankedTensorType.get(ty.shape, ir.IntegerType.get_signless(1))
    nty = f32 if narrow == "f32" else ir.RankedTensorType.get(ty.shape, ir.BF16Type.get())
    # |x| < inf: ordered and not equal to infinity (false for NaN)
    finite = b.op("arith.cmpf", [b.op("math.absf", [x], f32), b.const(f32, float("inf"))], i1,
                  {"predicate": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 4)})     # olt
    zero = b.const(f32, 0.0)
    parts = []
    rest = x
    for k in range(count):
        if narrow == "f32":
            bits = b.op("arith.bitcast", [rest], i32)
            hi = b.op("arith.bitcast", [b.op("arith.andi", [bits, b.const(i32, -8192)], i32)], f32)  # 0xFFFFE000
            part, wide = hi, hi
        else:
            part = b.op("arith.truncf", [rest], nty)
            wide = b.op("arith.extf", [part], f32)
        parts.append(part)
        if k + 1 < count:
            rest = b.op("arith.select", [finite, b.op("arith.subf", [rest, wide], f32), zero], f32)
    hi_finite = b.op("arith.select", [finite, parts[0], b.const(nty, 0.0) if narrow != "f32" else zero], nty)
    return parts, hi_finite


def _split(dot: Any) -> None:
    precision = ir.StringAttr(dot.attributes["input_precision"]).value
    count, narrow, inner, products = SPLITS[precision]
    b = _Builder(dot)
    a_parts, a_fin = _parts(b, dot.operands[0], count, narrow)
    b_parts, b_fin = _parts(b, dot.operands[1], count, narrow)
    acc = dot.operands[2]
    attrs = {name: dot.attributes[name] for name in dot.attributes}
    attrs["input_precision"] = ir.StringAttr.get(inner)
    for i, j in products:
        # only hi * hi carries the operands' infinities and NaNs
        x = a_parts[i] if i or not j else a_fin
        y = b_parts[j] if j or not i else b_fin
        acc = b.op("tt.dot", [x, y, acc], dot.results[0].type, attrs)
    dot.results[0].replace_all_uses_with(acc)
    dot.erase()


def tt_split_dot(module: Any, ctx: Any = None) -> None:
    with module.context:
        _split_all(module)


def _split_all(module: Any) -> None:
    for op in all_ops(module):
        if op.name != "tt.dot" or "input_precision" not in op.attributes:
            continue
        if ir.StringAttr(op.attributes["input_precision"]).value not in SPLITS:
            continue
        if not all(isinstance(v.type, ir.RankedTensorType) and str(ir.RankedTensorType(v.type).element_type) == "f32"
                   for v in op.operands):
            continue
        with op.location:
            _split(op)
