"""Shape and conversion ops of tiles on the CPU: splat, broadcast, expand_dims, reshape, trans, cat, join,
split (index remappings, evaluated lazily) and fp_to_fp (conversions arith lacks: float8, explicit rounding)."""
from __future__ import annotations

from typing import Any

from tritium._mlir import ir

from .context import Context
from .irtext import FP8, Function
from .opinfo import type_info
from .optable import CPU_OPS
from .tiles import Buf, Elem, Evaluator, Node, Remap, Scalar, Select2, Splat, Tile


@CPU_OPS.lowers("tt.splat")
def splat(ctx: Context, op: Any) -> None:
    shape, lt, _ = type_info(op.results[0].type)
    src = ctx.consume(op.operands[0])
    ctx.set(op.results[0], Tile(Splat(src.value, shape, lt)))


@CPU_OPS.lowers("tt.broadcast")
def broadcast(ctx: Context, op: Any) -> None:
    shape, _, _ = type_info(op.results[0].type)
    src = ctx.consume(op.operands[0])
    if isinstance(src, Scalar):
        ctx.set(op.results[0], Tile(Splat(src.value, shape, src.ty)))
        return
    sshape = src.shape
    keep = [d for d in range(len(shape)) if sshape[d] != 1]

    def remap(ev: Evaluator, idx: list[str]) -> list[str]:
        return [idx[d] if d in keep else "0" for d in range(len(shape))]

    axes = [d if d in keep else None for d in range(len(shape))]
    ctx.set(op.results[0], Tile(Remap(src.node, shape, remap, axes=axes)))


@CPU_OPS.lowers("tt.expand_dims")
def expand_dims(ctx: Context, op: Any) -> None:
    shape, _, _ = type_info(op.results[0].type)
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    src = ctx.consume(op.operands[0])
    if isinstance(src, Scalar):
        ctx.set(op.results[0], Tile(Splat(src.value, shape, src.ty)))
        return
    node = src.node
    if isinstance(node, Buf):
        ctx.set(op.results[0], Tile(Buf(node.ptr, shape, node.ty)))
        return
    axes = [d if d < axis else d + 1 for d in range(len(shape) - 1)]
    ctx.set(op.results[0], Tile(Remap(node, shape, lambda ev, idx: idx[:axis] + idx[axis + 1:],
                                       identity_safe=True, axes=axes)))


@CPU_OPS.lowers("tt.reshape")
def reshape(ctx: Context, op: Any) -> None:
    shape, _, _ = type_info(op.results[0].type)
    src = ctx.consume(op.operands[0])
    if isinstance(src.node, Splat):
        ctx.set(op.results[0], Tile(Splat(src.node.value, shape, src.ty)))
        return
    buf = ctx.materialize(src)
    # row-major data is the same memory under the new shape
    ctx.set(op.results[0], Tile(Buf(buf.ptr, shape, buf.ty)))


@CPU_OPS.lowers("tt.trans")
def trans(ctx: Context, op: Any) -> None:
    shape, _, _ = type_info(op.results[0].type)
    order = list(ir.DenseI32ArrayAttr(op.attributes["order"]))
    src = ctx.consume(op.operands[0])
    inv = [0] * len(order)
    for i, o in enumerate(order):
        inv[o] = i

    def remap(ev: Evaluator, idx: list[str]) -> list[str]:
        return [idx[inv[d]] for d in range(len(order))]

    ctx.set(op.results[0], Tile(Remap(src.node, shape, remap, axes=[inv[d] for d in range(len(order))])))


@CPU_OPS.lowers("tt.cat")
def cat(ctx: Context, op: Any) -> None:
    shape, lt, _ = type_info(op.results[0].type)
    a, b = ctx.consume(op.operands[0]), ctx.consume(op.operands[1])
    n = a.shape[0]

    def cond(ev: Evaluator, idx: list[str]) -> str:
        return ev.fn.inst(f"icmp ult i64 {idx[0]}, {n}") if idx[0].startswith("%") else \
            ("true" if int(idx[0]) < n else "false")

    def a_idx(ev: Evaluator, idx: list[str]) -> list[str]:
        if not idx[0].startswith("%"):
            return [str(min(int(idx[0]), n - 1))] + idx[1:]
        c = ev.fn.inst(f"icmp ult i64 {idx[0]}, {n}")
        return [ev.fn.inst(f"select i1 {c}, i64 {idx[0]}, i64 0")] + idx[1:]

    def b_idx(ev: Evaluator, idx: list[str]) -> list[str]:
        if not idx[0].startswith("%"):
            return [str(max(int(idx[0]) - n, 0))] + idx[1:]
        c = ev.fn.inst(f"icmp uge i64 {idx[0]}, {n}")
        s = ev.fn.inst(f"sub i64 {idx[0]}, {n}")
        return [ev.fn.inst(f"select i1 {c}, i64 {s}, i64 0")] + idx[1:]

    ctx.set(op.results[0], Tile(Select2(shape, lt, cond, a.node, a_idx, b.node, b_idx)))


