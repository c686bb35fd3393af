"""An estimate of the registers one thread of a lowered kernel needs.

The lowering gives each thread ``layout.num_regs`` SSA values per tile (values.py); the target's register
allocator (the GPU assembler, or the host's LLVM for the emulator) decides the real count. Targets that cannot
report that count (the emulator's threads run on host registers and stack) report this estimate, so that host code
sizing grids from ``kernel.n_regs`` works: the most 32-bit words that the kernel's values hold at once, with a
value live from its definition to its last use in the same block (a use inside a nested region counts as a use
by the op that holds the region). It is only an estimate, off both ways: temporaries the lowering makes inside
one op (shuffled copies, partial sums) are not counted, while values a register allocator would recompute
instead of keeping (index tiles, masks, pointer tiles) are counted for their whole lifetime; a 16-element f32 row
per thread of a masked softmax comes to about 110.
"""
from __future__ import annotations

from typing import Any

from ..._mlir import ir
from ..assign import element_bytes, element_type
from .context import Context


def _words(lowering: Context, v: Any) -> int:
    """32-bit registers per thread holding ``v``: every element of a tile takes its own register (sub-word types
    included, as without packing), 64-bit types and pointers take two."""
    per = max(1, (element_bytes(element_type(v.type)) + 3) // 4)
    if isinstance(v.type, ir.RankedTensorType):
        return lowering.layout_of(v).num_regs * per
    return per


def _uses(op: Any) -> list[Any]:
    """The values ``op`` and the ops nested in its regions read."""
    out: list[Any] = []

    def visit(o: Any) -> Any:
        out.extend(o.operands)
        return ir.WalkResult.ADVANCE

    op.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return out


def _block_peak(lowering: Context, block: Any) -> int:
    ops = [o.operation for o in block.operations]
    start: dict[Any, int] = {a: 0 for a in block.arguments}
    for i, op in enumerate(ops):
        for r in op.results:
            start[r] = i
    end = dict(start)
    for i, op in enumerate(ops):
        for v in _uses(op):
            if v in end:
                end[v] = i
    # live words at op i, by a sweep over the values' [start, end] intervals
    delta = [0] * (len(ops) + 1)
    for v, s in start.items():
        w = _words(lowering, v)
        delta[s] += w
        delta[end[v] + 1] -= w
    peak = live = 0
    for i, op in enumerate(ops):
        live += delta[i]
        inner = max((_block_peak(lowering, b) for r in op.regions for b in r.blocks), default=0)
        peak = max(peak, live + inner)
    return peak


def estimate_registers(lowering: Context, func: Any) -> int:
    """The estimate described above for the kernel function ``func`` lowered by ``lowering`` (at least 1)."""
    return max(1, max((_block_peak(lowering, b) for r in func.regions for b in r.blocks), default=0))
