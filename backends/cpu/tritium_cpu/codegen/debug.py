"""``tl.device_print`` and ``tl.device_assert`` on the CPU: printf from the program; a failed assertion is
recorded (first failure wins) in a global that the launcher reads after the launch."""
from __future__ import annotations

from typing import Any

from tritium._mlir import ir

from .context import Context
from .opinfo import location, str_attr, type_info
from .optable import CPU_OPS
from .tiles import Evaluator, linear_index, loop_nest


@CPU_OPS.lowers("tt.print")
def print_(ctx: Context, op: Any) -> None:
    ctx.has_print = True
    args = [(ctx.consume(v), v) for v in op.operands]
    ctx.flush_pending()
    prefix = str_attr(op, "prefix")
    hexa = "hex" in op.attributes and ir.BoolAttr(op.attributes["hex"]).value
    signed = list(ir.DenseI32ArrayAttr(op.attributes["is_signed"])) if "is_signed" in op.attributes else []
    fn = ctx.fn
    ctx.module.declare("printf", "declare i32 @printf(ptr, ...)")
    shape: tuple[int, ...] = ()
    for a, v in args:
        s = type_info(v.type)[0]
        if s is not None:
            shape = s
    formats, conv = [], []
    for k, (a, v) in enumerate(args):
        lt = type_info(v.type)[1]
        formats.append(_fmt(lt, hexa, bool(signed[k]) if k < len(signed) else True))
        conv.append((a, lt, bool(signed[k]) if k < len(signed) else True))
    idx_fmt = ", ".join(["%*d"] * len(shape))
    text = f"pid (%d, %d, %d) idx ({idx_fmt}){prefix}" + ", ".join(formats) + "\n"
    gs = ctx.module.string(text)
    widths = [len(str(max(s - 1, 0))) for s in shape]

    def body(idx: list[str]) -> None:
        ev = Evaluator(fn)
        parts = ["i32 %pid0", "i32 %pid1", "i32 %pid2"]
        for w, i in zip(widths, idx):
            ii = fn.inst(f"trunc i64 {i} to i32") if i.startswith("%") else i
            parts += [f"i32 {w}", f"i32 {ii}"]
        for a, lt, sg in conv:
            v = ev.value(ctx.as_node(a, shape), idx) if shape else a.value
            parts.append(_vararg(fn, v, lt, sg))
        fn.emit(f"call i32 (ptr, ...) @printf(ptr {gs}, {', '.join(parts)})")

    if shape:
        loop_nest(fn, shape, body)
    else:
        body([])


@CPU_OPS.lowers("tt.assert")
def assert_(ctx: Context, op: Any) -> None:
    ctx.has_assert = True
    cond = ctx.consume(op.operands[0])
    ctx.flush_pending()
    msg = str_attr(op, "message")
    where = location(op)
    state = f"@{ctx.name}_assert_state"
    if not any(g.startswith(state + " ") for g in ctx.module.globals):
        # failed flag, pid x/y/z, element index, message
        ctx.module.globals.append(f"{state} = global {{ i32, i32, i32, i32, i64, ptr }} zeroinitializer, "
                                   "align 8")
    gmsg = ctx.module.string(f"{where}: {msg}")
    shape = type_info(op.operands[0].type)[0]
    fn = ctx.fn

    def record(linear: str) -> None:
        pair = fn.inst(f"cmpxchg ptr {state}, i32 0, i32 1 acq_rel acquire")
        won = fn.inst(f"extractvalue {{ i32, i1 }} {pair}, 1")

        def fill() -> None:
            for k, v in enumerate(["%pid0", "%pid1", "%pid2"]):
                p = fn.inst(f"getelementptr inbounds {{ i32, i32, i32, i32, i64, ptr }}, ptr {state}, i32 0, "
                            f"i32 {k + 1}")
                fn.emit(f"store i32 {v}, ptr {p}, align 4")
            p = fn.inst(f"getelementptr inbounds {{ i32, i32, i32, i32, i64, ptr }}, ptr {state}, i32 0, i32 4")
            fn.emit(f"store i64 {linear}, ptr {p}, align 8")
            p = fn.inst(f"getelementptr inbounds {{ i32, i32, i32, i32, i64, ptr }}, ptr {state}, i32 0, i32 5")
            fn.emit(f"store ptr {gmsg}, ptr {p}, align 8")
        ctx.guarded(won, fill)

    if shape is None:
        bad = fn.inst(f"xor i1 {cond.value}, true")
        ctx.guarded(bad, lambda: record("0"))
        return
    node = cond.node

    def body(idx: list[str]) -> None:
        ev = Evaluator(fn)
        c = ev.value(node, idx)
        bad = fn.inst(f"xor i1 {c}, true")
        ctx.guarded(bad, lambda: record(linear_index(fn, shape, idx)))

    loop_nest(fn, shape, body)


def _fmt(lt: str, hexa: bool, signed: bool) -> str:
    if lt in ("half", "bfloat", "float", "double"):
        return "%a" if hexa else "%f"
    if lt == "ptr":
        return "%p"
    if hexa:
        return "0x%llx"
    return "%lld" if signed else "%llu"


def _vararg(fn: Any, v: str, lt: str, signed: bool) -> str:
    if lt in ("half", "bfloat", "float"):
        return f"double {fn.inst(f'fpext {lt} {v} to double')}"
    if lt == "double":
        return f"double {v}"
    if lt == "ptr":
        return f"ptr {v}"
    if lt == "i64":
        return f"i64 {v}"
    ext = "sext" if signed and lt != "i1" else "zext"
    return f"i64 {fn.inst(f'{ext} {lt} {v} to i64')}"
