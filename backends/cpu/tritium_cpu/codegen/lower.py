"""Lowering of a kernel's tile IR to LLVM IR text for the host CPU.

One LLVM function computes one program instance. Scalars are SSA values; tiles are lazy expressions
(see :mod:`.tiles`) materialized into stack buffers only where needed: at a use that cannot be fused
(a dot, a loop-carried value, a value used several times that is costly to recompute) or before a side
effect could change what a pending load would read.
"""
from __future__ import annotations

from typing import Any, Optional

from tritium import line_info
from tritium._mlir import ir, walk_children

from .blockptr import BlockPtrMixin
from .control import ControlFlowMixin
from .irtext import FP8, SIZES, Function, Module, const, llvm_type
from .memory import MemoryMixin
from .reduce import ReduceMixin
from .regions import RegionMixin
from .scalar import MathLibrary, ScalarEmitter, expensive, is_elementwise
from .shapes import ShapeOpsMixin
from .prefetch import PrefetchMixin
from .streaming import StreamingMixin
from .fastpath import load_masks, select_conditions, with_mask_fast_path
from .frame import Frame
from .variables import describe_results
from .tiles import Buf, Elem, Evaluator, Node, Range, Remap, Scalar, Select2, Splat, Tile, loop_nest, numel

_type_cache: dict[str, tuple[Optional[tuple[int, ...]], str, str]] = {}


def type_info(t: Any) -> tuple[Optional[tuple[int, ...]], str, str]:
    """(shape or None for scalars, LLVM element type, MLIR element type name)."""
    key = str(t)
    info = _type_cache.get(key)
    if info is None:
        if isinstance(t, ir.RankedTensorType):
            rt = ir.RankedTensorType(t)
            elem = str(rt.element_type)
            info = (tuple(rt.shape), llvm_type(elem), elem)
        else:
            info = (None, llvm_type(key), key)
        _type_cache[key] = info
    return info


# tile buffers are a few KB in L1: inline vector loops beat calls of libc's memset/memcpy, which LLVM would
# otherwise make of the loops that fill and copy them
NO_LIBCALLS = '"no-builtin-memset" "no-builtin-memcpy"'


class LoweringError(NotImplementedError):
    pass


