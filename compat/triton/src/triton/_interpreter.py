"""``triton.runtime.interpreter``: the class Triton gives ``@jit`` kernels under ``TRITON_INTERPRET=1``.

tritium has no separate class: any ``JITFunction`` runs in the interpreter (:mod:`tritium.interpreter`) while
``knobs.runtime.interpret`` is on (``TRITON_INTERPRET=1``) or its own ``interpret`` flag is set. So
``isinstance(fn, InterpretedFunction)`` asks exactly that (torch inductor asks, to learn how to call a kernel
in interpreter mode), and ``InterpretedFunction(fn)`` makes a kernel that always runs interpreted."""
from __future__ import annotations

from typing import Any

from tritium import knobs
from tritium.runtime.jit import JITFunction


class _RunsInterpreted(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, JITFunction) and bool(obj.interpret or knobs.runtime.interpret)


class InterpretedFunction(metaclass=_RunsInterpreted):
    def __new__(cls, fn: Any, **kwargs: Any) -> Any:  # type: ignore[misc]
        kernel = fn if isinstance(fn, JITFunction) else JITFunction(fn, **kwargs)
        kernel.interpret = True
        return kernel
