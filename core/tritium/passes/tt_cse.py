"""tt-cse: merge identical side-effect-free tile ops (same name, operands, attributes and result types)
that sit in the same block, keeping the first. Ops with regions (reduce, scan) are compared by their
regions' bodies as well."""
from __future__ import annotations

from typing import Any

from .._mlir import ir
from ..dialect import PURE_OPS
from ._util import all_ops, attr_key


def _key(op: Any, local: Any = None, depth: int = 0) -> Any:
    operands = tuple(op.operands) if local is None else tuple(local.get(v, v) for v in op.operands)
    key = (op.name, operands, attr_key(op), tuple(str(r.type) for r in op.results))
    if len(op.regions):
        key += (_regions_key(op, {} if local is None else local, depth + 1), )
    return key


def _regions_key(op: Any, local: dict, depth: int) -> Any:
    """The bodies of ``op``'s regions up to the naming of their values: a value made inside stands for its
    position there, one from outside for itself. (Printing the op instead numbered every value of the whole
    function for each op, so CSE was quadratic in kernel size; and the printed result names differ, so equal
    reductions were never merged.)"""
    parts = []
    for r, region in enumerate(op.regions):
        for b, block in enumerate(region.blocks):
            for a, arg in enumerate(block.arguments):
                local[arg] = ("arg", depth, r, b, a)
                parts.append(str(arg.type))
            for i, inner in enumerate(block.operations):
                parts.append(_key(inner, local, depth))
                for j, res in enumerate(inner.results):
                    local[res] = ("res", depth, r, b, i, j)
    return tuple(parts)


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
