"""The GPU lowering: one LLVM function per kernel, every tile op distributed over the program's threads.

Each tile value lives in registers in the layout the ``ttgir`` stage assigned (:mod:`tritium.gpu.assign`).
Where an op needs an operand in another layout, :meth:`.context.Context.tensor_in` gets it: a register
renaming when the thread already holds the data, recomputation for cheap index arithmetic, or a trip
through shared memory (:mod:`.convert`).

The handlers are functions of the :class:`~.context.Context` (basic.py, shape.py, memory.py, blockptr.py,
reduce.py, dot.py, control.py, pipeline.py, debug.py), each registered beside it with ``@GPU_OPS.lowers``;
:class:`KernelLowering` is the context plus the dispatch and the hooks the context leaves to it (lowering nested
ops, recomputing cheap values, layout conversion, reading shared tiles).
"""
from __future__ import annotations

from typing import Any

from ... import line_info
from ..._mlir import ir, walk_children
from ...line_info import function_start
from ...llvmir.text import Function, Module
from .. import layout as L
from ..assign import tensor_shape
# the handler modules: importing them registers their functions in GPU_OPS
from . import basic, blockptr, control, debug, dot, memory, reduce, shape  # noqa: F401
from . import clusters, hazards, inline_asm
from .context import Context
from .convert import convert as convert_layout
from .optable import GPU_OPS
from .scalar import is_scalar_op
from .shared import SharedTile
from .tiles import read_tile as read_shared_tile
from .values import LoweringError, Scalar, Tensor
from .variables import describe_results

# Which op each handler lowers is said beside it (@GPU_OPS.lowers in basic.py, shape.py, memory.py...); what no
# handler names is either elementwise or refused here.
GPU_OPS.family("elementwise ops (arith, math and the tt casts and math of scalar.py's is_scalar_op), one register "
               "at a time: basic.op_elementwise", is_scalar_op)
GPU_OPS.refuse("tt.dot_scaled", "the frontend emulates tl.dot_scaled with ordinary ops (language/scaled.py) and "
                                "never emits tt.dot_scaled; lower the emulated form or add a handler in dot.py")


class KernelLowering(Context):
    def __init__(self, module: Module, target: Any, func: Any, num_warps: int, options: Any, name: str) -> None:
        super().__init__(module, target, func, num_warps, options, name)
        self.handlers = GPU_OPS.bind(self, context=self)

    def convert(self, t: Tensor, dst: L.Layout) -> Tensor:
        return convert_layout(self, t, dst)

    def read_tile(self, tile: SharedTile, lay: L.Layout, ty: str) -> Tensor:
        return read_shared_tile(self, tile, lay, ty)

    # -- driving -----------------------------------------------------------------------------------------
    def lower(self, params: list[str]) -> Function:
        self.fn, args = self.target.kernel_function(self.module, self.name, params, self.num_warps)
        lines = self.module.line_table
        self.describe = lines is not None and line_info.variables()   # named values become debugger variables
        if lines is not None:
            self.fn.subprogram = lines.subprogram(ir.StringAttr(self.func.attributes["sym_name"]).value,
                                                  self.fn.name, function_start(self.func))
        self.prologue()
        clusters.leader_only(self)
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
            if name in hazards.STORES:    # a store overwriting what other threads read for it waits for them
                hazards.barrier_before_store(self, op)
            if handler is not None:
                handler(op)
            elif is_scalar_op(name):
                basic.op_elementwise(self, op)
            else:
                raise LoweringError(GPU_OPS.unsupported(name))
            if self.describe:
                describe_results(self, op)
        except LoweringError as exc:
            if "at " not in str(exc)[:3] and not exc.located:
                exc.located = True
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
            return basic.constant_tile(self, op, lay)
        if name == "tt.broadcast":
            src_shape = tensor_shape(op.operands[0].type)
            src = self.tensor_in(op.operands[0], L.restrict(lay, src_shape))
            return Tensor(lay, src.regs, src.ty)
        if name == "tt.expand_dims":
            axis = ir.IntegerAttr(op.attributes["axis"]).value
            src = self.tensor_in(op.operands[0], L.squeeze(lay, axis))
            return Tensor(lay, src.regs, src.ty)
        return basic.elementwise_in(self, op, lay)

