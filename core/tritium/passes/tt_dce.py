"""tt-dce: erase side-effect-free tile ops whose results are unused.

Upstream DCE treats IRDL-defined ops as having unknown effects and keeps them; this pass knows which tile
ops are pure (``tritium.dialect.PURE_OPS``).
"""
from __future__ import annotations

from typing import Any

from ..dialect import PURE_OPS
from ._util import all_ops, has_uses

_ALSO_PURE_PREFIXES = ("arith.", "math.")


def tt_dce(module: Any, ctx: Any = None) -> None:
    changed = True
    while changed:
        changed = False
        for op in reversed(all_ops(module)):
            name = op.name
            if (name in PURE_OPS or name.startswith(_ALSO_PURE_PREFIXES)) and not has_uses(op):
                nested = len(op.regions) > 0
                op.erase()
                changed = True
                if nested:
                    break  # the ops of its regions, still in the list, are gone too: walk again
