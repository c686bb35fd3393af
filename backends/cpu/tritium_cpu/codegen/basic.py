"""Constants, program ids, ``arange``, pointer arithmetic, hints, and the generic elementwise path (every op
of :func:`.scalar.is_elementwise`: a lazy per-element expression, see :mod:`.tiles`)."""
from __future__ import annotations

from typing import Any

from tritium._mlir import ir

from .context import Context
from .irtext import FP8, SIZES, Function, const, fp8_code
from .opinfo import LoweringError, elementwise_attrs, pointee, type_info
from .optable import CPU_OPS
from .tiles import Buf, Elem, Evaluator, Node, Range, Scalar, Splat, Tile

# ops that move float8 bits without interpreting them
_FP8_BITWISE = frozenset({"arith.select", "arith.bitcast", "tt.bitcast"})


def elementwise(ctx: Context, op: Any) -> None:
    name = op.name
    res = op.results[0]
    shape, rty, relem = type_info(res.type)
    operands = [ctx.consume(v) for v in op.operands]
    if name == "arith.select" and shape is None and not isinstance(operands[1], Scalar):
        from .blockptr import select_composite
        ctx.values[res] = select_composite(ctx, operands[0], operands[1], operands[2])
        return
    infos = [type_info(v.type) for v in op.operands]
    arg_types = [i[1] for i in infos]
    attrs = elementwise_attrs(op)
    se = ctx.scalar
    emit_fn = se.emit
    fp8_args = [FP8.get(i[2]) for i in infos]
    if (any(fp8_args) or relem in FP8) and name not in _FP8_BITWISE:
        # float8 has no arithmetic of its own: compute in float32 and round the result back
        math, out_fmt = ctx.math, FP8.get(relem)
        compute_types = ["float" if f else t for f, t in zip(fp8_args, arg_types)]
        compute_ret = "float" if out_fmt else rty

        def emit_fn(fn, nm, vals, _types, _ret, at, address_mode=False):  # noqa: F811
            vals = [math.call(fn, f"tritium_{f}_to_f32", "float", [("i8", v)]) if f else v
                    for f, v in zip(fp8_args, vals)]
            r = se.emit(fn, nm, vals, compute_types, compute_ret, at, address_mode=address_mode)
            return math.call(fn, f"tritium_f32_to_{out_fmt}", "i8", [("float", r)]) if out_fmt else r

    if shape is None:
        v = emit_fn(ctx.fn, name, [o.value for o in operands], arg_types, rty, attrs)
        ctx.values[res] = Scalar(v, rty)
        return
    nodes = [ctx.as_node(o, shape) for o in operands]
    if name == "arith.divf" and rty == "float" and emit_fn == se.emit and isinstance(nodes[1], Splat):
        # Triton's fp32 `/` is not IEEE on GPUs either (div.full.f32, 2 ulp): a divisor uniform over
        # the tile becomes one reciprocal and a multiply per element (<= 1.5 ulp, no vdivps in the
        # loop); tl.div_rn and fdiv(ieee_rounding=True) stay correctly rounded. Where 1/s is not a normal
        # float (|s| < 2**-126: inf; |s| > 2**126: denormal) both sides are scaled by a power of two c first,
        # (x * c) * (1 / (s * c)): exact scalings, so the same 1.5 ulp; an x * c that overflows or underflows
        # means a quotient that does too
        fn, sv = ctx.fn, nodes[1].value
        small = fn.inst(f"and i1 {fn.inst(f'fcmp olt float {sv}, {_F32_2M126}')}, "
                        f"{fn.inst(f'fcmp ogt float {sv}, {_F32_N2M126}')}")
        big = fn.inst(f"or i1 {fn.inst(f'fcmp ogt float {sv}, {_F32_2P126}')}, "
                      f"{fn.inst(f'fcmp olt float {sv}, {_F32_N2P126}')}")
        c = fn.inst(f"select i1 {small}, float {_F32_2P64}, float "
                    f"{fn.inst(f'select i1 {big}, float {_F32_2M64}, float 1.0')}")
        recip = fn.inst(f"fdiv float 1.0, {fn.inst(f'fmul float {sv}, {c}')}")

        def mul(ev: Evaluator, vals: list[str]) -> str:
            return emit_fn(ev.fn, "arith.mulf", vals, arg_types, rty, attrs, address_mode=ev.address)

        scaled = Elem("arith.mulf", [nodes[0], Splat(c, shape, "float")], shape, rty, mul, attrs)
        name, nodes = "arith.mulf", [scaled, Splat(recip, shape, "float")]

    def emit(ev: Evaluator, vals: list[str]) -> str:
        return emit_fn(ev.fn, name, vals, arg_types, rty, attrs, address_mode=ev.address)

    ctx.set(res, Tile(Elem(name, nodes, shape, rty, emit, attrs)))


