"""``device_print`` and ``device_assert`` on a GPU.

Print: one line per element, written by the thread holding its first copy (scalars: by thread 0), in
the format the CPU backend uses: ``pid (x, y, z) idx (i, j) <prefix><values>``.

Assert: a failing element records (program id, element, message number) in the kernel's global
``<kernel>_assert_state`` (the first failure wins) and prints CUDA's usual line; the kernel runs on, and
the launcher reads the state after the launch and raises an error naming the kernel, the program and
the message. Unlike a trap, this leaves the device context usable.
"""
from __future__ import annotations

import re
from typing import Any

from ..._mlir import ir
from ..assign import tensor_shape
from ...llvmir.types import BYTES
from ..target import guarded
from .context import Context
from .optable import GPU_OPS
from .values import Scalar

ASSERT_FIELDS = 6    # failed, pid x, pid y, pid z, message index, element index (all i32)


def location(op: Any) -> tuple[str, int, str]:
    m = re.search(r'loc\("([^"]*)":(\d+):(\d+)\)', str(op.location))
    return (m.group(1), int(m.group(2)), "") if m else ("<unknown>", 0, "")


@GPU_OPS.lowers("tt.print")
def op_print(ctx: Context, op: Any) -> None:
    ctx.has_print = True
    fn = ctx.fn
    prefix = ir.StringAttr(op.attributes["prefix"]).value if "prefix" in op.attributes else ""
    hexa = "hex" in op.attributes and ir.BoolAttr(op.attributes["hex"]).value
    signed = list(ir.DenseI32ArrayAttr(op.attributes["is_signed"])) if "is_signed" in op.attributes else []
    operands = list(op.operands)
    lay = None
    for v in operands:
        if tensor_shape(v.type) is not None:
            lay = ctx.layouts.get(v) or ctx.tensor(v).layout
            break
    vals = [ctx.tensor_in(v, lay) if lay is not None and tensor_shape(v.type) is not None else ctx.values[v]
            for v in operands]
    formats = [_fmt(x.ty, hexa, bool(signed[k]) if k < len(signed) else True) for k, x in enumerate(vals)]
    shape = lay.shape if lay is not None else ()
    idx_fmt = ", ".join(["%*d"] * len(shape))
    text = f"pid (%d, %d, %d) idx ({idx_fmt}){prefix}" + ", ".join(formats) + "\n"
    widths = [len(str(max(s - 1, 0))) for s in shape]
    pids = [ctx.target.program_id(fn, a) for a in range(3)]

    def line(r: int) -> None:
        args = [("i32", p) for p in pids]
        for d, w in enumerate(widths):
            args += [("i32", str(w)), ("i32", ctx.coord(lay, r, d))]
        for k, x in enumerate(vals):
            v = x.value if isinstance(x, Scalar) else x.regs[r]
            args.append(_promote(fn, v, x.ty, bool(signed[k]) if k < len(signed) else True))
        ctx.target.printf(fn, ctx.module, text, args)

    if lay is None:
        guarded(fn, ctx.unique_pred(None), lambda: line(0))
        return
    guarded(fn, ctx.unique_pred(lay), lambda: [line(r) for r in lay.unique_regs()])


def assert_state(ctx: Context) -> str:
    name = f"@{ctx.name}_assert_state"
    if not any(g.startswith(name + " ") for g in ctx.module.globals):
        space = ctx.target.global_addrspace
        ctx.module.globals.append(f"{name} = {'addrspace(%d) ' % space if space else ''}global "
                                   f"[{ASSERT_FIELDS} x i32] zeroinitializer, align 8")
    return name


@GPU_OPS.lowers("tt.assert")
def op_assert(ctx: Context, op: Any) -> None:
    ctx.has_assert = True
    fn = ctx.fn
    state = assert_state(ctx)
    msg = ir.StringAttr(op.attributes["message"]).value if "message" in op.attributes else ""
    file, line, _ = location(op)
    ctx.assert_messages.append(f"{file}:{line}: {msg}")
    index = len(ctx.assert_messages) - 1
    space = ctx.target.global_addrspace
    pt = f"ptr addrspace({space})" if space else "ptr"
    pids = [ctx.target.program_id(fn, a) for a in range(3)]
    text = f"{file}:{line}: block: [%d,%d,%d], thread: [%d,0,0] Assertion `{msg}` failed.\n"
    cond_v = op.operands[0]

    def fail(linear: str) -> None:
        pair = fn.inst(f"cmpxchg {pt} {state}, i32 0, i32 1 acq_rel monotonic")
        won = fn.inst(f"extractvalue {{ i32, i1 }} {pair}, 1")

        def record() -> None:
            for k, v in enumerate(pids + [str(index), linear]):
                p = fn.inst(f"getelementptr [{ASSERT_FIELDS} x i32], {pt} {state}, i32 0, i32 {k + 1}")
                fn.emit(f"store volatile i32 {v}, {pt} {p}, align 4")
        guarded(fn, won, record)
        ctx.target.printf(fn, ctx.module, text, [("i32", p) for p in pids] + [("i32", ctx.tid)])

    if tensor_shape(cond_v.type) is None:
        bad = fn.inst(f"xor i1 {ctx.scalar_of(cond_v).value}, true")
        guarded(fn, bad, lambda: fail("0"))
        return
    t = ctx.tensor(cond_v)
    for r in t.layout.unique_regs():
        bad = fn.inst(f"xor i1 {t.regs[r]}, true")
        guarded(fn, bad, lambda r=r: fail(ctx.linear_index(t.layout, r, t.layout.shape)))


def _fmt(ty: str, hexa: bool, signed: bool) -> str:
    if ty in ("half", "bfloat", "float", "double"):
        return "%a" if hexa else "%f"
    if ty.startswith("ptr"):
        return "%p"
    if hexa:
        return "0x%llx"
    return "%lld" if signed else "%llu"


def _promote(fn: Any, v: str, ty: str, signed: bool) -> tuple[str, str]:
    if ty in ("half", "bfloat", "float"):
        return "double", fn.inst(f"fpext {ty} {v} to double")
    if ty == "double":
        return "double", v
    if ty.startswith("ptr"):
        return "i64", fn.inst(f"ptrtoint {ty} {v} to i64")
    if ty == "i64":
        return "i64", v
    ext = "sext" if signed and ty != "i1" else "zext"
    return "i64", fn.inst(f"{ext} {ty} {v} to i64")


_ = BYTES
