"""Shape ops (free in registers under linear layouts, see :mod:`tritium.gpu.layout`) and conversions between
float formats."""
from __future__ import annotations

from typing import Any

from ..._mlir import ir
from ...llvmir.fp8 import FP8
from .. import layout as L
from ..assign import blocked_for, element_type, tensor_shape
from . import fp8
from .context import Context
from .optable import GPU_OPS
from .shared import SharedTile, SmemLayout
from .values import LoweringError, Scalar, Tensor


@GPU_OPS.lowers("tt.broadcast")
def op_broadcast(ctx: Context, op: Any) -> None:
    res = op.results[0]
    src = ctx.values[op.operands[0]]
    lay = ctx.layout_of(res)
    if isinstance(src, Scalar):
        ctx.values[res] = Tensor(lay, [src.value] * lay.num_regs, src.ty)
        return
    ctx.values[res] = ctx.produce(op, lay)


@GPU_OPS.lowers("tt.expand_dims")
def op_expand_dims(ctx: Context, op: Any) -> None:
    res = op.results[0]
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    src = ctx.values[op.operands[0]]
    if isinstance(src, Scalar):
        lay = ctx.layout_of(res)
        ctx.values[res] = Tensor(lay, [src.value] * lay.num_regs, src.ty)
        return
    if isinstance(src, SharedTile):     # a staged row vector (context.staged_row_vector): read in place
        ctx.values[res] = ctx.produce(op, ctx.layout_of(res))
        return
    t = Tensor(L.expand_dims(src.layout, axis), src.regs, src.ty)
    ctx.set_result(op, t)


@GPU_OPS.lowers("tt.reshape")
def op_reshape(ctx: Context, op: Any) -> None:
    got = ctx.values.get(op.operands[0])
    shape = tensor_shape(op.results[0].type)
    if isinstance(got, SharedTile) and got.smem.fast == len(got.shape) - 1 and len(shape) == 2 \
            and tuple(got.shape[-2:]) == tuple(shape) and all(d == 1 for d in got.shape[:-2]):
        # a pipeline stage of a block with leading unit dimensions (pipeline_desc.squeezed_to_2d): the same rows
        ctx.values[op.results[0]] = SharedTile(got.base, SmemLayout(tuple(shape), 1, got.smem.eb), got.ty)
        return
    src = ctx.tensor(op.operands[0])
    ctx.set_result(op, Tensor(L.reshape(src.layout, shape), src.regs, src.ty))


@GPU_OPS.lowers("tt.trans")
def op_trans(ctx: Context, op: Any) -> None:
    got = ctx.values.get(op.operands[0])
    if isinstance(got, SharedTile) and len(got.shape) == 2:
        # a pipeline stage read by a dot through b.T: the same bytes, seen with the other dimension fast
        sm = got.smem
        ctx.values[op.results[0]] = SharedTile(got.base, SmemLayout(sm.shape[::-1], 1 - sm.fast, sm.eb), got.ty)
        return
    src = ctx.tensor(op.operands[0])
    order = list(ir.DenseI32ArrayAttr(op.attributes["order"]))
    ctx.set_result(op, Tensor(L.permute(src.layout, order), src.regs, src.ty))


@GPU_OPS.lowers("tt.join")
def op_join(ctx: Context, op: Any) -> None:
    a = ctx.values[op.operands[0]]
    if isinstance(a, Scalar):
        shape = tensor_shape(op.results[0].type)
        lay = L.default_blocked(shape[:-1] or (1, ), ctx.num_warps, ctx.warp_size) if len(shape) > 1 else None
        if lay is None:
            # join of two scalars: a tile of 2
            lay2 = ctx.layout_of(op.results[0])
            b = ctx.scalar_of(op.operands[1])
            regs = []
            for r in range(lay2.num_regs):
                c = ctx.coord(lay2, r, 0)
                regs.append(a.value if c == "0" else b.value if c == "1" else
                            ctx.fn.inst(f"select i1 {ctx.fn.inst(f'icmp eq i32 {c}, 0')}, {a.ty} {a.value}, "
                                         f"{a.ty} {b.value}"))
            ctx.values[op.results[0]] = Tensor(lay2, regs, a.ty)
            return
        a = ctx.tensor_in(op.operands[0], lay)
    else:
        a = ctx.tensor(op.operands[0])
    b = ctx.tensor_in(op.operands[1], a.layout)
    ctx.set_result(op, Tensor(L.join(a.layout), a.regs + b.regs, a.ty))


@GPU_OPS.lowers("tt.cat")
def op_cat(ctx: Context, op: Any) -> None:
    a = ctx.tensor(op.operands[0])
    b = ctx.tensor_in(op.operands[1], a.layout)
    ctx.set_result(op, Tensor(L.cat(a.layout), a.regs + b.regs, a.ty))


