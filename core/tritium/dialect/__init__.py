"""The tile dialect ``tt``: types and operations of tritium's target-independent IR.

The dialect is declared in Python (:mod:`tritium.dialect.ops`) and loaded into MLIR through IRDL.
Elementwise arithmetic, math, control flow and functions use the upstream ``arith``, ``math``,
``scf`` and ``func`` dialects on ranked tensors, so upstream passes (canonicalize, cse, inline,
loop-invariant code motion) apply to them directly.
"""
from .ops import OPS, OpDef, PURE_OPS, irdl_source  # noqa: F401
