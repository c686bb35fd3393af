"""tt-cse: merge identical side-effect-free tile ops (same name, operands, attributes and result types)
that sit in the same block, keeping the first. Ops with regions (reduce, scan) are compared by their
printed form."""
from __future__ import annotations

from typing import Any

from .._mlir import ir
from ..dialect import PURE_OPS
from ._util import all_ops, attr_key


def _key(op: Any) -> Any:
    if len(op.regions):
        return (op.name, str(op))
    operands = tuple(op.operands)
    return (op.name, operands, attr_key(op), tuple(str(r.type) for r in op.results))


def tt_cse(module: Any, ctx: Any = None) -> None:
    seen: dict[Any, Any] = {}
    for op in all_ops(module, ir.WalkOrder.PRE_ORDER):
        if op.name not in PURE_OPS:
            continue
        try:
            k = (op.block, _key(op))
            hash(k)
        except TypeError:
            continue
        first = seen.get(k)
        if first is None:
            seen[k] = op
            continue
        for old, new in zip(op.results, first.results):
            old.replace_all_uses_with(new)
        op.erase()
