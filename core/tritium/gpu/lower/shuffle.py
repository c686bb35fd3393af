"""A warp shuffle of a value of any scalar type, through the target's 32-bit shuffle (64-bit values and pointers
travel as two halves)."""
from __future__ import annotations

from ...llvmir.text import Function
from .context import Context


def shuffle(ctx: Context, kind: str, v: str, ty: str, operand: str) -> str:
    fn: Function = ctx.fn
    sh = lambda x: ctx.target.shuffle_i32(fn, kind, x, operand)  # noqa: E731
    if ty == "i32":
        return sh(v)
    if ty == "float":
        return fn.inst(f"bitcast i32 {sh(fn.inst(f'bitcast float {v} to i32'))} to float")
    if ty in ("i1", "i8", "i16"):
        return fn.inst(f"trunc i32 {sh(fn.inst(f'zext {ty} {v} to i32'))} to {ty}")
    if ty in ("half", "bfloat"):
        i = fn.inst(f"bitcast {ty} {v} to i16")
        r = fn.inst(f"trunc i32 {sh(fn.inst(f'zext i16 {i} to i32'))} to i16")
        return fn.inst(f"bitcast i16 {r} to {ty}")
    # 64-bit values (and pointers) travel as two halves
    i = fn.inst(f"ptrtoint {ty} {v} to i64") if ty.startswith("ptr") else \
        (fn.inst(f"bitcast {ty} {v} to i64") if ty != "i64" else v)
    lo = sh(fn.inst(f"trunc i64 {i} to i32"))
    hi = sh(fn.inst(f"trunc i64 {fn.inst(f'lshr i64 {i}, 32')} to i32"))
    lo64 = fn.inst(f"zext i32 {lo} to i64")
    hi64 = fn.inst(f"zext i32 {hi} to i64")
    hi64 = fn.inst(f"shl i64 {hi64}, 32")
    w = fn.inst(f"or i64 {lo64}, {hi64}")
    if ty.startswith("ptr"):
        return fn.inst(f"inttoptr i64 {w} to {ty}")
    return fn.inst(f"bitcast i64 {w} to {ty}") if ty != "i64" else w
