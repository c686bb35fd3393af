"""tt-combine: local algebraic rewrites of tile ops.

- ``broadcast(splat(x))`` and ``expand_dims(splat(x))`` become one ``splat(x)``;
- ``addptr(addptr(p, a), b)`` becomes ``addptr(p, a + b)`` when the inner one has no other use;
- ``dot(a, b, 0) + c`` becomes ``dot(a, b, c)`` (``acc += tl.dot(a, b)`` accumulates in place).
"""
from __future__ import annotations

from typing import Any

from .._mlir import ir
from ._util import all_ops


def _single_use(value: Any) -> bool:
    n = 0
    for _ in value.uses:
        n += 1
        if n > 1:
            return False
    return n == 1


def _owner_op(value: Any) -> Any:
    owner = value.owner
    return owner if isinstance(owner, (ir.Operation, ir.OpView)) else None


def _is_zero_splat(value: Any) -> bool:
    op = _owner_op(value)
    if op is None:
        return False
    if op.name == "arith.constant":
        attr = op.attributes["value"]
        if isinstance(attr, ir.DenseElementsAttr):
            dense = ir.DenseElementsAttr(attr)
            if dense.is_splat:
                s = dense.get_splat_value()
                return (isinstance(s, ir.FloatAttr) and ir.FloatAttr(s).value == 0.0) or \
                       (isinstance(s, ir.IntegerAttr) and ir.IntegerAttr(s).value == 0)
        return False
    if op.name == "tt.splat":
        return _is_zero_splat(op.operands[0]) or _is_zero_scalar(op.operands[0])
    return False


def _is_zero_scalar(value: Any) -> bool:
    op = _owner_op(value)
    if op is None or op.name != "arith.constant":
        return False
    attr = op.attributes["value"]
    if isinstance(attr, ir.FloatAttr):
        return ir.FloatAttr(attr).value == 0.0
    if isinstance(attr, ir.IntegerAttr):
        return ir.IntegerAttr(attr).value == 0
    return False


def _replace(op: Any, name: str, operands: list, attrs: dict | None = None) -> Any:
    new = ir.Operation.create(name, results=[r.type for r in op.results], operands=operands,
                              attributes=attrs or {}, loc=op.location, ip=ir.InsertionPoint(op))
    for old, nv in zip(op.results, new.results):
        old.replace_all_uses_with(nv)
    op.erase()
    return new


def tt_combine(module: Any, ctx: Any = None) -> None:
    with module.context:
        for op in all_ops(module):
            name = op.name
            if name in ("tt.broadcast", "tt.expand_dims"):
                src = _owner_op(op.operands[0])
                if src is not None and src.name == "tt.splat":
                    _replace(op, "tt.splat", [src.operands[0]])
            elif name == "tt.addptr":
                inner = _owner_op(op.operands[0])
                if inner is not None and inner.name == "tt.addptr" and _single_use(inner.results[0]) \
                        and inner.operands[1].type == op.operands[1].type:
                    total = ir.Operation.create("arith.addi", results=[op.operands[1].type],
                                                operands=[inner.operands[1], op.operands[1]], loc=op.location,
                                                ip=ir.InsertionPoint(op))
                    _replace(op, "tt.addptr", [inner.operands[0], total.result])
                    inner.erase()
            elif name in ("arith.addf", "arith.addi"):
                for i in (0, 1):
                    dot = _owner_op(op.operands[i])
                    if dot is not None and dot.name == "tt.dot" and _single_use(dot.results[0]) \
                            and _is_zero_splat(dot.operands[2]):
                        other = op.operands[1 - i]
                        attrs = {name: dot.attributes[name] for name in dot.attributes}
                        new = ir.Operation.create("tt.dot", results=[dot.results[0].type],
                                                  operands=[dot.operands[0], dot.operands[1], other],
                                                  attributes=attrs, loc=dot.location, ip=ir.InsertionPoint(op))
                        op.results[0].replace_all_uses_with(new.results[0])
                        op.erase()
                        dot.erase()
                        break