#: 2**-126, 2**126, 2**64, 2**-64, -2**-126, -2**126 as LLVM float literals (the double's hex; exact in float)
_F32_2M126, _F32_2P126, _F32_2P64, _F32_2M64, _F32_N2M126, _F32_N2P126 = (
    "0x3810000000000000", "0x47D0000000000000", "0x43F0000000000000", "0x3BF0000000000000",
    "0xB810000000000000", "0xC7D0000000000000")


@CPU_OPS.lowers("arith.constant")
def constant(ctx: Context, op: Any) -> None:
    res = op.results[0]
    shape, lt, elem = type_info(res.type)
    attr = op.attributes["value"]
    if shape is None:
        ctx.values[res] = Scalar(_scalar_const(attr, lt, elem), lt)
        return
    dense = ir.DenseElementsAttr(attr)
    if dense.is_splat:
        ctx.set(res, Tile(Splat(_scalar_const(dense.get_splat_value(), lt, elem), shape, lt)))
        return
    vals = [_scalar_const(dense[i], lt, elem) for i in range(len(dense))]
    g = f"@cst.{len(ctx.module.globals)}"
    body = ", ".join(f"{lt} {v}" for v in vals)
    ctx.module.globals.append(f"{g} = private unnamed_addr constant [{len(vals)} x {lt}] [{body}], align 16")
    ctx.set(res, Tile(Buf(g, shape, lt)))


@CPU_OPS.lowers("tt.get_program_id")
def program_id(ctx: Context, op: Any) -> None:
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    ctx.values[op.results[0]] = Scalar(f"%pid{axis}", "i32")


@CPU_OPS.lowers("tt.get_num_programs")
def num_programs(ctx: Context, op: Any) -> None:
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    ctx.values[op.results[0]] = Scalar(f"%npid{axis}", "i32")


@CPU_OPS.lowers("tt.make_range")
def make_range(ctx: Context, op: Any) -> None:
    start = ir.IntegerAttr(op.attributes["start"]).value
    end = ir.IntegerAttr(op.attributes["end"]).value
    ctx.set(op.results[0], Tile(Range(start, end - start)))


@CPU_OPS.lowers("tt.addptr")
def addptr(ctx: Context, op: Any) -> None:
    res = op.results[0]
    shape, _, _ = type_info(res.type)
    pelem = pointee(op.operands[0].type)
    ptr, off = ctx.consume(op.operands[0]), ctx.consume(op.operands[1])
    oty = type_info(op.operands[1].type)[1]
    if shape is None:
        ctx.values[res] = Scalar(_gep(ctx.fn, pelem, oty, ptr.value, off.value), "ptr")
        return
    ctx.set(res, Tile(addptr_node(pelem, ctx.as_node(ptr, shape), ctx.as_node(off, shape), oty, shape)))


@CPU_OPS.lowers("tt.assume")
def assume(ctx: Context, op: Any) -> None:
    cond = ctx.consume(op.operands[0])
    # LLVM may use a scalar fact (a size known >= the block, an index known in range) to drop branches and
    # checks; a tile's condition is only consumed (it would take a reduction to state it)
    if isinstance(cond, Scalar) and cond.ty == "i1":
        ctx.module.declare("llvm.assume", "declare void @llvm.assume(i1)")
        ctx.fn.emit(f"call void @llvm.assume(i1 {cond.value})")


@CPU_OPS.lowers("tt.debug_barrier")
def barrier(ctx: Context, op: Any) -> None:
    ctx.flush_pending()


@CPU_OPS.lowers("func.return")
def return_(ctx: Context, op: Any) -> None:
    if len(op.operands):
        raise LoweringError("a kernel cannot return values")


def _gep(fn: Function, pelem: str, oty: str, p: str, o: str) -> str:
    if oty != "i64":
        o = fn.inst(f"sext {oty} {o} to i64")
    return fn.inst(f"getelementptr {pelem}, ptr {p}, i64 {o}")


def addptr_node(pelem: str, ptr: Node, off: Node, oty: str, shape: tuple[int, ...]) -> Elem:
    """``ptr + off`` elements of ``pelem``, elementwise."""
    return Elem("tt.addptr", [ptr, off], shape, "ptr", lambda ev, v: _gep(ev.fn, pelem, oty, v[0], v[1]),
                {"pointee_bytes": SIZES[pelem]} if pelem in SIZES else None)


def _scalar_const(attr: Any, lt: str, elem: str = "") -> str:
    if elem in FP8:
        code = fp8_code(ir.FloatAttr(attr).value, FP8[elem])
        return str(code - 256 if code > 127 else code)
    if isinstance(attr, ir.BoolAttr):
        return "true" if ir.BoolAttr(attr).value else "false"
    if isinstance(attr, ir.IntegerAttr):
        v = ir.IntegerAttr(attr).value
        if lt == "i1":
            return "true" if v else "false"
        return str(v)
    if isinstance(attr, ir.FloatAttr):
        return const(lt, ir.FloatAttr(attr).value)
    raise LoweringError(f"unsupported constant {attr}")
