"""What mma.sync and wgmma share: the accumulator fragment of one warp and the dot kind an op was planned with.

Below mma.py (which plans dots and hands Hopper's to wgmma.py) and wgmma.py (whose accumulator is the mma.sync
one per warp), so that neither imports the other's module for them.
"""
from __future__ import annotations

from typing import Any

Bases = tuple[tuple[int, int], ...]

# accumulator fragment, the same for every kind: c0,c1 at (g, 2t + {0,1}), c2,c3 at (g + 8, ...)
C_REG: Bases = ((0, 1), (8, 0))
C_LANE: Bases = ((0, 2), (0, 4), (1, 0), (2, 0), (4, 0))


def lo_kind(op: Any) -> str:
    """The dot kind (``f16``, ``e4m3``, ...) the layout pass chose for ``op``, from its ``ttg.dot`` plan."""
    from tritium._mlir import ir
    return ir.StringAttr(op.attributes["ttg.dot"]).value.split(".", 1)[1]
