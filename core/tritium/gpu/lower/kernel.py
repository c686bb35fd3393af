"""The GPU lowering: one LLVM function per kernel, every tile op distributed over the program's threads.

Each tile value lives in registers in the layout the ``ttgir`` stage assigned (:mod:`tritium.gpu.assign`).
Where an op needs an operand in another layout, :meth:`KernelLowering.tensor_in` gets it: a register
renaming when the thread already holds the data, recomputation for cheap index arithmetic, or a trip
through shared memory (:mod:`.convert`).
"""
from __future__ import annotations

from typing import Any, Optional

from ..._mlir import ir, walk_children
from .. import layout as L
from ..assign import element_type, read_layouts, tensor_shape
from ..irtext import ELEMENT_TYPES, FP8, Function, Module, const
from .blockptr import BlockPtrMixin
from .control import ControlMixin
from .convert import ConvertMixin
from .debug import DebugMixin
from .dot import DotMixin
from .memory import MemoryMixin
from .reduce import ReduceMixin
from .pipeline import PipelineMixin
from .scalar import EXPENSIVE, ScalarEmitter, is_scalar_op
from .shape import ShapeMixin
from .shared import SharedMixin, SharedTile
from .values import LoweringError, Scalar, Tensor, owner_op

FP8_BITWISE = {"arith.select", "arith.bitcast", "tt.bitcast"}
REMAT_OPS = {"tt.splat", "tt.make_range", "arith.constant", "tt.broadcast", "tt.expand_dims"}


