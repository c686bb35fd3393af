"""Creation ops, constants, program identity and elementwise ops of the GPU lowering."""
from __future__ import annotations

from typing import Any

from ..._mlir import ir
from ...dialect.ops import ROUNDED_ALONE
from ...llvmir.fp8 import FP8, encode
from ...llvmir.types import const
from .. import layout as L
from ..assign import element_type, tensor_shape
from . import fp8
from .blockptr import select_composite
from .context import Context
from .optable import GPU_OPS
from .values import LoweringError, Scalar, Tensor

FP8_BITWISE = {"arith.select", "arith.bitcast", "tt.bitcast"}


def op_elementwise(ctx: Context, op: Any) -> None:
    res = op.results[0]
    if op.name == "arith.select" and tensor_shape(res.type) is None and \
            not isinstance(ctx.values.get(op.operands[1]), (Scalar, type(None))):
        ctx.values[res] = select_composite(ctx, op)  # of block pointers or descriptors
        return
    if tensor_shape(res.type) is None:
        args = [ctx.scalar_of(v) for v in op.operands]
        v = emit_scalar(ctx, op, [a.value for a in args], [a.ty for a in args], ctx.value_type(res))
        ctx.values[res] = Scalar(v, ctx.value_type(res))
        return
    ctx.values[res] = elementwise_in(ctx, op, ctx.layout_of(res))


def emit_scalar(ctx: Context, op: Any, args: list[str], types: list[str], rty: str) -> str:
    """One elementwise op on scalar values; 8-bit floats are computed in f32 (as Triton does)."""
    fmts = [FP8.get(element_type(v.type)) for v in op.operands]
    rfmt = FP8.get(element_type(op.results[0].type))
    if (any(fmts) or rfmt) and op.name not in FP8_BITWISE:
        args = [fp8.to_f32(ctx.fn, f, a) if f else a for f, a in zip(fmts, args)]
        types = ["float" if f else t for f, t in zip(fmts, types)]
        v = ctx.scalar.emit(ctx.fn, op.name, args, types, "float" if rfmt else rty, _attrs(op))
        return fp8.from_f32(ctx.fn, rfmt, v) if rfmt else v
    return ctx.scalar.emit(ctx.fn, op.name, args, types, rty, _attrs(op))


def elementwise_in(ctx: Context, op: Any, lay: L.Layout) -> Tensor:
    res = op.results[0]
    rty = ctx.value_type(res)
    ins = [ctx.tensor_in(v, lay) if tensor_shape(v.type) is not None else ctx.scalar_of(v)
           for v in op.operands]
    if op.name == "tt.addptr":
        return addptr_in(ctx, op, lay, ins)
    types = [i.ty for i in ins]
    seen: dict[tuple, str] = {}
    groups = constant_groups(ctx, res, lay)
    regs = []
    for r in range(lay.num_regs):
        if groups[r] < r:
            regs.append(regs[groups[r]])
            continue
        args = tuple(i.regs[r] if isinstance(i, Tensor) else i.value for i in ins)
        v = seen.get(args)
        if v is None:
            v = seen[args] = emit_scalar(ctx, op, list(args), types, rty)
        regs.append(v)
    return Tensor(lay, regs, rty)


