"""What the parts of the GPU lowering share while lowering one kernel: the LLVM module and function being
written, the target's hooks, the lowered values and their layouts, this thread's identity and the shared-memory
buffers.

The op handlers (basic.py, shape.py, memory.py...) receive this context, or are methods of collaborators built
on it (:mod:`.kernel`). What the context cannot do itself it asks of the kernel lowering, which defines it:
lowering nested ops (:meth:`Context.lower_ops`), recomputing a cheap value in another layout
(:meth:`Context.produce`), converting between layouts (:meth:`Context.convert`) and reading a tile from shared
memory (:meth:`Context.read_tile`).

The shared-memory buffers' lifetimes are :class:`~.shared_buffers.SharedBuffers`' (Context's base).
"""
from __future__ import annotations

from typing import Any, Optional

from ...llvmir.text import Function, Module
from ...llvmir.types import ELEMENT_TYPES
from .. import layout as L
from ..assign import LayoutPolicy, element_type, read_layouts, tensor_shape
from ..axis_info import AxisAnalysis
from .loops import LoopFrame
from .scalar import EXPENSIVE, ScalarEmitter, is_scalar_op
from .shared import SharedTile
from .shared_buffers import SharedBuffers
from .smem_alloc import SharedAllocator
from .values import LoweringError, Scalar, Tensor, owner_op

REMAT_OPS = {"tt.splat", "tt.make_range", "arith.constant", "tt.broadcast", "tt.expand_dims"}


def staged_row_vector(ctx: "Context", v: Any) -> bool:
    """``v`` is a load left in its pipeline stage (pipeline.py) until ``expand_dims`` users read it, each in the
    layout its own users need: reading it again is one shared load, cheaper than converting it."""
    if not isinstance(ctx.values.get(v), SharedTile):
        return False
    o = owner_op(v)
    return o is not None and o.name == "tt.load" and all(u.owner.name == "tt.expand_dims" for u in v.uses)


class Context(SharedBuffers):
    """One kernel's lowering state and the operations on values every op handler needs."""

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
        self.deferred_dots: set[Any] = set()    # dots of the pipelined loop whose completion wait comes later
        self.has_print = False
        self.has_assert = False
        self._axis: Optional[AxisAnalysis] = None
        self.assert_messages: list[str] = []    # the messages of the kernel's device_asserts, by index
        self.fn: Function = None  # type: ignore[assignment]
        # set by the kernel lowering once the function exists
        self.tid = self.lane = self.warp = ""   # this thread's index in the program, lane and warp (i32)
        self._uniform_warp: Optional[str] = None
        self.smem_base = ""                     # the program's shared memory
        self.describe = False                   # named values become debugger variables

    # -- defined by the kernel lowering (kernel.py) ------------------------------------------------------
    def lower_op(self, op: Any) -> None:
        raise NotImplementedError

    def lower_ops(self, ops: list[Any]) -> None:
        """Lower ``ops`` in order (a loop's body, a branch of an ``scf.if``)."""
        raise NotImplementedError

    def produce(self, op: Any, lay: L.Layout) -> Tensor:
        """Compute the single result of a cheap op in layout ``lay``."""
        raise NotImplementedError

    def convert(self, t: Tensor, dst: L.Layout) -> Tensor:
        """``t`` in layout ``dst``."""
        raise NotImplementedError

    def read_tile(self, tile: SharedTile, lay: L.Layout, ty: str) -> Tensor:
        """A tile in shared memory, read into registers in layout ``lay``."""
        raise NotImplementedError

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

    @property
    def uniform_warp(self) -> str:
        """This thread's warp, computed so that the target's code generator knows it is the same in every lane
        (for what should live in uniform registers, e.g. a warpgroup's tensor-core descriptors). Only where
        asked: kernels without such uses keep ``warp`` (as a uniform value it cost a layer norm 6 registers)."""
        if self._uniform_warp is None:
            self._uniform_warp = self.target.uniform_warp(self.fn, self.tid, self.num_warps)
        return self._uniform_warp

    def thread_part(self, lay: L.Layout, dim: int) -> str:
        """This thread's contribution (lanes and warps) to coordinate ``dim`` of ``lay``: "0" or an i32."""
        key = (lay.lane, lay.warp, dim)
        got = self._thread_parts.get(key)
        if got is None:
            got = self.bits_value([(self.lane, [b[dim] for b in lay.lane]),
                                    (self.warp, [b[dim] for b in lay.warp])])
            self._thread_parts[key] = got
        return got

    def bits_value(self, sources: list[tuple[str, list[int]]]) -> str:
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

    @property
    def axis(self) -> AxisAnalysis:
        """What is known of each value's contiguity, divisibility and constancy (computed at the first use)."""
        if self._axis is None:
            self._axis = AxisAnalysis(self.func)
        return self._axis

    # -- values ------------------------------------------------------------------------------------------
    def scalar_of(self, v: Any) -> Scalar:
        got = self.values.get(v)
        if not isinstance(got, Scalar):
            raise LoweringError(f"kernel `{self.name}`: expected a scalar for {v.get_name()}, got {got}")
        return got

    def set_result(self, op: Any, t: Tensor, index: int = 0) -> None:
        """Record a result computed in ``t.layout``, converted to the layout assigned to it."""
        res = op.results[index]
        want = self.layout_of(res)
        if t.layout == want:
            self.values[res] = t
        elif len(op.results) == 1 and self.rematerializable(res):
            # cheap index arithmetic (aranges, splats and their sums) is computed again in the assigned
            # layout: no shared-memory round trip and barrier, as Triton rematerializes them
            self.values[res] = self.produce(op, want)
        else:
            self.values[res] = self.convert(t, want)

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
        if staged_row_vector(self, v):
            return True
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