class KernelLowering(ConvertMixin, ShapeMixin, MemoryMixin, ReduceMixin, DotMixin, ControlMixin, DebugMixin,
                     SharedMixin, PipelineMixin, BlockPtrMixin):
    def __init__(self, module: Module, target: Any, func: Any, num_warps: int, options: Any, name: str) -> None:
        self.module = module
        self.target = target
        self.func = func
        self.num_warps = num_warps
        self.warp_size = target.warp_size
        self.options = options
        self.name = name
        self.layouts = read_layouts(func)
        self.scalar = ScalarEmitter(module, target)
        self.values: dict[Any, Any] = {}
        self.memo: list[dict] = [{}]
        self._remat: dict[Any, bool] = {}
        self._thread_parts: dict[Any, str] = {}
        self._preds: dict[Any, Optional[str]] = {}
        self.scratch_bytes = 0
        self.scratch_dirty = False
        self.persistent_buffers: list[int] = []
        self.pipeline_depth = 0                 # > 0 while pipeline stages are live
        self.scratch_in_pipeline = False        # the scratch area was used while they were
        self.has_print = False
        self.has_assert = False
        self.fn: Function = None  # type: ignore[assignment]

    # -- types -------------------------------------------------------------------------------------------
    def llty(self, mlir_elem: str) -> str:
        if mlir_elem.startswith("!tt.ptr"):
            return self.target.global_ptr
        t = ELEMENT_TYPES.get(mlir_elem)
        if t is None:
            raise LoweringError(f"kernel `{self.name}`: GPU backends have no representation for type {mlir_elem}")
        return t

    def value_type(self, v: Any) -> str:
        return self.llty(element_type(v.type))

    def pointee(self, ptr_type: Any) -> tuple[str, str]:
        """(LLVM type in memory, MLIR element type) of what a pointer type points to."""
        elem = element_type(ptr_type)
        inner = elem.split("!tt.ptr<", 1)[1].rsplit(">", 1)[0]
        if inner.startswith("!tt.ptr"):
            return self.target.global_ptr, inner
        lt = self.llty(inner)
        return ("i8" if lt == "i1" else lt), inner

    def layout_of(self, v: Any) -> L.Layout:
        lay = self.layouts.get(v)
        if lay is None:
            from ..assign import LayoutPolicy
            lay = LayoutPolicy(self.num_warps, self.warp_size).default(tensor_shape(v.type))
            self.layouts[v] = lay
        return lay

    # -- thread identity ---------------------------------------------------------------------------------
    def prologue(self) -> None:
        fn = self.fn
        self.tid = self.target.thread_id(fn)
        ws = self.warp_size
        self.lane = fn.pinst(f"and i32 {self.tid}, {ws - 1}", "lane")
        self.warp = fn.pinst(f"lshr i32 {self.tid}, {ws.bit_length() - 1}", "warp")

    def thread_part(self, lay: L.Layout, dim: int) -> str:
        """This thread's contribution (lanes and warps) to coordinate ``dim`` of ``lay``: "0" or an i32."""
        key = (lay.lane, lay.warp, dim)
        got = self._thread_parts.get(key)
        if got is None:
            got = self._bits_value([(self.lane, [b[dim] for b in lay.lane]),
                                    (self.warp, [b[dim] for b in lay.warp])])
            self._thread_parts[key] = got
        return got

    def _bits_value(self, sources: list[tuple[str, list[int]]]) -> str:
        """XOR over the set bits of each source value of the given constants, in the prologue."""
        fn = self.fn
        terms: list[str] = []
        for src, vals in sources:
            i = 0
            while i < len(vals):
                v = vals[i]
                if v == 0:
                    i += 1
                    continue
                # a run of bits mapping to consecutive powers of two becomes one shift and mask
                j = i
                if v & (v - 1) == 0:
                    while j + 1 < len(vals) and vals[j + 1] == vals[j] * 2:
                        j += 1
                    width = j - i + 1
                    x = fn.pinst(f"lshr i32 {src}, {i}") if i else src
                    x = fn.pinst(f"and i32 {x}, {(1 << width) - 1}")
                    sh = v.bit_length() - 1
                    terms.append(fn.pinst(f"shl i32 {x}, {sh}") if sh else x)
                else:
                    bit = fn.pinst(f"lshr i32 {src}, {i}")
                    bit = fn.pinst(f"and i32 {bit}, 1")
                    terms.append(fn.pinst(f"mul i32 {bit}, {v}"))
                i = j + 1
        if not terms:
            return "0"
        acc = terms[0]
        for t in terms[1:]:
            acc = fn.pinst(f"xor i32 {acc}, {t}")
        return acc

    def coord(self, lay: L.Layout, r: int, dim: int) -> str:
        thr = self.thread_part(lay, dim)
        c = lay.reg_coords(r)[dim]
        if thr == "0":
            return str(c)
        if c == 0:
            return thr
        op = "or disjoint" if self._disjoint(lay, dim) else "xor"
        return self.fn.inst(f"{op} i32 {thr}, {c}")

    def _disjoint(self, lay: L.Layout, dim: int) -> bool:
        rbits = 0
        for b in lay.reg:
            rbits |= b[dim]
        tbits = 0
        for b in lay.lane + lay.warp:
            if tbits & b[dim] or b[dim] & (b[dim] - 1):
                return False
            tbits |= b[dim]
        return not (rbits & tbits)

    def unique_pred(self, lay: Optional[L.Layout]) -> Optional[str]:
        """True in the threads that hold the first copy of their data (None: every thread does). For
        scalars (``lay`` None) only thread 0."""
        key = None if lay is None else (lay.lane, lay.warp)
        if key in self._preds:
            return self._preds[key]
        fn = self.fn
        if lay is None:
            pred: Optional[str] = fn.pinst(f"icmp eq i32 {self.tid}, 0", "first")
        else:
            conds = []
            for src, mask in ((self.lane, lay.dup_mask("lane")), (self.warp, lay.dup_mask("warp"))):
                if mask:
                    x = fn.pinst(f"and i32 {src}, {mask}")
                    conds.append(fn.pinst(f"icmp eq i32 {x}, 0"))
            pred = None
            for c in conds:
                pred = c if pred is None else fn.pinst(f"and i1 {pred}, {c}")
        self._preds[key] = pred
        return pred

    def and_pred(self, a: Optional[str], b: Optional[str]) -> Optional[str]:
        if a is None or a == "true":
            return b
        if b is None or b == "true":
            return a
        return self.fn.inst(f"and i1 {a}, {b}")

    # -- shared memory -----------------------------------------------------------------------------------
    def scratch(self, nbytes: int) -> str:
        """The base of the scratch area, safe to write (a barrier first if earlier readers may remain)."""
        if self.scratch_dirty:
            self.target.barrier(self.fn)
            self.scratch_dirty = False
        if self.pipeline_depth:
            self.scratch_in_pipeline = True
        self.scratch_bytes = max(self.scratch_bytes, nbytes)
        return self.smem_base

    def scratch_read_done(self) -> None:
        self.scratch_dirty = True

    def iadd(self, a: str, b: str) -> str:
        """i32 a + b, folded when both are literals."""
        if a.lstrip("-").isdigit() and b.lstrip("-").isdigit():
            return str(int(a) + int(b))
        if a == "0":
            return b
        if b == "0":
            return a
        return self.fn.inst(f"add i32 {a}, {b}")

    def imul(self, a: str, c: int) -> str:
        if a.lstrip("-").isdigit():
            return str(int(a) * c)
        if c == 1:
            return a
        if c == 0:
            return "0"
        return self.fn.inst(f"mul i32 {a}, {c}")

    def smem_ptr(self, base: str, byte_offset: str) -> str:
        if byte_offset == "0":
            return base
        return self.fn.inst(f"getelementptr inbounds i8, {self.target.shared_ptr} {base}, i32 {byte_offset}")

    # -- values ------------------------------------------------------------------------------------------
    def scalar_of(self, v: Any) -> Scalar:
        got = self.values.get(v)
        if not isinstance(got, Scalar):
            raise LoweringError(f"kernel `{self.name}`: expected a scalar for {v.get_name()}, got {got}")
        return got

    def tensor_in(self, v: Any, want: L.Layout) -> Tensor:
        """``v`` in layout ``want`` (splatting scalars, recomputing or converting tiles)."""
        got = self.values.get(v)
        if got is None:
            raise LoweringError(f"kernel `{self.name}`: internal error: {v.get_name()} was not lowered")
        if isinstance(got, Scalar):
            return Tensor(want, [got.value] * want.num_regs, got.ty)
        if not isinstance(got, SharedTile) and got.layout == want:
            return got
        key = (v, want)
        for scope in reversed(self.memo):
            if key in scope:
                return scope[key]
        if isinstance(got, SharedTile):
            out = self.read_tile(got, want, self.value_type(v))
        elif self.rematerializable(v):
            out = self.produce(owner_op(v), want)
        else:
            out = self.convert(got, want)
        self.memo[-1][key] = out
        return out

    def tensor(self, v: Any) -> Tensor:
        got = self.values[v]
        if isinstance(got, (Scalar, SharedTile)):
            return self.tensor_in(v, self.layout_of(v))
        return got

    def rematerializable(self, v: Any) -> bool:
        got = self._remat.get(v)
        if got is None:
            op = owner_op(v)
            got = False
            if op is not None and len(op.results) == 1 and (
                    op.name in REMAT_OPS or (is_scalar_op(op.name) and op.name not in EXPENSIVE)
                    or op.name == "tt.addptr"):
                got = all(tensor_shape(o.type) is None or self.rematerializable(o) for o in op.operands)
            self._remat[v] = got
        return got

    def push_scope(self) -> None:
        self.memo.append({})

    def pop_scope(self) -> None:
        self.memo.pop()

    # -- driving -----------------------------------------------------------------------------------------
    def lower(self, params: list[str]) -> Function:
        self.fn, args = self.target.kernel_function(self.module, self.name, params, self.num_warps)
        self.prologue()
        self.smem_base = self.target.shared_base(self.fn)
        entry = self.func.regions[0].blocks[0]
        for arg, name, ty in zip(entry.arguments, args, params):
            self.values[arg] = Scalar(name, ty)
        self.lower_ops(walk_children(self.func))
        self.fn.emit("ret void")
        return self.fn

    def lower_ops(self, ops: list[Any]) -> None:
        for op in ops:
            self.lower_op(op)

    def lower_op(self, op: Any) -> None:
        name = op.name
        handler = HANDLERS.get(name)
        try:
            if handler is not None:
                handler(self, op)
            elif is_scalar_op(name):
                self.op_elementwise(op)
            else:
                raise LoweringError(f"GPU backends cannot lower {name} yet")
        except LoweringError as exc:
            if "at " not in str(exc)[:3] and not getattr(exc, "located", False):
                exc.located = True  # type: ignore[attr-defined]
                exc.args = (f"{exc.args[0]} (kernel `{self.name}`, {_where(op)})", )
            raise

    def produce(self, op: Any, lay: L.Layout) -> Tensor:
        """Compute the single result of a cheap op in layout ``lay``."""
        name = op.name
        if name == "tt.splat":
            s = self.scalar_of(op.operands[0])
            return Tensor(lay, [s.value] * lay.num_regs, s.ty)
        if name == "tt.make_range":
            start = ir.IntegerAttr(op.attributes["start"]).value
            regs = []
            for r in range(lay.num_regs):
                c = self.coord(lay, r, 0)
                regs.append(str(int(c) + start) if c.lstrip("-").isdigit() else
                            (self.fn.inst(f"add i32 {c}, {start}") if start else c))
            return Tensor(lay, regs, "i32")
        if name == "arith.constant":
            return self.constant_tile(op, lay)
        if name == "tt.broadcast":
            src_shape = tensor_shape(op.operands[0].type)
            src = self.tensor_in(op.operands[0], L.restrict(lay, src_shape))
            return Tensor(lay, src.regs, src.ty)
        if name == "tt.expand_dims":
            axis = ir.IntegerAttr(op.attributes["axis"]).value
            src = self.tensor_in(op.operands[0], L.squeeze(lay, axis))
            return Tensor(lay, src.regs, src.ty)
        return self.elementwise_in(op, lay)

    # -- simple ops --------------------------------------------------------------------------------------
    def set_result(self, op: Any, t: Tensor, index: int = 0) -> None:
        """Record a result computed in ``t.layout``, converted to the layout assigned to it."""
        res = op.results[index]
        want = self.layout_of(res)
        self.values[res] = t if t.layout == want else self.convert(t, want)

    def op_elementwise(self, op: Any) -> None:
        res = op.results[0]
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
        regs = []
        for r in range(lay.num_regs):
            args = tuple(i.regs[r] if isinstance(i, Tensor) else i.value for i in ins)
            v = seen.get(args)
            if v is None:
                v = seen[args] = self.emit_scalar(op, list(args), types, rty)
            regs.append(v)
        return Tensor(lay, regs, rty)

    def addptr_in(self, op: Any, lay: L.Layout, ins: list[Any]) -> Tensor:
        elem, _ = self.pointee(op.results[0].type)
        p, off = ins
        seen: dict[tuple, str] = {}
        regs = []
        for r in range(lay.num_regs):
            key = (p.regs[r] if isinstance(p, Tensor) else p.value, off.regs[r] if isinstance(off, Tensor) else off.value)
            v = seen.get(key)
            if v is None:
                v = seen[key] = self.fn.inst(f"getelementptr {elem}, {self.target.global_ptr} {key[0]}, {off.ty} {key[1]}")
            regs.append(v)
        return Tensor(lay, regs, self.target.global_ptr)

    def op_addptr(self, op: Any) -> None:
        res = op.results[0]
        if tensor_shape(res.type) is None:
            elem, _ = self.pointee(res.type)
            p, off = self.scalar_of(op.operands[0]), self.scalar_of(op.operands[1])
            v = self.fn.inst(f"getelementptr {elem}, {self.target.global_ptr} {p.value}, {off.ty} {off.value}")
            self.values[res] = Scalar(v, self.target.global_ptr)
            return
        self.values[res] = self.elementwise_in(op, self.layout_of(res))

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

    def linear_index(self, lay: L.Layout, r: int, shape: tuple[int, ...]) -> str:
        """Row-major index of the element register ``r`` holds (i32 SSA value or literal)."""
        acc = "0"
        stride = 1
        for d in range(len(shape) - 1, -1, -1):
            c = self.coord(lay, r, d)
            term = c if stride == 1 else (str(int(c) * stride) if c.isdigit() else
                                          self.fn.inst(f"mul i32 {c}, {stride}"))
            acc = term if acc == "0" else (str(int(acc) + int(term)) if acc.isdigit() and term.isdigit()
                                           else self.fn.inst(f"add i32 {acc}, {term}"))
            stride *= shape[d]
        return acc

    def op_program_id(self, op: Any) -> None:
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        self.values[op.results[0]] = Scalar(self.target.program_id(self.fn, axis), "i32")

    def op_num_programs(self, op: Any) -> None:
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        self.values[op.results[0]] = Scalar(self.target.num_programs(self.fn, axis), "i32")

    def op_splat(self, op: Any) -> None:
        self.values[op.results[0]] = self.produce(op, self.layout_of(op.results[0]))

    def op_make_range(self, op: Any) -> None:
        self.values[op.results[0]] = self.produce(op, self.layout_of(op.results[0]))

    def op_nothing(self, op: Any) -> None:
        return None

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
        from .fp8 import encode
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