class KernelLowering(ControlFlowMixin, MemoryMixin, ReduceMixin, BlockPtrMixin, RegionMixin, ShapeOpsMixin,
                     StreamingMixin, PrefetchMixin):
    def __init__(self, module: Module, math: MathLibrary, kernel: Any, name: str, options: Any, vector_bits: int):
        self.module = module
        self.math = math
        self.scalar = ScalarEmitter(module, math)
        self.kernel = kernel
        self.name = name
        self.options = options
        self.vector_bits = vector_bits
        self.values: dict[Any, Any] = {}
        self.pending: list[Tile] = []
        self.soon: list[Tile] = []            # costly multi-use tiles to materialize before the next op
        self.fusing: Optional[Tile] = None   # one of them, that the next op (a reduction) fills as it reads
        self.has_print = False
        self.has_assert = False
        self.work = 0  # a rough count of element operations per program, for the launcher's threading choice
        self.fn = Function(f"{name}_program", "void",
                           [("ptr", "%args"), ("i32", "%pid0"), ("i32", "%pid1"), ("i32", "%pid2"),
                            ("i32", "%npid0"), ("i32", "%npid1"), ("i32", "%npid2"), ("ptr", "%cancel"),
                            ("ptr", "%arena")],
                           attrs=f"alwaysinline nounwind {NO_LIBCALLS}", linkage="internal")
        self.frame = Frame(self.fn)   # tile buffers on the stack or the heap; cancellation points
        self.arg_types: list[str] = []
        self.streaming_init(kernel)
        self.bounds = None
        self.describe = line_info.variables()     # named values become debugger variables
        if getattr(options, "bounds_check", False):
            from .oob import BoundsChecker
            args = list(kernel.regions[0].blocks[0].arguments)
            self.bounds = self.fn.bounds = BoundsChecker(module, self.fn, name, len(args))

    # -- values ----------------------------------------------------------------------------------
    def set(self, value: Any, v: Any) -> None:
        if isinstance(v, Tile):
            if not v.node.dbg:
                v.node.dbg = self.fn.dbg
            n = 0
            for _ in value.uses:
                n += 1
            v.uses = n
            if v.node.has_load() and not isinstance(v.node, Buf):
                # a load used several times is read again by each use (from cache) rather than copied to a
                # buffer first, unless computing it is costly; side effects materialize it (flush_pending)
                if n > 1 and _costly(v.node):
                    self.soon.append(v)
                else:
                    self.pending.append(v)
            elif n > 1 and _costly(v.node):
                self.soon.append(v)
        self.values[value] = v

    def get(self, value: Any) -> Any:
        try:
            return self.values[value]
        except KeyError:
            raise LoweringError(f"internal error: value {value.get_name()} was not lowered") from None

    def consume(self, value: Any) -> Any:
        v = self.get(value)
        if isinstance(v, Tile):
            v.uses -= 1
        return v

    def as_node(self, v: Any, shape: tuple[int, ...]) -> Node:
        if isinstance(v, Tile):
            return v.node
        return Splat(v.value, shape, v.ty)

    # -- materialization -------------------------------------------------------------------------
    def buffer(self, shape: tuple[int, ...], ty: str) -> str:
        return self.frame.buffer(ty, numel(shape))

    def materialize(self, tile: Tile, into: Optional[str] = None) -> Buf:
        node = tile.node
        if isinstance(node, Buf) and into is None:
            return node
        buf = into or self.frame.materialize_into(self, node)
        self.store_node(node, Buf(buf, node.shape, node.ty))
        tile.node = Buf(buf, node.shape, node.ty)
        if tile in self.pending:
            self.pending.remove(tile)
        return tile.node

    def store_node(self, node: Node, dst: Buf) -> None:
        """Write every element of ``node`` into ``dst`` (same shape)."""
        fn = self.fn
        self.work += numel(node.shape)

        def emit_loop(masks_true: bool) -> None:
            def body(idx: list[str]) -> None:
                ev = Evaluator(fn, masks_true)
                v = ev.value(node, idx)
                p = ev.element_ptr(dst, idx)
                fn.emit(f"store {node.ty} {v}, ptr {p}, align {_align(node.ty)}")
            loop_nest(fn, node.shape, body)

        with_mask_fast_path(fn, node.shape, load_masks(node), emit_loop, select_conditions(node))

    def flush_pending(self, consumed: tuple = ()) -> None:
        """Before a side effect: compute now every pending load that is still needed afterwards."""
        for t in list(self.pending):
            if t.uses > 0 and not isinstance(t.node, Buf):
                self.materialize(t)
            elif isinstance(t.node, Buf) or t.uses <= 0:
                if t in self.pending and t.uses <= 0 and not any(t is c for c in consumed):
                    self.pending.remove(t)

    # -- entry -------------------------------------------------------------------------------------
    def lower(self) -> Function:
        fn = self.fn
        entry = self.kernel.regions[0].blocks[0]
        for i, arg in enumerate(entry.arguments):
            _, lt, _ = type_info(arg.type)
            slot = fn.inst(f"getelementptr inbounds i64, ptr %args, i64 {i}")
            v = fn.inst(f"load {lt}, ptr {slot}, align 8")
            self.arg_types.append(lt)
            self.values[arg] = Scalar(v, lt)
        lines = self.module.line_table
        if lines is not None:
            from tritium.line_info import function_start
            fn.subprogram = lines.subprogram(ir.StringAttr(self.kernel.attributes["sym_name"]).value, fn.name,
                                             function_start(self.kernel))
        self.lower_block(walk_children(self.kernel))
        fn.emit("ret void")
        return fn

    def lower_ops(self, ops: list[Any]) -> None:
        for op in ops:
            self.lower_op(op)
        self.settle_soon(None)

    def lower_op(self, op: Any) -> None:
        fn = self.fn
        saved_dbg = fn.dbg
        if fn.subprogram:
            # the op's Python line goes on what it emits; lazy tiles keep theirs (set), for the loops that
            # evaluate them later
            fn.dbg = self.module.line_table.location(op.location, fn.subprogram)
        if self.soon:
            self.settle_soon(op)
        name = op.name
        handler = _HANDLERS.get(name)
        frame = self.frame
        saved, frame.op = frame.op, op
        frame.serial += 1
        regions = len(op.regions)
        frame.nested += regions   # inside a loop's body a dead-looking buffer may be read again next iteration
        try:
            if handler is not None:
                handler(self, op)
            elif is_elementwise(name):
                self.elementwise(op)
            else:
                raise LoweringError(f"the CPU backend does not support {name} yet")
            if self.describe:
                describe_results(self, op)
        finally:
            frame.nested -= regions
            frame.op = saved
            fn.dbg = saved_dbg

    # -- simple ops --------------------------------------------------------------------------------
    def elementwise(self, op: Any) -> None:
        name = op.name
        res = op.results[0]
        shape, rty, relem = type_info(res.type)
        operands = [self.consume(v) for v in op.operands]
        infos = [type_info(v.type) for v in op.operands]
        arg_types = [i[1] for i in infos]
        attrs = _attrs(op)
        se = self.scalar
        emit_fn = se.emit
        fp8_args = [FP8.get(i[2]) for i in infos]
        if (any(fp8_args) or relem in FP8) and name not in _FP8_BITWISE:
            # float8 has no arithmetic of its own: compute in float32 and round the result back
            math, out_fmt = self.math, FP8.get(relem)
            compute_types = ["float" if f else t for f, t in zip(fp8_args, arg_types)]
            compute_ret = "float" if out_fmt else rty

            def emit_fn(fn, nm, vals, _types, _ret, at, address_mode=False):  # noqa: F811
                vals = [math.call(fn, f"tritium_{f}_to_f32", "float", [("i8", v)]) if f else v
                        for f, v in zip(fp8_args, vals)]
                r = se.emit(fn, nm, vals, compute_types, compute_ret, at, address_mode=address_mode)
                return math.call(fn, f"tritium_f32_to_{out_fmt}", "i8", [("float", r)]) if out_fmt else r

        if shape is None:
            v = emit_fn(self.fn, name, [o.value for o in operands], arg_types, rty, attrs)
            self.values[res] = Scalar(v, rty)
            return
        nodes = [self.as_node(o, shape) for o in operands]
        if name == "arith.divf" and rty == "float" and emit_fn == se.emit and isinstance(nodes[1], Splat):
            # Triton's fp32 `/` is not IEEE on GPUs either (div.full.f32, 2 ulp): a divisor uniform over
            # the tile becomes one reciprocal and a multiply per element (<= 1.5 ulp, no vdivps in the
            # loop); tl.div_rn and fdiv(ieee_rounding=True) stay correctly rounded
            recip = self.fn.inst(f"fdiv float 1.0, {nodes[1].value}")
            name, nodes = "arith.mulf", [nodes[0], Splat(recip, shape, "float")]

        def emit(ev: Evaluator, vals: list[str]) -> str:
            return emit_fn(ev.fn, name, vals, arg_types, rty, attrs, address_mode=ev.address)

        self.set(res, Tile(Elem(name, nodes, shape, rty, emit, attrs)))

    def op_constant(self, op: Any) -> None:
        res = op.results[0]
        shape, lt, elem = type_info(res.type)
        attr = op.attributes["value"]
        if shape is None:
            self.values[res] = Scalar(_scalar_const(attr, lt, elem), lt)
            return
        dense = ir.DenseElementsAttr(attr)
        if dense.is_splat:
            self.set(res, Tile(Splat(_scalar_const(dense.get_splat_value(), lt, elem), shape, lt)))
            return
        vals = [_scalar_const(dense[i], lt, elem) for i in range(len(dense))]
        g = f"@cst.{len(self.module.globals)}"
        body = ", ".join(f"{lt} {v}" for v in vals)
        self.module.globals.append(f"{g} = private unnamed_addr constant [{len(vals)} x {lt}] [{body}], align 16")
        self.set(res, Tile(Buf(g, shape, lt)))

    def op_program_id(self, op: Any) -> None:
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        self.values[op.results[0]] = Scalar(f"%pid{axis}", "i32")

    def op_num_programs(self, op: Any) -> None:
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        self.values[op.results[0]] = Scalar(f"%npid{axis}", "i32")

    def op_make_range(self, op: Any) -> None:
        start = ir.IntegerAttr(op.attributes["start"]).value
        end = ir.IntegerAttr(op.attributes["end"]).value
        self.set(op.results[0], Tile(Range(start, end - start)))

    def op_addptr(self, op: Any) -> None:
        res = op.results[0]
        shape, _, _ = type_info(res.type)
        pelem = _pointee(op.operands[0].type)
        ptr, off = self.consume(op.operands[0]), self.consume(op.operands[1])
        oty = type_info(op.operands[1].type)[1]
        if shape is None:
            self.values[res] = Scalar(_gep(self.fn, pelem, oty, ptr.value, off.value), "ptr")
            return
        self.set(res, Tile(addptr_node(pelem, self.as_node(ptr, shape), self.as_node(off, shape), oty, shape)))

    def op_assume(self, op: Any) -> None:
        self.consume(op.operands[0])

    def op_barrier(self, op: Any) -> None:
        self.flush_pending()

    def op_return(self, op: Any) -> None:
        if len(op.operands):
            raise LoweringError("a kernel cannot return values")


