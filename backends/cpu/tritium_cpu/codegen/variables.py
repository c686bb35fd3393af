"""Kernel variables for a debugger (LLVM_EXTRACT_DI_LOCAL_VARIABLES): after an op whose value the frontend
named (``loc("x"(...))``), a DILocalVariable ``x`` and an ``llvm.dbg.value`` of what the program holds.

A scalar is described as itself. A tile is lazy here (evaluated inside the loops of whatever consumes it) and
has no single LLVM value, so the variable describes its first element (index 0 of every dimension), evaluated
once at the definition: ``x`` shows ``x[0]`` (``x[0, 0]``...). That evaluation is extra code, made only with
the knob; a masked-out first element reads as the load's ``other``. Aggregates (pointer tuples, block
pointers) are not described."""
from __future__ import annotations

from typing import Any

from tritium import line_info

from .tiles import Evaluator, Tile


def describe_results(lowering: Any, op: Any) -> None:
    fn = lowering.fn
    table = lowering.module.line_table
    if not fn.dbg or table is None:
        return
    name = line_info.variable_name(op.location)
    if name is None:
        return
    for res in op.results:
        v = lowering.values.get(res)
        if v is None:
            continue
        if isinstance(v, Tile):
            node = v.node
            value, ty = Evaluator(fn).value(node, ["0"] * len(node.shape)), node.ty
        else:
            value, ty = getattr(v, "value", None), getattr(v, "ty", None)
        if not isinstance(value, str) or not isinstance(ty, str):
            continue
        var = table.variable(name, op.location, fn.subprogram, ty)
        if var:
            lowering.module.declare("llvm.dbg.value", line_info.DBG_VALUE_DECL)
            fn.emit(line_info.dbg_value(ty, value, var))
        return   # an op with several results (a loop) gets its name on the first
