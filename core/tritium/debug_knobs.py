"""Saying once, clearly, that a debugging knob asks for something this build cannot do, instead of doing
nothing in silence."""
from __future__ import annotations

import warnings

from . import knobs


class DebugKnobWarning(UserWarning):
    """A debugging knob is set that tritium (or the LLVM/MLIR it runs on) cannot honour, fully or at all."""


_said: set[str] = set()


def warn_once(key: str, message: str) -> None:
    if key in _said:
        return
    _said.add(key)
    warnings.warn(message, DebugKnobWarning, stacklevel=3)


def check_unsupported() -> None:
    """Called once per compilation: warn about the knobs that have no effect here."""
    if knobs.compilation.dump_ir_extract_di_local_variables:
        warn_once("LLVM_EXTRACT_DI_LOCAL_VARIABLES",
                  "LLVM_EXTRACT_DI_LOCAL_VARIABLES is set, but tritium's backends emit no LLVM debug metadata "
                  "(no DISubprogram/DILocalVariable records): kernel variables cannot be inspected in a "
                  "debugger. Use TRITON_INTERPRET=1 to step through a kernel in Python instead.")
