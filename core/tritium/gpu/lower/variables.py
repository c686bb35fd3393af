"""Kernel variables for a GPU debugger (LLVM_EXTRACT_DI_LOCAL_VARIABLES): after an op whose value the
frontend named (``loc("x"(...))``), a DILocalVariable ``x`` and an ``llvm.dbg.value`` of what this thread holds.

A scalar (uniform over the program) is described as itself. A tile is spread over the threads, one SSA value
per register of its layout, and DWARF has no notion of "the element this lane owns"; the variable describes
the thread's first register (``regs[0]``), as Triton's pass describes the first result of the op. Tiles kept
in shared memory, and values the lowering computes later where they are used (rematerialized), are not
described."""
from __future__ import annotations

from typing import Any

from ... import line_info
from .context import Context
from .values import Scalar, Tensor


def describe_results(lowering: Context, op: Any) -> None:
    fn = lowering.fn
    table = lowering.module.line_table
    if not fn.dbg or table is None:
        return
    name = line_info.variable_name(op.location)
    if name is None or not op.results:
        return
    got = lowering.values.get(op.results[0])  # an op with several results (a loop) names its first
    if isinstance(got, Scalar):
        value, ty = got.value, got.ty
    elif isinstance(got, Tensor) and got.regs:
        value, ty = got.regs[0], got.ty
    else:
        return
    var = table.variable(name, op.location, fn.subprogram, ty)
    if var:
        lowering.module.declare("llvm.dbg.value", line_info.DBG_VALUE_DECL)
        fn.emit(line_info.dbg_value(ty, value, var))
