"""``triton.runtime.errors``: the runtime's error classes under Triton's module name."""
from __future__ import annotations

from typing import Optional

from tritium.compiler.errors import OutOfResources  # noqa: F401
from tritium.errors import TritonError
from tritium.runtime.autotuner import AutotunerError  # noqa: F401


class InterpreterError(TritonError):
    """Triton's interpreter wraps errors raised inside device functions in this class. tritium's interpreter
    reports them as CompilationError (with the kernel's source line) instead, and never raises this one."""

    def __init__(self, error_message: Optional[str] = None) -> None:
        self.error_message = error_message
        super().__init__(error_message or "")

    def __str__(self) -> str:
        return self.error_message or ""
