"""Saying once, clearly, that a debugging knob asks for something this build cannot do, instead of doing
nothing in silence."""
from __future__ import annotations

import re
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


def check_artifacts(files: dict, relocated: bool = False) -> None:
    """After a compilation: warn about debugging knobs whose effect is missing from the stages it produced.
    Decided from the artifacts, not from the backend's name, so a backend that emits debug info is not
    warned about."""
    texts = [v for v in files.values() if isinstance(v, str)]
    if knobs.compilation.dump_ir_extract_di_local_variables and not any("DILocalVariable" in t for t in texts):
        # the CPU and GPU code generators describe named values (tritium.line_info); a backend that does not,
        # a kernel without named run-time values, or TRITON_DISABLE_LINE_INFO=1 leave none
        warn_once("LLVM_EXTRACT_DI_LOCAL_VARIABLES",
                  "LLVM_EXTRACT_DI_LOCAL_VARIABLES is set, but the LLVM IR describes no variables (no DILocalVariable "
                  "records): this backend does not emit them, the kernel binds no run-time value to a name, or "
                  "TRITON_DISABLE_LINE_INFO=1 removed the locations they need. Use TRITON_INTERPRET=1 to step "
                  "through a kernel in Python instead.")
    stage = knobs.compilation.use_ir_loc
    if not relocated:
        return
    # the LLVM IR's line table (tritium.line_info) names the file its locations come from: after a
    # relocation that must be the stage's IR file, or the later stages do not map back to it
    pointed = re.compile(rf'!DIFile\(filename: "[^"]*\.{re.escape(stage)}"')
    if any(pointed.search(t) for t in texts):
        return
    if knobs.compilation.disable_line_info:
        warn_once(f"USE_IR_LOC={stage} no-llvm-locations",
                  f"USE_IR_LOC={stage}: the {stage} stage's locations now point at lines of its IR file, but "
                  "TRITON_DISABLE_LINE_INFO=1 keeps debug locations out of the LLVM IR, so the later stages (LLVM "
                  "IR and the machine code) do not map back to them")
    else:
        warn_once(f"USE_IR_LOC={stage} no-llvm-locations",
                  f"USE_IR_LOC={stage}: the {stage} stage's locations now point at lines of its IR file, but this "
                  "backend's LLVM IR carries no debug locations of that file, so the later stages (LLVM IR and the "
                  "machine code) do not map back to them")
