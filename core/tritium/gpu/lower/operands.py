"""Reading an op's operands and attributes, and how values are kept in memory (i1 as i8), for the GPU lowering's
handlers."""
from __future__ import annotations

from typing import Any

from ..._mlir import ir
from .context import Context


def segments(op: Any, n: int) -> list[int]:
    if "operandSegmentSizes" in op.attributes:
        return list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    return [1] * n


def split_operands(op: Any, names: list[str]) -> dict[str, list[Any]]:
    """Operands by group. Without ``operandSegmentSizes`` (at most one variadic group), every group but the
    last has one operand and the last takes the rest."""
    ops = list(op.operands)
    sizes = segments(op, len(names))
    if "operandSegmentSizes" not in op.attributes:
        sizes = [1] * (len(names) - 1) + [max(0, len(ops) - (len(names) - 1))]
    out, i = {}, 0
    for name, n in zip(names, sizes):
        out[name] = ops[i:i + n]
        i += n
    return out


def str_attr(op: Any, name: str, default: str = "") -> str:
    if name not in op.attributes:
        return default
    a = op.attributes[name]
    try:
        return ir.StringAttr(a).value
    except (ValueError, TypeError):
        return str(a)


def has_uses(value: Any) -> bool:
    for _ in value.uses:
        return True
    return False


def mem_value(ctx: Context, v: str, rty: str) -> str:
    """A register value as it is kept in memory (booleans as bytes)."""
    return ctx.fn.inst(f"zext i1 {v} to i8") if rty == "i1" else v


def reg_value(ctx: Context, v: str, rty: str) -> str:
    return ctx.fn.inst(f"icmp ne i8 {v}, 0") if rty == "i1" else v
