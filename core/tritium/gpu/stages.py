"""The stages every GPU backend shares: ``ttir`` (core passes, every call inlined), ``ttgir`` (layouts
assigned, :mod:`.assign`) and ``llir`` (the portable lowering with the backend's target hooks)."""
from __future__ import annotations

import sys
from typing import Any

from .. import knobs
from ..passes.pipeline import TTIR_PASSES, make_ttir, run_stage_passes

__all__ = ["TTIR_PASSES", "TTGIR_PASSES", "make_ttir", "make_ttgir", "make_llir"]

TTGIR_PASSES: tuple[str, ...] = ()


def make_ttgir(module: Any, metadata: dict, options: Any, backend: Any, target: Any) -> Any:
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

