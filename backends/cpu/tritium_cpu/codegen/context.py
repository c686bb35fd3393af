"""What the parts of the CPU code generator share while lowering one kernel: the LLVM module and function
being written, the frame of tile buffers, the lowered values and the tiles still pending.

Tiles are lazy expressions (see :mod:`.tiles`) materialized into buffers only where needed: at a use that
cannot be fused (a dot, a loop-carried value, a value used several times that is costly to recompute) or
before a side effect could change what a pending load would read. The op handlers (shapes.py, memory.py,
control.py...) receive this context, or are methods of collaborators built on it (:mod:`.lower`); lowering
the ops of a nested block goes back through :meth:`Context.lower_block`, which the kernel lowering defines.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from tritium import line_info

from .fastpath import load_masks, select_conditions, with_mask_fast_path
from .frame import Frame
from .irtext import SIZES, Function, Module, const
from .oob import BoundsChecker
from .opinfo import LoweringError, uses
from .scalar import MathLibrary, ScalarEmitter, expensive
from .tiles import Buf, Elem, Evaluator, Node, Remap, Select2, Splat, Tile, loop_nest, numel

# tile buffers are a few KB in L1: inline vector loops beat calls of libc's memset/memcpy, which LLVM would
# otherwise make of the loops that fill and copy them
NO_LIBCALLS = '"no-builtin-memset" "no-builtin-memcpy"'


class Context:
    """One kernel's lowering state and the operations on values every op handler needs."""

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
        self.bounds: Optional[BoundsChecker] = None
        self.describe = line_info.variables()     # named values become debugger variables
        if getattr(options, "bounds_check", False):
            args = list(kernel.regions[0].blocks[0].arguments)
            self.bounds = self.fn.bounds = BoundsChecker(module, self.fn, name, len(args))

    # -- lowering nested blocks: defined by the kernel lowering (lower.py) ----------------------------
    def lower_op(self, op: Any) -> None:
        raise NotImplementedError

    def lower_ops(self, ops: list[Any]) -> None:
        """Lower ``ops`` in order (the ops of a branch of an ``scf.if``, a ``while``'s regions)."""
        raise NotImplementedError

    def lower_block(self, ops: list[Any]) -> None:
        """Lower the ops of a block that may run many times (a loop body, the kernel)."""
        raise NotImplementedError

    # -- values ----------------------------------------------------------------------------------
    def set(self, value: Any, v: Any) -> None:
        if isinstance(v, Tile):
            if not v.node.dbg:
                v.node.dbg = self.fn.dbg
            n = uses(value)
            v.uses = n
            if v.node.depth() > MAX_LAZY_DEPTH:
                # an unrolled loop's chain (acc = acc * a + b, static_range times) would otherwise grow with every
                # iteration, and evaluating it recurses as deep as it is long
                self.materialize(v)
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
                fn.emit(f"store {node.ty} {v}, ptr {p}, align {SIZES[node.ty]}")
            loop_nest(fn, node.shape, body, keep_inner=self._inner_vectorizes(node.shape, node.ty))

        with_mask_fast_path(fn, node.shape, load_masks(node), emit_loop, select_conditions(node))

    def _inner_vectorizes(self, shape: tuple[int, ...], ty: str) -> bool:
        """A 2-D+ copy whose rows span two vectors or more keeps its row loop: LLVM fully unrolls short row
        loops first and then vectorizes the loop over rows, with a scatter per vector or not at all (a
        matmul's 128 x 32 fp32 tile of a was copied element by element)."""
        lanes = self.vector_bits // (8 * SIZES[ty]) if ty in SIZES else 0
        outer = [d for d in shape[:-1] if d > 1]
        return bool(outer) and lanes > 1 and shape[-1] >= 2 * lanes and shape[-1] % lanes == 0

    def flush_pending(self, consumed: tuple = ()) -> None:
        """Before a side effect: compute now every pending load that is still needed afterwards."""
        for t in list(self.pending):
            if t.uses > 0 and not isinstance(t.node, Buf):
                self.materialize(t)
            elif isinstance(t.node, Buf) or t.uses <= 0:
                if t in self.pending and t.uses <= 0 and not any(t is c for c in consumed):
                    self.pending.remove(t)

    def drop_consumed(self, items: tuple) -> None:
        for t in items:
            if isinstance(t, Tile) and t.uses <= 0 and t in self.pending:
                self.pending.remove(t)

    # -- memory accesses -------------------------------------------------------------------------
    def access_site(self, op: Any, kind: str, masked: bool, ty: str) -> Optional[int]:
        """The site in the bounds checker of an access through ``op``'s first operand; None when the kernel is
        compiled without checks."""
        checker = self.bounds
        return None if checker is None else checker.site(op, kind, masked, SIZES.get(ty, 8))

    def checked(self, ptr: str, site: Optional[int]) -> str:
        """The pointer a lane accesses, after its bounds check (emitted here, on the lanes that execute)."""
        return ptr if site is None else self.bounds.guard(self.fn, ptr, site)

    def guarded(self, cond: Optional[str], emit: Callable[[], Any]) -> None:
        """``emit()`` under the i1 ``cond`` (always when None or true)."""
        fn = self.fn
        if cond is None or cond == "true":
            emit()
            return
        do, join = fn.label("st"), fn.label("stj")
        fn.cond_br(cond, do, join)
        fn.start_block(do)
        emit()
        fn.br(join)
        fn.start_block(join)

    def masked_value(self, cond: Optional[str], ty: str, emit: Callable[[], str]) -> str:
        """``emit()``'s value under the i1 ``cond``, zero where it is false."""
        fn = self.fn
        if cond is None or cond == "true":
            return emit()
        before = fn.current
        do, join = fn.label("at"), fn.label("atj")
        fn.cond_br(cond, do, join)
        fn.start_block(do)
        v = emit()
        end = fn.current
        fn.br(join)
        fn.start_block(join)
        return fn.inst(f"phi {ty} [{v}, %{end}], [{const(ty, 0)}, %{before}]")


#: the deepest lazy expression a tile may be; deeper ones are computed into a buffer where they are made
MAX_LAZY_DEPTH = 64


def _costly(node: Node) -> bool:
    if isinstance(node, Elem):
        return expensive(node.name) or any(_costly(a) for a in node.args) or _depth(node) > 6
    if isinstance(node, (Remap, Select2)):
        return any(_costly(c) for c in node.children())
    return False


def _depth(node: Node) -> int:
    return node.depth()