# ops that move float8 bits without interpreting them
_FP8_BITWISE = frozenset({"arith.select", "arith.bitcast", "tt.bitcast"})


def _gep(fn: Function, pelem: str, oty: str, p: str, o: str) -> str:
    if oty != "i64":
        o = fn.inst(f"sext {oty} {o} to i64")
    return fn.inst(f"getelementptr {pelem}, ptr {p}, i64 {o}")


def addptr_node(pelem: str, ptr: Node, off: Node, oty: str, shape: tuple[int, ...]) -> Elem:
    """``ptr + off`` elements of ``pelem``, elementwise."""
    return Elem("tt.addptr", [ptr, off], shape, "ptr", lambda ev, v: _gep(ev.fn, pelem, oty, v[0], v[1]),
                {"pointee_bytes": SIZES[pelem]} if pelem in SIZES else None)


def _align(ty: str) -> int:
    return SIZES[ty]


def _costly(node: Node) -> bool:
    if isinstance(node, Elem):
        return expensive(node.name) or any(_costly(a) for a in node.args) or _depth(node) > 6
    if isinstance(node, (Remap, Select2)):
        return any(_costly(c) for c in node.children())
    return False


def _depth(node: Node) -> int:
    kids = node.children()
    return 1 + max((_depth(k) for k in kids), default=0)


