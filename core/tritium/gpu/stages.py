"""The stages every GPU backend shares: ``ttir`` (core passes, every call inlined), ``ttgir`` (layouts
assigned, :mod:`.assign`) and ``llir`` (the portable lowering with the backend's target hooks)."""
from __future__ import annotations

import sys
from typing import Any

from .. import knobs
from ..passes.pipeline import TTIR_PASSES, make_ttir, run_stage_passes

__all__ = ["TTIR_PASSES", "TTGIR_PASSES", "make_ttir", "make_ttgir", "make_llir", "pipeline", "finish_options"]

TTGIR_PASSES: tuple[str, ...] = ()

# options that arrive as lists or dicts from users and configs; options objects are hashed into cache keys
_TUPLE_OPTIONS = ("allowed_dot_input_precisions", "supported_fp8_dtypes", "deprecated_fp8_dot_operand_dtypes",
                  "min_dot_size")


def pipeline(stage: str, split_dots: bool = False) -> tuple[str, ...]:
    """The pass pipeline of a shared GPU stage (``BaseBackend.pipeline``). ``split_dots``: the backend runs tf32 and
    bf16 tensor-core dots, so fp32 dots asked for as tf32x3/bf16x3/bf16x6 become several of them (tt-split-dot:
    after tt-combine has folded additions into the dots' accumulators, before CSE and LICM, which share and
    hoist the operand splits)."""
    if stage == "ttir" and split_dots:
        at = TTIR_PASSES.index("tt-combine") + 1
        return TTIR_PASSES[:at] + ("tt-split-dot", ) + TTIR_PASSES[at:]
    return {"ttir": TTIR_PASSES, "ttgir": TTGIR_PASSES}[stage]


def finish_options(opts: dict) -> dict:
    """Defaults every GPU backend applies after its own (fp fusion, overflow sanitizing from the knobs), and
    list/dict options made hashable."""
    if "enable_fp_fusion" not in opts:
        opts["enable_fp_fusion"] = knobs.language.default_fp_fusion
    if knobs.compilation.sanitize_overflow:
        opts.setdefault("sanitize_overflow", True)
    for k in _TUPLE_OPTIONS:
        if k in opts:
            opts[k] = tuple(opts[k])
    if isinstance(opts.get("extern_libs"), dict):
        opts["extern_libs"] = tuple(sorted(opts["extern_libs"].items()))
    return opts


def make_ttgir(module: Any, metadata: dict, options: Any, backend: Any, target: Any) -> Any:
    from .assign import assign_layouts
    from .cluster_split import split_cluster
    split_cluster(module, options)
    assign_layouts(module, target.policy(options.num_warps))
    with module.context:
        from .._mlir import ir
        module.operation.attributes["ttg.target"] = ir.StringAttr.get(backend.target_name(options))
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

