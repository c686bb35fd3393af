"""Core's target-independent passes, one per file, each registered under its name by the core plugin.

The Python passes are registered with :func:`tritium.hookspecs.lazy`, so listing them imports no MLIR.
"""
from __future__ import annotations

from typing import Any

from ..hookspecs import PassSpec, lazy

UPSTREAM = {
    "canonicalize": "upstream MLIR canonicalization (folds arith/math/scf on tensors)",
    "cse": "upstream MLIR common subexpression elimination",
    "inline": "upstream MLIR inliner: inlines calls to @jit device functions (except noinline ones)",
    "symbol-dce": "upstream MLIR: remove unused private functions",
    "loop-invariant-code-motion": "upstream MLIR: hoist loop-invariant pure ops out of scf loops",
    "sccp": "upstream MLIR sparse conditional constant propagation",
}

#: name -> (module:function, doc). The file, the function and the IR test (tests/ir/<name>.mlir) share the name.
PYTHON = {
    "tt-dce": ("tritium.passes.tt_dce:tt_dce",
               "remove tile ops whose results are unused and that have no side effects"),
    "tt-cse": ("tritium.passes.tt_cse:tt_cse", "merge identical side-effect-free tile ops in the same block"),
    "tt-combine": ("tritium.passes.tt_combine:tt_combine",
                   "algebraic rewrites of tile ops (splat/broadcast folding, addptr chains, dot accumulation)"),
    "tt-licm": ("tritium.passes.tt_licm:tt_licm", "hoist loop-invariant side-effect-free tile ops out of scf.for"),
    "tt-split-dot": ("tritium.passes.tt_split_dot:tt_split_dot",
                     "fp32 dots with input_precision tf32x3/bf16x3/bf16x6 as 3 or 6 tensor-core dots of split operands "
                     "(GPU backends with such dots put it in their ttir pipeline)"),
    "tt-inline": ("tritium.passes.tt_inline:tt_inline",
                  "inline @jit device functions whose tile ops upstream `inline` refuses (except noinline calls)"),
}


def all_ops(module: Any, *names: str) -> list[Any]:
    """Every operation nested in ``module`` (innermost first), or only those named ``names``; a list, so a
    pass may erase or replace operations while it goes through it."""
    from ._util import all_ops as _all
    ops = _all(module)
    return [op for op in ops if op.name in names] if names else ops


def core_passes() -> list[PassSpec]:
    out = [PassSpec(name, name, doc) for name, doc in UPSTREAM.items()]
    out += [PassSpec(name, lazy(path), doc) for name, (path, doc) in PYTHON.items()]
    return out
