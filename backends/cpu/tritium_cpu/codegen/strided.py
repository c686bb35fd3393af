"""Blocks of pointers that a loop advances by one scalar each iteration (``a_ptrs += BLOCK_K * stride``).

They are carried as the initial block, kept lazy (its addresses stay affine in the element index, so loads
through it are contiguous vector loads), plus a scalar offset, instead of a buffer of pointers that every
iteration rewrites and every load reads back element by element."""
from __future__ import annotations

from typing import Any

from tritium._mlir import block_ops, ir

from .basic import addptr_node
from .context import Context
from .opinfo import pointee, type_info
from .tiles import Scalar, Splat, Tile


def strided_pointers(op: Any, block: Any, inits: list[Any], layout: list) -> list[int]:
    """Loop-carried blocks of pointers that each iteration advances by one scalar
    (``ptrs += BLOCK_K * stride``). They are carried as the initial block (lazy: its addresses stay
    affine, so loads through it are contiguous vector loads) plus a scalar offset, instead of a buffer of
    pointers rewritten every iteration and read back element by element."""
    if any(t is not None for t, _ in layout):
        return []
    out = []
    args = list(block.arguments)[1:]
    yield_op = block_ops(block)[-1]
    for k, (arg, y) in enumerate(zip(args, yield_op.operands)):
        init = inits[k]
        if not isinstance(init, Tile) or init.node.has_load() or not str(arg.type).startswith("tensor<"):
            continue
        if "!tt.ptr" not in str(arg.type):
            continue
        owner = y.owner
        name = getattr(owner, "name", None)
        if name != "tt.addptr" or owner.operands[0] != arg:
            continue
        inc = owner.operands[1].owner
        if getattr(inc, "name", None) not in ("tt.splat", "arith.constant"):
            continue
        if inc.name == "arith.constant":
            attr = inc.attributes["value"]
            if not isinstance(attr, ir.DenseElementsAttr) or not ir.DenseElementsAttr(attr).is_splat:
                continue
        out.append(k)
    return out


def offset_tile(value: Any, base: Any, offset: str) -> Any:
    shape = type_info(value.type)[0]
    return addptr_node(pointee(value.type), base, Splat(offset, shape, "i64"), "i64", shape)


def next_offset(ctx: Context, yielded: Any, offset: str) -> Any:
    """The offset after one more step: the scalar of the splat the yielded addptr adds."""
    inc_val = yielded.owner.operands[1]
    inc = ctx.get(inc_val)
    scalar = inc.node.value if isinstance(inc, Tile) else inc.value
    ty = inc.node.ty if isinstance(inc, Tile) else inc.ty
    wide = scalar if ty == "i64" else ctx.fn.inst(f"sext {ty} {scalar} to i64")
    return Scalar(ctx.fn.inst(f"add i64 {offset}, {wide}"), "i64")
