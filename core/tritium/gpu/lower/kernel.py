"""The GPU lowering: one LLVM function per kernel, every tile op distributed over the program's threads.

Each tile value lives in registers in the layout the ``ttgir`` stage assigned (:mod:`tritium.gpu.assign`).
Where an op needs an operand in another layout, :meth:`KernelLowering.tensor_in` gets it: a register
renaming when the thread already holds the data, recomputation for cheap index arithmetic, or a trip
through shared memory (:mod:`.convert`).
"""
from __future__ import annotations

from typing import Any, Optional

from ... import line_info
from ..._mlir import ir, walk_children
from ...line_info import function_start
from ...llvmir.text import Function, Module
from ...llvmir.types import ELEMENT_TYPES
from .. import layout as L
from ..assign import LayoutPolicy, element_type, read_layouts, tensor_shape
from .basic import BasicMixin
from .blockptr import BlockPtrMixin
from .control import ControlMixin
from .convert import ConvertMixin
from .debug import DebugMixin
from .dot import DotMixin
from .loops import LoopFrame, SharedBuffersMixin
from .memory import MemoryMixin
from .optable import GPU_OPS
from .pipeline import PipelineMixin
from .reduce import ReduceMixin
from .scalar import EXPENSIVE, ScalarEmitter, is_scalar_op
from .shape import ShapeMixin
from .shared import SharedMixin, SharedTile
from .smem_alloc import SharedAllocator
from .values import LoweringError, Scalar, Tensor, owner_op
from .variables import describe_results

REMAT_OPS = {"tt.splat", "tt.make_range", "arith.constant", "tt.broadcast", "tt.expand_dims"}

# Which op each handler lowers is said beside it (@GPU_OPS.lowers in basic.py, shape.py, memory.py...); what no
# handler names is either elementwise or refused here.
GPU_OPS.family("elementwise ops (arith, math and the tt casts and math of scalar.py's is_scalar_op), one register "
               "at a time: BasicMixin.op_elementwise", is_scalar_op)
GPU_OPS.refuse("tt.dot_scaled", "the frontend emulates tl.dot_scaled with ordinary ops (language/scaled.py) and "
                                "never emits tt.dot_scaled; lower the emulated form or add a handler in dot.py")


class KernelLowering(BasicMixin, ConvertMixin, ShapeMixin, MemoryMixin, ReduceMixin, DotMixin, ControlMixin, DebugMixin,
                     SharedMixin, PipelineMixin, BlockPtrMixin, SharedBuffersMixin):
    def __init__(self, module: Module, target: Any, func: Any, num_warps: int, options: Any, name: str) -> None:
        self.module = module
        self.target = target
        self.func = func
        self.num_warps = num_warps
        self.warp_size = target.warp_size
        self.options = options
        self.name = name
        self.layouts = read_layouts(func)
        self.scalar = ScalarEmitter(module, target, getattr(options, "enable_fp_fusion", True))
        self.values: dict[Any, Any] = {}
        self.memo: list[dict] = [{}]
        self._remat: dict[Any, bool] = {}
        self._thread_parts: dict[Any, str] = {}
        self._preds: dict[Any, Optional[str]] = {}
        self.smem = SharedAllocator()
        self.scratch_dirty = False              # shared memory was read since the last barrier
        self._scratch: Optional[tuple[int, str]] = None     # the open scratch buffer and its address
        self.loops: list[LoopFrame] = []        # the loops being lowered, innermost last
        self.has_print = False
        self.has_assert = False
        self.fn: Function = None  # type: ignore[assignment]
        self.handlers = GPU_OPS.bind(self)

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
        lines = self.module.line_table
        self.describe = lines is not None and line_info.variables()   # named values become debugger variables
        if lines is not None:
            self.fn.subprogram = lines.subprogram(ir.StringAttr(self.func.attributes["sym_name"]).value,
                                                  self.fn.name, function_start(self.func))
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
        handler = self.handlers.get(name)
        fn = self.fn
        saved_dbg = fn.dbg
        if fn.subprogram:     # the op's Python line goes on every instruction it emits
            fn.dbg = self.module.line_table.location(op.location, fn.subprogram)
        try:
            if handler is not None:
                handler(op)
            elif is_scalar_op(name):
                self.op_elementwise(op)
            else:
                raise LoweringError(GPU_OPS.unsupported(name))
            if self.describe:
                describe_results(self, op)
        except LoweringError as exc:
            if "at " not in str(exc)[:3] and not getattr(exc, "located", False):
                exc.located = True  # type: ignore[attr-defined]
                exc.args = (line_info.located(exc.args[0], self.func, op), )
            raise
        finally:
            fn.dbg = saved_dbg

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