def _where(op: Any) -> str:
    import re
    m = re.search(r'loc\("([^"]*)":(\d+):(\d+)\)', str(op.location))
    return f"{m.group(1)}:{m.group(2)}" if m else op.name


HANDLERS = {
    "arith.constant": KernelLowering.op_constant,
    "tt.get_program_id": KernelLowering.op_program_id,
    "tt.get_num_programs": KernelLowering.op_num_programs,
    "tt.make_range": KernelLowering.op_make_range,
    "tt.splat": KernelLowering.op_splat,
    "tt.addptr": KernelLowering.op_addptr,
    "tt.assume": KernelLowering.op_nothing,
    "func.return": KernelLowering.op_nothing,
    "tt.debug_barrier": KernelLowering.op_barrier,
    "tt.broadcast": ShapeMixin.op_broadcast,
    "tt.expand_dims": ShapeMixin.op_expand_dims,
    "tt.reshape": ShapeMixin.op_reshape,
    "tt.trans": ShapeMixin.op_trans,
    "tt.cat": ShapeMixin.op_cat,
    "tt.join": ShapeMixin.op_join,
    "tt.split": ShapeMixin.op_split,
    "tt.fp_to_fp": ShapeMixin.op_fp_to_fp,
    "tt.extern_elementwise": ShapeMixin.op_extern,
    "tt.make_block_ptr": BlockPtrMixin.op_make_block_ptr,
    "tt.advance": BlockPtrMixin.op_advance,
    "tt.make_tensor_descriptor": BlockPtrMixin.op_make_tensor_descriptor,
    "tt.descriptor_load": BlockPtrMixin.op_descriptor_load,
    "tt.descriptor_store": BlockPtrMixin.op_descriptor_store,
    "tt.descriptor_reduce": BlockPtrMixin.op_descriptor_reduce,
    "tt.descriptor_gather": BlockPtrMixin.op_descriptor_gather,
    "tt.descriptor_scatter": BlockPtrMixin.op_descriptor_scatter,
    "tt.unsplat": BlockPtrMixin.op_unsplat,
    "tt.map_elementwise": BlockPtrMixin.op_map_elementwise,
    "tt.load": MemoryMixin.op_load,
    "tt.store": MemoryMixin.op_store,
    "tt.atomic_rmw": MemoryMixin.op_atomic_rmw,
    "tt.atomic_cas": MemoryMixin.op_atomic_cas,
    "tt.gather": MemoryMixin.op_gather,
    "tt.histogram": MemoryMixin.op_histogram,
    "tt.print": DebugMixin.op_print,
    "tt.assert": DebugMixin.op_assert,
    "tt.dot": DotMixin.op_dot,
    "tt.reduce": ReduceMixin.op_reduce,
    "tt.scan": ReduceMixin.op_scan,
    "scf.for": ControlMixin.op_for,
    "scf.if": ControlMixin.op_if,
    "scf.while": ControlMixin.op_while,
}
