"""Where a pointer comes from: the kernel argument a pointer, block pointer or descriptor value is derived from.

Both code generators ask this before a store whose value may read the memory it overwrites (the CPU stages such
a tile, the GPU lowering puts a barrier before it): a load through another kernel argument is taken not to
overlap, as Triton's kernels assume.
"""
from __future__ import annotations

from typing import Any

from .._mlir import ir

#: ops whose first operand is the pointer (block pointer, descriptor, base) their result is derived from
DERIVED_OPS = frozenset({"tt.addptr", "tt.splat", "tt.broadcast", "tt.expand_dims", "tt.reshape", "tt.trans",
                         "tt.advance", "tt.make_block_ptr", "tt.make_tensor_descriptor", "tt.bitcast"})
#: the origin of a pointer loaded from memory, selected, or otherwise not followed
UNKNOWN = object()


def pointer_root(value: Any) -> Any:
    """``("arg", n)`` for a value derived from the kernel's ``n``-th argument through offsets, reshapes and
    loop-carried updates (``scf.for`` / ``scf.while`` block arguments followed to their initial values), else
    ``UNKNOWN``."""
    for _ in range(64):
        value = value.maybe_downcast() if hasattr(value, "maybe_downcast") else value
        if isinstance(value, ir.BlockArgument):
            parent = value.owner.owner
            name = parent.operation.name if parent is not None else ""   # (OpView.name may be a symbol)
            if name == "func.func":
                return ("arg", value.arg_number)
            if name == "scf.for" and value.arg_number >= 1:
                value = parent.operands[3 + value.arg_number - 1]     # a carried pointer's initial value
                continue
            if name == "scf.while" and parent.regions[0].blocks[0] == value.owner:
                value = parent.operands[value.arg_number]
                continue
            return UNKNOWN
        owner = value.owner
        if owner.operation.name in DERIVED_OPS:
            value = owner.operands[0]
            continue
        return UNKNOWN
    return UNKNOWN
