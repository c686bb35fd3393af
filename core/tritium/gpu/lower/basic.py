"""Creation ops, constants, program identity and elementwise ops of the GPU lowering."""
from __future__ import annotations

from typing import Any

from ..._mlir import ir
from ...llvmir.fp8 import FP8, encode
from ...llvmir.types import const
from .. import layout as L
from ..assign import element_type, tensor_shape
from .optable import GPU_OPS
from .values import LoweringError, Scalar, Tensor

FP8_BITWISE = {"arith.select", "arith.bitcast", "tt.bitcast"}


class BasicMixin:
    # -- simple ops --------------------------------------------------------------------------------------
    def set_result(self, op: Any, t: Tensor, index: int = 0) -> None:
        """Record a result computed in ``t.layout``, converted to the layout assigned to it."""
        res = op.results[index]
        want = self.layout_of(res)
        self.values[res] = t if t.layout == want else self.convert(t, want)

    def op_elementwise(self, op: Any) -> None:
        res = op.results[0]
        if op.name == "arith.select" and tensor_shape(res.type) is None and \
                not isinstance(self.values.get(op.operands[1]), (Scalar, type(None))):
            self.values[res] = self.select_composite(op)  # of block pointers or descriptors
            return
        if tensor_shape(res.type) is None:
            args = [self.scalar_of(v) for v in op.operands]
            v = self.emit_scalar(op, [a.value for a in args], [a.ty for a in args], self.value_type(res))
            self.values[res] = Scalar(v, self.value_type(res))
            return
        self.values[res] = self.elementwise_in(op, self.layout_of(res))

    def emit_scalar(self, op: Any, args: list[str], types: list[str], rty: str) -> str:
        """One elementwise op on scalar values; 8-bit floats are computed in f32 (as Triton does)."""
        fmts = [FP8.get(element_type(v.type)) for v in op.operands]
        rfmt = FP8.get(element_type(op.results[0].type))
        if (any(fmts) or rfmt) and op.name not in FP8_BITWISE:
            from . import fp8
            args = [fp8.to_f32(self.fn, f, a) if f else a for f, a in zip(fmts, args)]
            types = ["float" if f else t for f, t in zip(fmts, types)]
            v = self.scalar.emit(self.fn, op.name, args, types, "float" if rfmt else rty, _attrs(op))
            return fp8.from_f32(self.fn, rfmt, v) if rfmt else v
        return self.scalar.emit(self.fn, op.name, args, types, rty, _attrs(op))

    def elementwise_in(self, op: Any, lay: L.Layout) -> Tensor:
        res = op.results[0]
        rty = self.value_type(res)
        ins = [self.tensor_in(v, lay) if tensor_shape(v.type) is not None else self.scalar_of(v)
               for v in op.operands]
        if op.name == "tt.addptr":
            return self.addptr_in(op, lay, ins)
        types = [i.ty for i in ins]
        seen: dict[tuple, str] = {}
        groups = self.constant_groups(res, lay)
        regs = []
        for r in range(lay.num_regs):
            if groups[r] < r:
                regs.append(regs[groups[r]])
                continue
            args = tuple(i.regs[r] if isinstance(i, Tensor) else i.value for i in ins)
            v = seen.get(args)
            if v is None:
                v = seen[args] = self.emit_scalar(op, list(args), types, rty)
            regs.append(v)
        return Tensor(lay, regs, rty)

    def constant_groups(self, res: Any, lay: L.Layout) -> list[int]:
        """For each register, the first register the axis analysis proves holds the same value (itself when
        none), as Triton's elementwise lowering deduplicates. A mask ``cols < N`` with N a multiple of 16 is
        then one compare per vector rather than per element: per-element predicates overflow the
        multiprocessor's 7 predicate registers, and their spills and the extra compares cost instructions and
        registers (layer norm's variance loop: 212 -> 156 instructions; PERF.md)."""
        const = self.axis.info(res).const
        if len(const) != lay.rank or all(k == 1 for k in const):
            return list(range(lay.num_regs))
        # groups of k (a power of two) aligned elements: two registers whose coordinates agree in the bits
        # at and above log2(k) stay in one group in every thread, whose coordinates differ by an XOR
        ks = [k if k & (k - 1) == 0 else 1 for k in const]
        first: dict[tuple, int] = {}
        return [first.setdefault(tuple(c // k for c, k in zip(lay.reg_coords(r), ks)), r)
                for r in range(lay.num_regs)]

    def addptr_in(self, op: Any, lay: L.Layout, ins: list[Any]) -> Tensor:
        elem, _ = self.pointee(op.results[0].type)
        p, off = ins
        seen: dict[tuple, str] = {}
        groups = self.constant_groups(op.results[0], lay)
        regs = []
        for r in range(lay.num_regs):
            if groups[r] < r:
                regs.append(regs[groups[r]])
                continue
            key = (p.regs[r] if isinstance(p, Tensor) else p.value, off.regs[r] if isinstance(off, Tensor) else off.value)
            v = seen.get(key)
            if v is None:
                v = seen[key] = self.fn.inst(f"getelementptr {elem}, {self.target.global_ptr} {key[0]}, {off.ty} {key[1]}")
            regs.append(v)
        return Tensor(lay, regs, self.target.global_ptr)

    @GPU_OPS.lowers("tt.addptr")
    def op_addptr(self, op: Any) -> None:
        res = op.results[0]
        if tensor_shape(res.type) is None:
            elem, _ = self.pointee(res.type)
            p, off = self.scalar_of(op.operands[0]), self.scalar_of(op.operands[1])
            v = self.fn.inst(f"getelementptr {elem}, {self.target.global_ptr} {p.value}, {off.ty} {off.value}")
            self.values[res] = Scalar(v, self.target.global_ptr)
            return
        self.values[res] = self.elementwise_in(op, self.layout_of(res))

    @GPU_OPS.lowers("arith.constant")
    def op_constant(self, op: Any) -> None:
        res = op.results[0]
        lt = self.value_type(res)
        attr = op.attributes["value"]
        if tensor_shape(res.type) is None:
            self.values[res] = Scalar(scalar_const(attr, lt, element_type(res.type)), lt)
            return
        self.values[res] = self.constant_tile(op, self.layout_of(res))

    def constant_tile(self, op: Any, lay: L.Layout) -> Tensor:
        lt = self.value_type(op.results[0])
        elem = element_type(op.results[0].type)
        dense = ir.DenseElementsAttr(op.attributes["value"])
        if dense.is_splat:
            return Tensor(lay, [scalar_const(dense.get_splat_value(), lt, elem)] * lay.num_regs, lt)
        vals = [scalar_const(dense[i], lt, elem) for i in range(len(dense))]
        g = f"@cst.{len(self.module.globals)}"
        space = self.target.global_addrspace
        body = ", ".join(f"{lt} {v}" for v in vals)
        self.module.globals.append(f"{g} = private unnamed_addr addrspace({space}) constant [{len(vals)} x {lt}] "
                                   f"[{body}], align 16")
        ptr_t = f"ptr addrspace({space})" if space else "ptr"
        regs = []
        for r in range(lay.num_regs):
            idx = self.linear_index(lay, r, lay.shape)
            p = self.fn.inst(f"getelementptr {lt}, {ptr_t} {g}, i32 {idx}")
            regs.append(self.fn.inst(f"load {lt}, {ptr_t} {p}"))
        return Tensor(lay, regs, lt)

    @GPU_OPS.lowers("tt.get_program_id")
    def op_program_id(self, op: Any) -> None:
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        self.values[op.results[0]] = Scalar(self.target.program_id(self.fn, axis), "i32")

    @GPU_OPS.lowers("tt.get_num_programs")
    def op_num_programs(self, op: Any) -> None:
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        self.values[op.results[0]] = Scalar(self.target.num_programs(self.fn, axis), "i32")

    @GPU_OPS.lowers("tt.splat")
    def op_splat(self, op: Any) -> None:
        self.values[op.results[0]] = self.produce(op, self.layout_of(op.results[0]))

    @GPU_OPS.lowers("tt.make_range")
    def op_make_range(self, op: Any) -> None:
        self.values[op.results[0]] = self.produce(op, self.layout_of(op.results[0]))

    @GPU_OPS.lowers("tt.assume", "func.return")
    def op_nothing(self, op: Any) -> None:
        return None

    @GPU_OPS.lowers("tt.debug_barrier")
    def op_barrier(self, op: Any) -> None:
        self.target.barrier(self.fn)
        self.scratch_dirty = False


def _attrs(op: Any) -> dict:
    out = {}
    for name in ("predicate", "propagate_nan"):
        if name in op.attributes:
            out[name] = ir.IntegerAttr(op.attributes[name]).value
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

