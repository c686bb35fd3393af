"""A loop being lowered: where its preheader is, the shared buffers live through it (see
:meth:`.context.Context.loop_buffer`), what was made once per run of it."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ..._mlir import ir


@dataclass
class LoopFrame:
    op: Any
    start: int                  # the allocator's clock at the loop's entry
    pre: Optional[str]          # the preheader: the last block before the loop (None: no hoisting)
    buffers: list = field(default_factory=list)
    memo: dict = field(default_factory=dict)      # what was made once per run of the loop, by key
    on_exit: list = field(default_factory=list)   # emitters run after the loop, before its buffers close


def defined_inside(v: Any, loop: Any) -> bool:
    owner = v.owner
    op = owner.owner if isinstance(owner, ir.Block) else owner
    target = loop.operation
    while op is not None:
        op = op.operation if hasattr(op, "operation") else op
        if op == target:
            return True
        op = op.parent
    return False
