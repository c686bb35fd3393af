"""What mma.sync and wgmma share: the accumulator fragment of one warp, the dot kind an op was planned with, and
the f16x2 registers of fp16 accumulators (two adjacent columns of the fragment in one 32-bit register).

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


def pack_half2(fn: Any, lo_x: str, hi_x: str) -> str:
    """One f16x2 (i32) register from two halves, ``lo_x`` in the low 16 bits (the first column of the pair)."""
    v = fn.inst(f"insertelement <2 x half> poison, half {lo_x}, i32 0")
    v = fn.inst(f"insertelement <2 x half> {v}, half {hi_x}, i32 1")
    return fn.inst(f"bitcast <2 x half> {v} to i32")


def unpack_half2(fn: Any, word: str) -> list[str]:
    """The two halves of an f16x2 (i32) register, low first."""
    v = fn.inst(f"bitcast i32 {word} to <2 x half>")
    return [fn.inst(f"extractelement <2 x half> {v}, i32 {i}") for i in range(2)]
