"""TRITON_REPRODUCER_PATH: before every pass run, the IR and the passes about to run are written to that
path, in MLIR's reproducer format (the IR, then an ``external_resources`` section whose ``mlir_reproducer``
entry holds the pipeline). When a pass fails, the file therefore holds the IR right before that pass, and
``tritium-opt --reproduce FILE`` runs the same pass on it again, with the same stage and kernel name in its
context, so the failure shows up outside the kernel's program.

A second entry, ``tritium_reproducer``, records what tritium needs to replay: its own pass names (a Python
pass has no upstream spelling), the stage, the kernel name and the backend. ``mlir-opt --run-reproducer``
understands the format; it can replay the file only when every op and pass in it is upstream MLIR.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Any, Sequence

_SECTION = re.compile(r"\{-#(.*?)#-\}\s*\Z", re.S)


@dataclass
class Reproducer:
    ir: str
    passes: list[str]
    stage: str = "opt"
    kernel: str = ""
    backend: str = ""


def _quote(text: str) -> str:
    # MLIR string literals take the same escapes as JSON for printable ASCII
    return json.dumps(text)


def render(ir_text: str, mlir_pipeline: Sequence[str], passes: Sequence[str], stage: str, kernel: str,
           backend: str) -> str:
    entries = (f"    mlir_reproducer: {{\n"
               f"      pipeline: {_quote('builtin.module(' + ','.join(mlir_pipeline) + ')')},\n"
               f"      disable_threading: true,\n"
               f"      verify_each: true\n"
               f"    }},\n"
               f"    tritium_reproducer: {{\n"
               f"      passes: {_quote(json.dumps(list(passes)))},\n"
               f"      stage: {_quote(stage)},\n"
               f"      kernel: {_quote(kernel)},\n"
               f"      backend: {_quote(backend)}\n"
               f"    }}")
    body = ir_text.rstrip()
    m = _SECTION.search(body)
    if m is not None:
        # MLIR allows one metadata section per file: add ours to the one the printer wrote
        inner = m.group(1).rstrip().rstrip(",")
        return f"{body[:m.start()]}{{-#{inner},\n  external_resources: {{\n{entries}\n  }}\n#-}}\n"
    return f"{body}\n\n{{-#\n  external_resources: {{\n{entries}\n  }}\n#-}}\n"


def write(path: str, module: Any, mlir_pipeline: Sequence[str], passes: Sequence[str], stage: str, kernel: str,
          backend: str) -> None:
    text = render(module.operation.get_asm(enable_debug_info=True), mlir_pipeline, passes, stage, kernel,
                  backend)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)   # never leave a half-written reproducer for the replay to trip over


def _field(section: str, group: str, key: str) -> str | None:
    # strings may hold braces (pass options): look for the key after the group's start, not inside {...}
    start = re.search(group + r"\s*:\s*\{", section)
    if start is None:
        return None
    m = re.compile(r"\b" + key + r'\s*:\s*("(?:[^"\\]|\\.)*")').search(section, start.end())
    return json.loads(m.group(1)) if m else None


def read(text: str) -> Reproducer:
    """Split a reproducer into the IR (with the section removed) and what to run on it."""
    m = re.search(r"\{-#(.*?)#-\}\s*\Z", text, re.S)
    if m is None or "mlir_reproducer" not in m.group(1):
        raise ValueError("not a reproducer: no {-# external_resources: { mlir_reproducer: ... } #-} section "
                         "at the end of the file")
    section = m.group(1)
    passes_text = _field(section, "tritium_reproducer", "passes")
    if passes_text is None:
        raise ValueError("not a tritium reproducer: no tritium_reproducer entry naming the passes (a plain MLIR "
                         "reproducer runs with mlir-opt --run-reproducer)")
    ir_text = text[:m.start()]
    others = re.sub(r"external_resources\s*:\s*\{.*\}\s*,?", "", section, flags=re.S).strip().strip(",").strip()
    if others:
        ir_text += "{-#\n" + others + "\n#-}\n"   # the printer's own sections (dialect resources) stay
    return Reproducer(ir=ir_text, passes=list(json.loads(passes_text)),
                      stage=_field(section, "tritium_reproducer", "stage") or "opt",
                      kernel=_field(section, "tritium_reproducer", "kernel") or "",
                      backend=_field(section, "tritium_reproducer", "backend") or "")
