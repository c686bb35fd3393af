"""MLIR_ENABLE_DIAGNOSTICS (and the deprecated MLIR_ENABLE_REMARK): which diagnostics besides errors are
printed (to stderr) while a kernel's passes run.

Upstream MLIR passes report through the context's diagnostic handler, which :func:`capture` installs for
the duration of a pipeline. The Python bindings can emit only errors, so tritium's Python passes report
warnings and remarks through :func:`warning` and :func:`remark` here, under the same policy.

Options, as in Triton: ``warnings`` (errors and warnings), ``remarks`` (errors, warnings and remarks),
``stacktraces`` (the Python stack where the diagnostic was emitted: MLIR's native stack is not reachable
from Python), ``operations`` (print the operation the diagnostic is about; for upstream passes MLIR hands
Python only the location, so there the location stands in for the operation).
"""
from __future__ import annotations

import sys
import traceback
from contextlib import contextmanager
from typing import Any, Iterator

from .. import knobs
from ..debug_knobs import warn_once

CHOICES = ("warnings", "remarks", "stacktraces", "operations")
_RANK = {"error": 3, "warning": 2, "remark": 1, "note": 0}


def policy() -> tuple[int, bool, bool]:
    """(lowest severity rank printed, print a stack trace, print the operation)."""
    opts = set(knobs.compilation.mlir_diagnostics)
    if knobs.compilation.mlir_remark:
        warn_once("MLIR_ENABLE_REMARK", "MLIR_ENABLE_REMARK is deprecated: use MLIR_ENABLE_DIAGNOSTICS=remarks")
        opts.add("remarks")
    unknown = sorted(opts - set(CHOICES))
    if unknown:
        raise knobs.KnobError(f"MLIR_ENABLE_DIAGNOSTICS: unknown option(s) {', '.join(unknown)}; expected a "
                              f"comma-separated list of {', '.join(CHOICES)}")
    lowest = _RANK["remark"] if "remarks" in opts else _RANK["warning"] if "warnings" in opts else _RANK["error"]
    return lowest, "stacktraces" in opts, "operations" in opts


def format_location(loc: Any) -> str:
    try:
        if loc.is_a_file():
            return f"{loc.filename}:{loc.start_line}:{loc.start_col}"
        if loc.is_a_name():
            return format_location(loc.child_loc)
        if loc.is_a_callsite():
            return format_location(loc.callee)
        if loc.is_a_fused():
            return format_location(loc.locations[0]) if loc.locations else "<unknown>"
    except Exception:
        pass
    return str(loc)


def _print(severity: str, where: str, message: str, op_text: str = "", stack: bool = False) -> None:
    lines = [f"{where}: {severity}: {message}"]
    if op_text:
        lines.append(f"{where}: note: see current operation: {op_text}")
    if stack:
        lines.append("".join(traceback.format_stack()[:-3]).rstrip())
    print("\n".join(lines), file=sys.stderr)


def emit(op: Any, severity: str, message: str) -> bool:
    """Report ``message`` about ``op`` from a Python pass; returns whether it was printed."""
    lowest, stack, show_op = policy()
    if _RANK[severity] < lowest:
        return False
    op = getattr(op, "operation", op)
    text = op.get_asm(enable_debug_info=False) if show_op else ""
    _print(severity, format_location(op.location), message, text, stack)
    return True


def warning(op: Any, message: str) -> bool:
    return emit(op, "warning", message)


def remark(op: Any, message: str) -> bool:
    return emit(op, "remark", message)


@contextmanager
def capture(context: Any) -> Iterator[None]:
    """Print the context's warnings and remarks that the policy asks for while the block runs."""
    lowest, stack, show_op = policy()
    if lowest == _RANK["error"] and not stack and not show_op:
        yield
        return
    from .._mlir import ir
    names = {ir.DiagnosticSeverity.ERROR: "error", ir.DiagnosticSeverity.WARNING: "warning",
             ir.DiagnosticSeverity.REMARK: "remark", ir.DiagnosticSeverity.NOTE: "note"}

    def handle(diag: Any) -> bool:
        severity = names.get(diag.severity, "note")
        if severity == "error":
            return False    # errors keep their usual route: they become the exception's message
        if _RANK[severity] < lowest:
            return True     # handled: MLIR would drop it anyway
        _print(severity, format_location(diag.location), diag.message, "", stack)
        if show_op:
            warn_once("MLIR_ENABLE_DIAGNOSTICS=operations upstream",
                      "MLIR_ENABLE_DIAGNOSTICS=operations: MLIR's Python bindings hand over no operation with a "
                      "diagnostic of an upstream pass or of the parser; its location is printed instead")
        for note in diag.notes:
            _print("note", format_location(note.location), note.message)
        return True

    handler = context.attach_diagnostic_handler(handle)
    try:
        yield
    finally:
        handler.detach()
