"""``tt.elementwise_inline_asm`` (``tl.inline_asm_elementwise``): the user's assembly as an LLVM inline-asm call per
group of ``packed_element`` elements a thread holds.

Registers as Triton forms them: in a group, an operand or result narrower than 32 bits shares 32-bit registers
(``pack=4`` on int8: one register of four bytes, element k in bits 8k..8k+7), anything wider takes one register per
element; pointers are 64-bit. The groups are consecutive registers of a layout in which each thread holds runs of
at least ``pack`` consecutive elements along the last dimension (the order within a group is the same for every
operand and result, which is all an elementwise operation needs).
"""
from __future__ import annotations

from typing import Any

from ..._mlir import ir
from ...dialect.ops import inline_asm_elements_per_register
from ...llvmir.types import BYTES
from ..assign import blocked_for, tensor_shape
from .context import Context
from .optable import GPU_OPS
from .values import LoweringError, Scalar, Tensor


def _bits(ctx: Context, ty: str) -> int:
    # a pointer is a 64-bit register; an i1 is not packed (its own register, as wide elements are)
    return 64 if ty == ctx.target.global_ptr else 32 if ty == "i1" else BYTES[ty] * 8


def _registers(ctx: Context, ty: str, pack: int) -> list[tuple[int, str]]:
    """(elements, LLVM register type) of each register one group of ``ty`` takes."""
    bits = _bits(ctx, ty)
    per = inline_asm_elements_per_register(bits, pack)
    reg_ty = f"i{per * bits}" if per > 1 else ty
    return [(per, reg_ty)] * (pack // per)


def _pack(ctx: Context, values: list[str], ty: str, per: int, reg_ty: str) -> str:
    fn = ctx.fn
    if per == 1:
        return values[0]
    vec = f"<{per} x {ty}>"
    v = "poison"
    for k, x in enumerate(values):
        v = fn.inst(f"insertelement {vec} {v}, {ty} {x}, i32 {k}")
    return fn.inst(f"bitcast {vec} {v} to {reg_ty}")


def _unpack(ctx: Context, reg: str, ty: str, per: int, reg_ty: str) -> list[str]:
    fn = ctx.fn
    if per == 1:
        return [reg]
    vec = f"<{per} x {ty}>"
    v = fn.inst(f"bitcast {reg_ty} {reg} to {vec}")
    return [fn.inst(f"extractelement {vec} {v}, i32 {k}") for k in range(per)]


def _llvm_string(text: str) -> str:
    out = []
    for ch in text:
        if ch in '"\\' or not 32 <= ord(ch) < 127:
            out.extend(f"\\{b:02X}" for b in ch.encode())
        else:
            out.append(ch)
    return "".join(out)


def _call(ctx: Context, op: Any, ins: list[tuple[str, str]], out_tys: list[str], pure: bool) -> list[str]:
    """One inline-asm call: ``ins`` (LLVM type, value) registers in, one value per ``out_tys`` register out."""
    fn = ctx.fn
    asm = _llvm_string(ir.StringAttr(op.attributes["asm_string"]).value)
    constraints = ",".join(c.strip() for c in ir.StringAttr(op.attributes["constraints"]).value.split(","))
    effect = "" if pure else "sideeffect "
    args = ", ".join(f"{t} {v}" for t, v in ins)
    if len(out_tys) == 1:
        return [fn.inst(f'call {out_tys[0]} asm {effect}"{asm}", "{_llvm_string(constraints)}"({args})')]
    st = "{ " + ", ".join(out_tys) + " }"
    r = fn.inst(f'call {st} asm {effect}"{asm}", "{_llvm_string(constraints)}"({args})')
    return [fn.inst(f"extractvalue {st} {r}, {i}") for i in range(len(out_tys))]


@GPU_OPS.lowers("tt.elementwise_inline_asm")
def op_inline_asm(ctx: Context, op: Any) -> None:
    if not getattr(ctx.target, "runs_inline_asm", True):
        raise LoweringError(f"kernel `{ctx.name}`: tl.inline_asm_elementwise is assembly for a GPU; this target "
                            "cannot run it (the GPU emulator runs on the host's CPU): use tl operations")
    srcs = list(op.operands)
    res = list(op.results)
    pack = ir.IntegerAttr(op.attributes["packed_element"]).value
    pure = "pure" in op.attributes and ir.BoolAttr(op.attributes["pure"]).value
    rtys = [ctx.value_type(r) for r in res]
    if tensor_shape(res[0].type) is None:
        if pack != 1:
            raise LoweringError(f"kernel `{ctx.name}`: inline_asm_elementwise on scalars takes pack=1, got {pack}")
        outs = _call(ctx, op, [(s.ty, s.value) for s in (ctx.scalar_of(v) for v in srcs)], rtys, pure)
        for r, v, t in zip(res, outs, rtys):
            ctx.values[r] = Scalar(v, t)
        return
    lay = ctx.layout_of(res[0])
    last = lay.rank - 1
    if pack > 1 and lay.reg_run(last) < pack:
        lay = blocked_for(lay.shape, [1] * last + [pack], ctx.num_warps, ctx.warp_size)
    ins = [ctx.tensor_in(v, lay) for v in srcs]
    out: list[list[str]] = [[""] * lay.num_regs for _ in res]
    seen: dict[tuple, list[list[str]]] = {}
    for g in range(0, lay.num_regs, pack):
        key = tuple(t.regs[g + i] for t in ins for i in range(pack))
        got = seen.get(key)
        if got is None:
            regs_in: list[tuple[str, str]] = []
            for t in ins:
                k = g
                for per, reg_ty in _registers(ctx, t.ty, pack):
                    regs_in.append((reg_ty, _pack(ctx, t.regs[k:k + per], t.ty, per, reg_ty)))
                    k += per
            shapes = [_registers(ctx, ty, pack) for ty in rtys]
            flat = _call(ctx, op, regs_in, [reg_ty for regs in shapes for _, reg_ty in regs], pure)
            got = []
            for ty, regs in zip(rtys, shapes):
                elems: list[str] = []
                for per, reg_ty in regs:
                    elems += _unpack(ctx, flat.pop(0), ty, per, reg_ty)
                got.append(elems)
            if pure:
                seen[key] = got     # a copy of the same elements (a broadcast layout) is computed once
        for j in range(len(res)):
            out[j][g:g + pack] = got[j]
    for j, (r, ty) in enumerate(zip(res, rtys)):
        ctx.set_result(op, Tensor(lay, out[j], ty), j)