def _pointee(t: Any) -> str:
    s = str(t)
    inner = s[s.index("!tt.ptr<") + len("!tt.ptr<"):]
    depth, end = 1, 0
    for i, ch in enumerate(inner):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
            if depth == 0:
                end = i
                break
    return llvm_type(inner[:end])


def _attrs(op: Any) -> dict:
    out: dict[str, Any] = {}
    for name in ("predicate", "propagate_nan"):
        if name in op.attributes:
            out[name] = ir.IntegerAttr(op.attributes[name]).value
    for name in ("symbol", "libname"):
        if name in op.attributes:
            out[name] = ir.StringAttr(op.attributes[name]).value
    return out


def _scalar_const(attr: Any, lt: str, elem: str = "") -> str:
    if elem in FP8:
        from .irtext import fp8_code
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


_HANDLERS = {
    "arith.constant": KernelLowering.op_constant,
    "tt.get_program_id": KernelLowering.op_program_id,
    "tt.get_num_programs": KernelLowering.op_num_programs,
    "tt.make_range": KernelLowering.op_make_range,
    "tt.splat": ShapeOpsMixin.op_splat,
    "tt.broadcast": ShapeOpsMixin.op_broadcast,
    "tt.expand_dims": ShapeOpsMixin.op_expand_dims,
    "tt.reshape": ShapeOpsMixin.op_reshape,
    "tt.trans": ShapeOpsMixin.op_trans,
    "tt.cat": ShapeOpsMixin.op_cat,
    "tt.join": ShapeOpsMixin.op_join,
    "tt.split": ShapeOpsMixin.op_split,
    "tt.fp_to_fp": ShapeOpsMixin.op_fp_to_fp,
    "tt.addptr": KernelLowering.op_addptr,
    "tt.assume": KernelLowering.op_assume,
    "tt.debug_barrier": KernelLowering.op_barrier,
    "func.return": KernelLowering.op_return,
    "tt.load": MemoryMixin.op_load,
    "tt.store": MemoryMixin.op_store,
    "tt.atomic_rmw": MemoryMixin.op_atomic_rmw,
    "tt.atomic_cas": MemoryMixin.op_atomic_cas,
    "tt.print": MemoryMixin.op_print,
    "tt.assert": MemoryMixin.op_assert,
    "tt.gather": MemoryMixin.op_gather,
    "tt.histogram": MemoryMixin.op_histogram,
    "tt.dot": ReduceMixin.op_dot,
    "tt.reduce": ReduceMixin.op_reduce,
    "tt.scan": ReduceMixin.op_scan,
    "tt.make_block_ptr": BlockPtrMixin.op_make_block_ptr,
    "tt.advance": BlockPtrMixin.op_advance,
    "tt.make_tensor_descriptor": BlockPtrMixin.op_make_tensor_descriptor,
    "tt.descriptor_load": BlockPtrMixin.op_descriptor_load,
    "tt.descriptor_store": BlockPtrMixin.op_descriptor_store,
    "tt.descriptor_reduce": BlockPtrMixin.op_descriptor_reduce,
    "tt.descriptor_gather": BlockPtrMixin.op_descriptor_gather,
    "tt.descriptor_scatter": BlockPtrMixin.op_descriptor_scatter,
    "tt.map_elementwise": RegionMixin.op_map_elementwise,
    "tt.unsplat": RegionMixin.op_unsplat,
    "scf.for": ControlFlowMixin.op_for,
    "scf.if": ControlFlowMixin.op_if,
    "scf.while": ControlFlowMixin.op_while,
}