@CPU_OPS.lowers("tt.join")
def join(ctx: Context, op: Any) -> None:
    shape, lt, _ = type_info(op.results[0].type)
    a, b = ctx.consume(op.operands[0]), ctx.consume(op.operands[1])
    an, bn = ctx.as_node(a, shape[:-1]), ctx.as_node(b, shape[:-1])
    last = len(shape) - 1

    def cond(ev: Evaluator, idx: list[str]) -> str:
        i = idx[last]
        return ev.fn.inst(f"icmp eq i64 {i}, 0") if i.startswith("%") else ("true" if i == "0" else "false")

    drop = lambda ev, idx: idx[:last]  # noqa: E731
    node = Select2(shape, lt, cond, an, drop, bn, drop)
    tile = Tile(node)
    ctx.set(op.results[0], tile)


@CPU_OPS.lowers("tt.split")
def split(ctx: Context, op: Any) -> None:
    src = ctx.consume(op.operands[0])
    node = src.node
    for k, res in enumerate(op.results):
        shape, _, _ = type_info(res.type)
        if shape is None:
            ctx.values[res] = Scalar(_read_element(ctx, node, [str(k)]), node.ty)
            continue
        ctx.set(res, Tile(Remap(node, shape, lambda ev, idx, k=k: idx + [str(k)])))


def _read_element(ctx: Context, node: Node, idx: list[str]) -> str:
    return Evaluator(ctx.fn).value(node, idx)


@CPU_OPS.lowers("tt.fp_to_fp")
def fp_to_fp(ctx: Context, op: Any) -> None:
    res = op.results[0]
    shape, rty, relem = type_info(res.type)
    _, sty, selem = type_info(op.operands[0].type)
    rounding = ""
    if "rounding" in op.attributes:
        rounding = ir.StringAttr(op.attributes["rounding"]).value
    math = ctx.math

    def convert(fn: Function, x: str) -> str:
        v, t = x, sty
        if selem in FP8:
            v = math.call(fn, f"tritium_{FP8[selem]}_to_f32", "float", [("i8", v)])
            t = "float"
        if relem in FP8:
            if t == "double":
                # round to odd into float32, so that rounding again to float8 is exact
                v = math.call(fn, "tritium_f64_to_f32_odd", "float", [("double", v)]) if rounding != "rtz" \
                    else math.call(fn, "tritium_f64_to_f32_rtz", "float", [("double", v)])
            elif t != "float":
                v = fn.inst(f"fpext {t} {v} to float")
            suffix = "_rtz" if rounding == "rtz" else ""
            return math.call(fn, f"tritium_f32_to_{FP8[relem]}{suffix}", "i8", [("float", v)])
        if t == rty:
            return v
        if rounding == "rtz":
            if t == "double" and rty == "float":
                return math.call(fn, "tritium_f64_to_f32_rtz", "float", [("double", v)])
            if t == "double":
                v = math.call(fn, "tritium_f64_to_f32_rtz", "float", [("double", v)])
                t = "float"
            if t == "float" and rty in ("half", "bfloat"):
                name = "tritium_f32_to_f16_rtz" if rty == "half" else "tritium_f32_to_bf16_rtz"
                return math.call(fn, name, rty, [("float", v)])
        widen = _fbits(rty) > _fbits(t)
        return fn.inst(f"{'fpext' if widen else 'fptrunc'} {t} {v} to {rty}")

    src = ctx.consume(op.operands[0])
    if shape is None:
        ctx.values[res] = Scalar(convert(ctx.fn, src.value), rty)
        return
    ctx.set(res, Tile(Elem("tt.fp_to_fp", [src.node], shape, rty, lambda ev, vals: convert(ev.fn, vals[0]))))


def _fbits(t: str) -> int:
    return {"half": 16, "bfloat": 16, "float": 32, "double": 64}[t]

