"""Core's target-independent passes, one per file, each registered under its name by the core plugin."""
from __future__ import annotations

from ..hookspecs import PassSpec

UPSTREAM = {
    "canonicalize": "upstream MLIR canonicalization (folds arith/math/scf on tensors)",
    "cse": "upstream MLIR common subexpression elimination",
    "inline": "upstream MLIR inliner: inlines calls to @jit device functions (except noinline ones)",
    "symbol-dce": "upstream MLIR: remove unused private functions",
    "loop-invariant-code-motion": "upstream MLIR: hoist loop-invariant pure ops out of scf loops",
    "sccp": "upstream MLIR sparse conditional constant propagation",
}


def core_passes() -> list[PassSpec]:
    from .tt_combine import tt_combine
    from .tt_cse import tt_cse
    from .tt_dce import tt_dce
    from .tt_licm import tt_licm
    out = [PassSpec(name, name, doc) for name, doc in UPSTREAM.items()]
    out += [
        PassSpec("tt-dce", tt_dce, "remove tile ops whose results are unused and that have no side effects"),
        PassSpec("tt-cse", tt_cse, "merge identical side-effect-free tile ops in the same block"),
        PassSpec("tt-combine", tt_combine, "algebraic rewrites of tile ops (splat/broadcast folding, "
                 "addptr chains, dot accumulation)"),
        PassSpec("tt-licm", tt_licm, "hoist loop-invariant side-effect-free tile ops out of scf.for"),
    ]
    return out
