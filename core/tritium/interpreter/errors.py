"""Errors the interpreter raises at run time, and how they find the kernel's source line."""
from __future__ import annotations

import sys
import types
from typing import Any, Optional

import numpy as np

from ..compiler.errors import CompilationError
from ..errors import TritonError
from .memory import OutOfBounds
from .rewrite import KERNEL_CODES


class InterpreterError(TritonError):
    """Triton's class for errors of kernels its interpreter runs (``triton.runtime.errors.InterpreterError``)."""

    def __init__(self, error_message: Optional[str] = None, *args: Any) -> None:
        if not hasattr(self, "error_message"):  # CompilationError sets its own before calling up
            self.error_message = error_message
        super().__init__(error_message or "", *args)


class InterpretedKernelError(CompilationError, InterpreterError):
    """A user error in an interpreted kernel: reported as the compiler reports it (kernel, line, caret), and an
    InterpreterError too, which is what Triton's interpreter raises (its tests expect that class)."""


class OutOfBoundsError(IndexError):
    """A load, store or atomic touched memory outside the argument its pointer was derived from."""


class DeviceAssertionError(AssertionError):
    """A ``tl.device_assert`` (or an ``assert`` on a tensor) failed in an interpreted kernel."""


class Location:
    __slots__ = ("fn", "filename", "lineno", "col", "end_col", "end_lineno")

    def __init__(self, fn: Any, filename: str, lineno: int, col: Optional[int] = None, end_col: Optional[int] = None,
                 end_lineno: Optional[int] = None) -> None:
        self.fn, self.filename, self.lineno = fn, filename, lineno
        self.col, self.end_col, self.end_lineno = col, end_col, end_lineno

    def __str__(self) -> str:
        return f"{self.filename}:{self.lineno}"

    def source_line(self) -> str:
        lines = self.fn.src.splitlines()
        i = self.lineno - self.fn.first_line
        return lines[i].strip() if 0 <= i < len(lines) else ""

    def ast_node(self) -> Any:
        """A stand-in AST node, relative to the function's source, for CompilationError's caret."""
        rel = self.lineno - self.fn.first_line + 1
        src_lines = self.fn.src.splitlines()
        col = self.col
        if col is None:
            text = src_lines[rel - 1] if 0 < rel <= len(src_lines) else ""
            col = len(text) - len(text.lstrip())
            end = len(text)
        else:
            # columns in the compiled code are those of the dedented source, which fn.src is
            end = self.end_col if self.end_col is not None and self.end_lineno == self.lineno else col + 1
        return types.SimpleNamespace(lineno=rel, col_offset=col, end_lineno=rel, end_col_offset=end)


def _location(frame: types.FrameType, lasti: int, lineno: int) -> Location:
    fn = KERNEL_CODES[frame.f_code]
    col = end_col = end_line = None
    try:
        pos = list(frame.f_code.co_positions())[lasti // 2]
        if pos[0] == lineno:
            end_line, col, end_col = pos[1], pos[2], pos[3]
    except (IndexError, AttributeError):
        pass
    return Location(fn, frame.f_code.co_filename, lineno, col, end_col, end_line)


def location_in_traceback(tb: Optional[types.TracebackType]) -> Optional[Location]:
    """The innermost kernel (or device function) line of a traceback."""
    found = None
    while tb is not None:
        if tb.tb_frame.f_code in KERNEL_CODES:
            found = _location(tb.tb_frame, tb.tb_lasti, tb.tb_lineno)
        tb = tb.tb_next
    return found


def current_location() -> Optional[Location]:
    """The innermost kernel line on the current call stack."""
    f = sys._getframe(1)
    while f is not None:
        if f.f_code in KERNEL_CODES:
            return _location(f, f.f_lasti, f.f_lineno)
        f = f.f_back
    return None


def _offsets_text(values: np.ndarray, limit: int = 8) -> str:
    vals = [int(v) for v in values[:limit]]
    text = ", ".join(str(v) for v in vals)
    if values.size > limit:
        text += f", ... ({values.size} in all, up to {int(values.max())})"
    return text


def out_of_bounds_message(exc: OutOfBounds, kernel: str, where: Optional[Location], pid: tuple[int, ...],
                          program_lanes: np.ndarray) -> str:
    """``program_lanes``: indices into ``exc.offsets`` of the reported program's bad lanes."""
    what = exc.kind if exc.kind.startswith("atomic") else f"{exc.kind}"
    head = f"out-of-bounds {what} in kernel `{kernel}`"
    if where is not None:
        if where.fn.__name__ != kernel:
            head += f" (in `{where.fn.__name__}`)"
        head += f" at {where}"
    head += f", program id {pid}"
    lines = [head + ":"]
    if where is not None and where.source_line():
        lines.append("    " + where.source_line())
    per_program = int(np.prod(exc.shape[1:])) if len(exc.shape) > 1 else 1
    n_bad = program_lanes.size
    lanes = "lane" if per_program == 1 else "lanes"
    enabled = "that the mask enables" if exc.masked else "(the access has no mask)"
    offs = exc.offsets[program_lanes]
    region = exc.region
    if region is None:
        lines.append(f"{n_bad} of the {per_program} {lanes} {enabled} point into no argument and no live array: "
                     f"addresses {', '.join(hex(int(a)) for a in offs[:4])} (a null pointer, an integer made into a "
                     "pointer, or the address of an array that was freed)")
    else:
        size = exc.size
        first = -(region.data_off // size)
        last = (region.nbytes - region.data_off) // size - 1
        aligned = bool(np.all(offs % size == 0))
        shown = offs // size if aligned else offs
        unit = "element offsets" if aligned else "byte offsets"
        verb = "falls" if n_bad == 1 else "fall"
        # a host interval (negative index) is no argument: the pointer was a real address of a live array
        owner = f"argument `{region.name}`" if region.index > 0 else region.name
        lines.append(f"the pointer was derived from {owner} ({region.desc}); {n_bad} of the "
                     f"{per_program} {lanes} {enabled} {verb} outside it")
        valid = f"{first} to {last}" if region.nbytes >= size else "none: the argument is empty"
        lines.append(f"{unit} from the argument's first element: {_offsets_text(shown)} (valid: {valid})")
    lines.append("Fix the offsets, or mask the access (e.g. mask=offs < n); masked-off lanes are never checked. "
                 "TRITIUM_INTERPRET_BOUNDS_CHECK=0 turns the check off.")
    return "\n".join(lines)
