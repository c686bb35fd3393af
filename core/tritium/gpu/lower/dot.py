"""``tt.dot``: the target's strategy for the plan's kind (tensor cores), or the portable FMA lowering where
each thread holds whole rows of A and columns of B for its block of the accumulator."""
from __future__ import annotations

from typing import Any

from ..._mlir import ir
from ...llvmir.fp8 import FP8
from .. import layout as L
from ..assign import element_type, fma_dot_plan, fma_operand, tensor_shape
from . import fp8
from .context import Context
from .optable import GPU_OPS
from .values import Tensor


def dot_operand_layouts(ctx: Context, op: Any) -> tuple[L.Layout, L.Layout]:
    shapes = [tensor_shape(op.operands[i].type) for i in (0, 1)]
    if "ttg.operands" in op.attributes:
        texts = [ir.StringAttr(s).value for s in ir.ArrayAttr(op.attributes["ttg.operands"])]
        return L.parse(texts[0], shapes[0]), L.parse(texts[1], shapes[1])
    acc = ctx.layout_of(op.results[0])
    K = shapes[0][-1]
    return fma_operand(acc, 0, K), fma_operand(acc, 1, K)


@GPU_OPS.lowers("tt.dot")
def op_dot(ctx: Context, op: Any) -> None:
    kind = ir.StringAttr(op.attributes["ttg.dot"]).value if "ttg.dot" in op.attributes else "fma"
    res = op.results[0]
    acc_lay = ctx.layout_of(res)
    a_lay, b_lay = dot_operand_layouts(ctx, op)
    strategy = ctx.target.dot_strategy(kind)
    if strategy is not None:
        out = strategy(ctx, op, a_lay, b_lay, acc_lay)
        ctx.values[res] = out if out.layout == acc_lay else ctx.convert(out, acc_lay)
        return
    ctx.values[res] = fma_dot(ctx, op, acc_lay)


def fma_dot(ctx: Context, op: Any, acc_lay: L.Layout) -> Tensor:
    K = tensor_shape(op.operands[0].type)[-1]
    if not acc_lay.is_single_dim():
        plan = fma_dot_plan(acc_lay.shape, K, ctx.num_warps, ctx.warp_size)
        return ctx.convert(fma_dot_in(ctx, op, plan.acc, K), acc_lay)
    return fma_dot_in(ctx, op, acc_lay, K)


def fma_dot_in(ctx: Context, op: Any, acc_lay: L.Layout, K: int) -> Tensor:
    fn = ctx.fn
    a_lay, b_lay = fma_operand(acc_lay, 0, K), fma_operand(acc_lay, 1, K)
    a = ctx.tensor_in(op.operands[0], a_lay)
    b = ctx.tensor_in(op.operands[1], b_lay)
    c = ctx.tensor_in(op.operands[2], acc_lay)
    out_ty = c.ty
    # a half accumulator is carried in f32 and rounded once at the end, as the tensor-core instructions round
    # (per instruction, not per product): 64 roundings of an fp16 running sum lose about 3 bits of a K=64 dot
    cty = "float" if out_ty == "half" else out_ty
    rank = acc_lay.rank
    amap = {a_lay.reg_coords(r): r for r in range(a_lay.num_regs)}
    bmap = {b_lay.reg_coords(r): r for r in range(b_lay.num_regs)}
    a_elem = element_type(op.operands[0].type)
    b_elem = element_type(op.operands[1].type)
    widened: dict[str, str] = {}

    def widen(v: str, ty: str, unsigned: bool, elem: str) -> str:
        if ty == cty:
            return v
        got = widened.get(v)
        if got is None:
            if cty.startswith("i"):
                got = fn.inst(f"{'zext' if unsigned else 'sext'} {ty} {v} to {cty}")
            elif ty == "i8":      # fp8 operands (A's and B's formats may differ): through f32
                got = fp8.to_f32(fn, FP8.get(elem, "fp8e5"), v)
                if cty != "float":
                    got = fn.inst(f"fptrunc float {got} to {cty}")
            else:
                got = fn.inst(f"fpext {ty} {v} to {cty}")
            widened[v] = got
        return got

    unsigned = a_elem.startswith("ui")
    fma = None
    if not cty.startswith("i"):
        sfx = {"float": "f32", "double": "f64", "half": "f16"}[cty]
        fma = ctx.module.intrinsic(f"llvm.fma.{sfx}", cty, [cty, cty, cty])
    regs = []
    done: dict[tuple, str] = {}
    for r in range(acc_lay.num_regs):
        coords = acc_lay.reg_coords(r)
        if coords in done:
            regs.append(done[coords])
            continue
        batch, m, n = coords[:rank - 2], coords[rank - 2], coords[rank - 1]
        acc = c.regs[r] if out_ty == cty else fn.inst(f"fpext {out_ty} {c.regs[r]} to {cty}")
        for k in range(K):
            av = widen(a.regs[amap[batch + (m, k)]], a.ty, unsigned, a_elem)
            bv = widen(b.regs[bmap[batch + (k, n)]], b.ty, unsigned, b_elem)
            if fma is not None:
                acc = fn.inst(f"call {cty} {fma}({cty} {av}, {cty} {bv}, {cty} {acc})")
            else:
                p = fn.inst(f"mul {cty} {av}, {bv}")
                acc = fn.inst(f"add {cty} {acc}, {p}")
        if out_ty != cty:
            acc = fn.inst(f"fptrunc {cty} {acc} to {out_ty}")
        done[coords] = acc
        regs.append(acc)
    return Tensor(acc_lay, regs, out_ty)