def constant_groups(ctx: Context, res: Any, lay: L.Layout) -> list[int]:
    """For each register, the first register the axis analysis proves holds the same value (itself when
    none), as Triton's elementwise lowering deduplicates. A mask ``cols < N`` with N a multiple of 16 is
    then one compare per vector rather than per element: per-element predicates overflow the
    multiprocessor's 7 predicate registers, and their spills and the extra compares cost instructions and
    registers (layer norm's variance loop: 212 -> 156 instructions; PERF.md)."""
    const = ctx.axis.info(res).const
    if len(const) != lay.rank or all(k == 1 for k in const):
        return list(range(lay.num_regs))
    # groups of k (a power of two) aligned elements: two registers whose coordinates agree in the bits
    # at and above log2(k) stay in one group in every thread, whose coordinates differ by an XOR
    ks = [k if k & (k - 1) == 0 else 1 for k in const]
    first: dict[tuple, int] = {}
    return [first.setdefault(tuple(c // k for c, k in zip(lay.reg_coords(r), ks)), r)
            for r in range(lay.num_regs)]


def addptr_in(ctx: Context, op: Any, lay: L.Layout, ins: list[Any]) -> Tensor:
    elem, _ = ctx.pointee(op.results[0].type)
    p, off = ins
    seen: dict[tuple, str] = {}
    groups = constant_groups(ctx, op.results[0], lay)
    regs = []
    for r in range(lay.num_regs):
        if groups[r] < r:
            regs.append(regs[groups[r]])
            continue
        key = (p.regs[r] if isinstance(p, Tensor) else p.value, off.regs[r] if isinstance(off, Tensor) else off.value)
        v = seen.get(key)
        if v is None:
            v = seen[key] = ctx.fn.inst(f"getelementptr {elem}, {ctx.target.global_ptr} {key[0]}, {off.ty} {key[1]}")
        regs.append(v)
    return Tensor(lay, regs, ctx.target.global_ptr)


@GPU_OPS.lowers("tt.addptr")
def op_addptr(ctx: Context, op: Any) -> None:
    res = op.results[0]
    if tensor_shape(res.type) is None:
        elem, _ = ctx.pointee(res.type)
        p, off = ctx.scalar_of(op.operands[0]), ctx.scalar_of(op.operands[1])
        v = ctx.fn.inst(f"getelementptr {elem}, {ctx.target.global_ptr} {p.value}, {off.ty} {off.value}")
        ctx.values[res] = Scalar(v, ctx.target.global_ptr)
        return
    ctx.values[res] = elementwise_in(ctx, op, ctx.layout_of(res))


@GPU_OPS.lowers("arith.constant")
def op_constant(ctx: Context, op: Any) -> None:
    res = op.results[0]
    lt = ctx.value_type(res)
    attr = op.attributes["value"]
    if tensor_shape(res.type) is None:
        ctx.values[res] = Scalar(scalar_const(attr, lt, element_type(res.type)), lt)
        return
    ctx.values[res] = constant_tile(ctx, op, ctx.layout_of(res))


def constant_tile(ctx: Context, op: Any, lay: L.Layout) -> Tensor:
    lt = ctx.value_type(op.results[0])
    elem = element_type(op.results[0].type)
    dense = ir.DenseElementsAttr(op.attributes["value"])
    if dense.is_splat:
        return Tensor(lay, [scalar_const(dense.get_splat_value(), lt, elem)] * lay.num_regs, lt)
    vals = [scalar_const(dense[i], lt, elem) for i in range(len(dense))]
    g = f"@cst.{len(ctx.module.globals)}"
    space = ctx.target.global_addrspace
    body = ", ".join(f"{lt} {v}" for v in vals)
    ctx.module.globals.append(f"{g} = private unnamed_addr addrspace({space}) constant [{len(vals)} x {lt}] "
                               f"[{body}], align 16")
    ptr_t = f"ptr addrspace({space})" if space else "ptr"
    regs = []
    for r in range(lay.num_regs):
        idx = ctx.linear_index(lay, r, lay.shape)
        p = ctx.fn.inst(f"getelementptr {lt}, {ptr_t} {g}, i32 {idx}")
        regs.append(ctx.fn.inst(f"load {lt}, {ptr_t} {p}"))
    return Tensor(lay, regs, lt)


@GPU_OPS.lowers("tt.get_program_id")
def op_program_id(ctx: Context, op: Any) -> None:
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    ctx.values[op.results[0]] = Scalar(ctx.target.program_id(ctx.fn, axis), "i32")


@GPU_OPS.lowers("tt.get_num_programs")
def op_num_programs(ctx: Context, op: Any) -> None:
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    ctx.values[op.results[0]] = Scalar(ctx.target.num_programs(ctx.fn, axis), "i32")


@GPU_OPS.lowers("tt.splat")
def op_splat(ctx: Context, op: Any) -> None:
    ctx.values[op.results[0]] = ctx.produce(op, ctx.layout_of(op.results[0]))


@GPU_OPS.lowers("tt.make_range")
def op_make_range(ctx: Context, op: Any) -> None:
    ctx.values[op.results[0]] = ctx.produce(op, ctx.layout_of(op.results[0]))


@GPU_OPS.lowers("tt.assume", "func.return")
def op_nothing(ctx: Context, op: Any) -> None:
    return None


@GPU_OPS.lowers("tt.debug_barrier")
def op_barrier(ctx: Context, op: Any) -> None:
    ctx.target.barrier(ctx.fn)
    ctx.scratch_dirty = False


def _attrs(op: Any) -> dict:
    out = {}
    for name in ("predicate", "propagate_nan"):
        if name in op.attributes:
            out[name] = ir.IntegerAttr(op.attributes[name]).value
    if ROUNDED_ALONE in op.attributes:
        out["rounded_alone"] = True
    return out


def scalar_const(attr: Any, lt: str, elem: str = "") -> str:
    if elem in FP8 and isinstance(attr, ir.FloatAttr):
        code = encode(ir.FloatAttr(attr).value, FP8[elem])
        return str(code - 256 if code >= 128 else code)
    if isinstance(attr, ir.BoolAttr):
        return "true" if ir.BoolAttr(attr).value else "false"
    if isinstance(attr, ir.IntegerAttr):
        v = ir.IntegerAttr(attr).value
        return ("true" if v else "false") if lt == "i1" else str(v)
    if isinstance(attr, ir.FloatAttr):
        return const(lt, ir.FloatAttr(attr).value)
    raise LoweringError(f"unsupported constant {attr}")

