"""``triton.runtime.errors``: the runtime's error classes under Triton's module name."""
from __future__ import annotations

from tritium.compiler.errors import OutOfResources  # noqa: F401
from tritium.errors import TritonError  # noqa: F401
from tritium.interpreter.errors import InterpreterError  # noqa: F401  (tritium's interpreter raises subclasses)
from tritium.runtime.autotuner import AutotunerError  # noqa: F401