@GPU_OPS.lowers("tt.split")
def op_split(ctx: Context, op: Any) -> None:
    src = ctx.tensor(op.operands[0])
    lay = src.layout
    if L.split_bit(lay) is None:
        shape = lay.shape
        order = [len(shape) - 1] + list(range(len(shape) - 2, -1, -1))
        target = blocked_for(shape, [1] * (len(shape) - 1) + [2], ctx.num_warps, ctx.warp_size, order)
        src = ctx.convert(src, target)
        lay = target
    half, bit = L.split(lay)
    lo = [src.regs[r] for r in range(lay.num_regs) if not (r >> bit) & 1]
    hi = [src.regs[r] for r in range(lay.num_regs) if (r >> bit) & 1]
    for i, regs in enumerate((lo, hi)):
        res = op.results[i]
        if tensor_shape(res.type) is None:
            ctx.values[res] = Scalar(regs[0], src.ty)
        else:
            ctx.set_result(op, Tensor(half, regs, src.ty), i)

# -- float formats -----------------------------------------------------------------------------------
@GPU_OPS.lowers("tt.fp_to_fp")
def op_fp_to_fp(ctx: Context, op: Any) -> None:
    res = op.results[0]
    relem, selem = element_type(res.type), element_type(op.operands[0].type)
    rounding = ir.StringAttr(op.attributes["rounding"]).value if "rounding" in op.attributes else "rtne"
    rty, sty = ctx.llty(relem), ctx.llty(selem)

    def one(x: str) -> str:
        return convert_float(ctx, x, selem, relem, sty, rty, rounding)

    src = ctx.values[op.operands[0]]
    if isinstance(src, Scalar):
        ctx.values[res] = Scalar(one(src.value), rty)
        return
    lay = ctx.layout_of(res)
    t = ctx.tensor_in(op.operands[0], lay)
    seen: dict[str, str] = {}
    regs = []
    for x in t.regs:
        if x not in seen:
            seen[x] = one(x)
        regs.append(seen[x])
    ctx.values[res] = Tensor(lay, regs, rty)


def convert_float(ctx: Context, x: str, selem: str, relem: str, sty: str, rty: str, rounding: str) -> str:
    fn = ctx.fn
    special = ctx.target.math(fn, ctx.module, f"cvt.{selem}.{relem}.{rounding}", [x], sty)
    for name, text in fp8.INTRINSICS.items():
        ctx.module.declare(name, text)
    if special is not None:
        return special
    v, t = x, sty
    if selem in FP8:
        v = fp8.to_f32(fn, FP8[selem], v)
        t = "float"
    if relem in FP8:
        if t == "double":
            v, t = fn.inst(f"fptrunc double {v} to float"), "float"
        elif t != "float":
            v, t = fn.inst(f"fpext {t} {v} to float"), "float"
        return fp8.from_f32(fn, FP8[relem], v, rounding == "rtz")
    if t == rty:
        return v
    widen = {"half": 16, "bfloat": 16, "float": 32, "double": 64}
    if widen[rty] > widen[t] or (widen[rty] == widen[t]):
        if widen[rty] == widen[t]:
            v = fn.inst(f"fpext {t} {v} to float")
            t = "float"
            if rty == "float":
                return v
            return fn.inst(f"fptrunc float {v} to {rty}")
        return fn.inst(f"fpext {t} {v} to {rty}")
    if rounding == "rtz":
        return fp8.trunc_rtz(fn, v, t, rty)
    return fn.inst(f"fptrunc {t} {v} to {rty}")


@GPU_OPS.lowers("tt.extern_elementwise")
def op_extern(ctx: Context, op: Any) -> None:
    res = op.results[0]
    symbol = ir.StringAttr(op.attributes["symbol"]).value
    libpath = ir.StringAttr(op.attributes["libpath"]).value if "libpath" in op.attributes else ""
    rty = ctx.value_type(res)
    if tensor_shape(res.type) is None:
        args = [ctx.scalar_of(v) for v in op.operands]
        v = ctx.target.extern_call(ctx.fn, ctx.module, symbol, libpath, [(a.ty, a.value) for a in args], rty)
        ctx.values[res] = Scalar(v, rty)
        return
    lay = ctx.layout_of(res)
    ins = [ctx.tensor_in(v, lay) for v in op.operands]
    seen: dict[tuple, str] = {}
    regs = []
    for r in range(lay.num_regs):
        key = tuple(i.regs[r] for i in ins)
        if key not in seen:
            seen[key] = ctx.target.extern_call(ctx.fn, ctx.module, symbol, libpath,
                                                [(i.ty, k) for i, k in zip(ins, key)], rty)
        regs.append(seen[key])
    ctx.values[res] = Tensor(lay, regs, rty)


def _unused(*_: Any) -> None:
    raise LoweringError("unreachable")
