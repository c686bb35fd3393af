"""The stages every GPU backend shares: ``ttir`` (core passes, every call inlined), ``ttgir`` (layouts
assigned, :mod:`.assign`) and ``llir`` (the portable lowering with the backend's target hooks)."""
from __future__ import annotations

import sys
from typing import Any

from .. import knobs

TTIR_PASSES = ("inline", "tt-inline", "symbol-dce", "tt-combine", "canonicalize", "tt-cse", "cse", "tt-licm",
               "loop-invariant-code-motion", "tt-dce", "canonicalize")
TTGIR_PASSES: tuple[str, ...] = ()


def make_ttir(module: Any, metadata: dict, options: Any, backend: Any) -> Any:
    from ..passes._util import all_ops
    from ..passes.pipeline import run_stage_passes
    # device functions are inlined: a GPU program's tiles live in registers, which calls cannot pass
    for op in all_ops(module):
        if op.name == "func.call" and "no_inline" in op.attributes:
            del op.attributes["no_inline"]
    return run_stage_passes(module, "ttir", TTIR_PASSES, options, backend, metadata)


def make_ttgir(module: Any, metadata: dict, options: Any, backend: Any, target: Any) -> Any:
    from ..passes.pipeline import run_stage_passes
    from .assign import assign_layouts
    assign_layouts(module, target.policy(options.num_warps))
    if TTGIR_PASSES:
        run_stage_passes(module, "ttgir", TTGIR_PASSES, options, backend, metadata)
    return module


def make_llir(module: Any, metadata: dict, options: Any, target: Any) -> str:
    from .lower import lower_module
    text, meta = lower_module(module, target, options, metadata["name"])
    metadata.update(meta)
    if knobs.compilation.llvm_ir_dump:
        print(f"// -----// LLVM IR ({metadata['name']}) //----- //\n{text}", file=sys.stderr)
    return text


def llvm_opt_disabled() -> bool:
    from ..llvm_debug import opt_disabled
    return opt_disabled()
