"""tt-licm: move side-effect-free tile ops whose operands are all defined outside an ``scf.for`` (or
``scf.while``) body to just before the loop. Upstream loop-invariant code motion does this for arith and
math, but treats IRDL ops as having unknown effects."""
from __future__ import annotations

from typing import Any

from .._mlir import block_ops, ir
from ..dialect import PURE_OPS
from ._util import all_ops


def _inside(value: Any, loop: Any) -> bool:
    owner = value.owner
    op = owner.owner if isinstance(owner, ir.Block) else owner
    while op is not None:
        if op == loop:
            return True
        op = op.parent
    return False


def tt_licm(module: Any, ctx: Any = None) -> None:
    for loop in all_ops(module):
        if loop.name not in ("scf.for", ):
            continue
        body = loop.regions[0].blocks[0]
        moved = True
        while moved:
            moved = False
            for op in block_ops(body):
                if op.name not in PURE_OPS or len(op.regions):
                    continue
                if all(not _inside(v, loop) for v in op.operands):
                    op.move_before(loop)
                    moved = True
