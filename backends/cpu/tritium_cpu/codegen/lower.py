"""Lowering of a kernel's tile IR to LLVM IR text for the host CPU.

One LLVM function computes one program instance. Scalars are SSA values; tiles are lazy expressions
(see :mod:`.tiles`) materialized into stack buffers only where needed (see :mod:`.context`).

:class:`KernelLowering` is the shared :class:`~.context.Context` plus the dispatch: each op goes to the handler
that declared it with ``@CPU_OPS.lowers`` (a function of the context: shapes.py, basic.py, reduce.py...; or a
method of a collaborator that needs more than the context: :class:`~.memory.Memory` and
:class:`~.control.ControlFlow`, which share the kernel's :class:`~.streaming.Streaming` state).
"""
from __future__ import annotations

from typing import Any

from tritium import line_info
from tritium._mlir import ir, walk_children

from . import basic, blockptr, debug, reduce, regions, shapes  # noqa: F401  (their handlers join CPU_OPS)
from .context import Context
from .control import ControlFlow
from .irtext import Function, Module
from .memory import Memory
from .opinfo import LoweringError, type_info
from .optable import CPU_OPS
from .scalar import MathLibrary, is_elementwise
from .streaming import Streaming
from .tiles import Scalar
from .variables import describe_results

# Which op each handler lowers is said beside it (@CPU_OPS.lowers in shapes.py, memory.py...); what no handler
# names is either elementwise or refused here.
CPU_OPS.family("elementwise ops (arith, math and the tt casts and math of scalar.py's is_elementwise), lazy per "
               "element: basic.elementwise", is_elementwise)
CPU_OPS.refuse("tt.get_cluster_cta_rank", "made only by the GPU stages' cluster split (num_ctas > 1), after the "
                                          "ttir stage the CPU compiles")
CPU_OPS.refuse("tt.elementwise_inline_asm", "tl.inline_asm_elementwise runs GPU assembly (PTX, AMDGCN); the CPU "
                                             "backend cannot run it: write the computation with tl operations (or "
                                             "tl.map_elementwise for a per-element function)")
CPU_OPS.refuse("tt.dot_scaled", "the frontend emulates tl.dot_scaled with ordinary ops (language/scaled.py) and "
                                "never emits tt.dot_scaled; lower the emulated form or add a handler in reduce.py")


class KernelLowering(Context):
    def __init__(self, module: Module, math: MathLibrary, kernel: Any, name: str, options: Any, vector_bits: int):
        super().__init__(module, math, kernel, name, options, vector_bits)
        self.streaming = Streaming(self)
        self.memory = Memory(self, self.streaming)
        self.control = ControlFlow(self, self.streaming)
        self.handlers = CPU_OPS.bind(self.memory, self.control, context=self)

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
            fn.subprogram = lines.subprogram(ir.StringAttr(self.kernel.attributes["sym_name"]).value, fn.name,
                                             line_info.function_start(self.kernel))
        self.lower_block(walk_children(self.kernel))
        fn.emit("ret void")
        return fn

    def lower_block(self, ops: list[Any]) -> None:
        with self.streaming.block(ops):
            self.lower_ops(ops)

    def lower_ops(self, ops: list[Any]) -> None:
        for op in ops:
            self.lower_op(op)
        reduce.settle_soon(self, None)

    def lower_op(self, op: Any) -> None:
        fn = self.fn
        saved_dbg = fn.dbg
        if fn.subprogram:
            # the op's Python line goes on what it emits; lazy tiles keep theirs (set), for the loops that
            # evaluate them later
            fn.dbg = self.module.line_table.location(op.location, fn.subprogram)
        if self.soon:
            reduce.settle_soon(self, op)
        name = op.name
        handler = self.handlers.get(name)
        frame = self.frame
        saved, frame.op = frame.op, op
        frame.serial += 1
        n_regions = len(op.regions)
        frame.nested += n_regions   # inside a loop's body a dead-looking buffer may be read again next iteration
        try:
            if handler is not None:
                handler(op)
            elif is_elementwise(name):
                basic.elementwise(self, op)
            else:
                raise LoweringError(CPU_OPS.unsupported(name))
            if self.describe:
                describe_results(self, op)
        except LoweringError as exc:
            if not exc.located:   # the innermost op says where (regions lower their ops here)
                exc.located = True
                exc.args = (line_info.located(exc.args[0], self.kernel, op), )
            raise
        finally:
            frame.nested -= n_regions
            frame.op = saved
            fn.dbg = saved_dbg
