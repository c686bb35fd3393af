"""Small helpers shared by the Python passes (walking without building OpViews)."""
from __future__ import annotations

from typing import Any

from .._mlir import ir


def all_ops(root: Any, order: Any = None) -> list[Any]:
    out: list[Any] = []

    def visit(op: Any) -> Any:
        out.append(op)
        return ir.WalkResult.ADVANCE

    root.operation.walk(visit, order or ir.WalkOrder.POST_ORDER)
    return out


def has_uses(op: Any) -> bool:
    for r in op.results:
        for _ in r.uses:
            return True
    return False


def attr_key(op: Any) -> tuple:
    return tuple(sorted((name, str(op.attributes[name])) for name in op.attributes))
