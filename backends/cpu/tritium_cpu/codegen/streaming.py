"""Streaming (non-temporal) stores for launches that move more data than the last-level cache keeps.

A store normally reads each destination line into the cache before overwriting it (read-for-ownership),
so a kernel that streams through memory pays three transfers per output line, and the store loop at the end
of a program stalls on those reads. When a launch touches more bytes than half the last-level cache, what it
writes is evicted before anyone reads it back anyway: such stores skip the cache.

The decision is made at run time, per store: (programs of the launch) x (trip counts of the enclosing
``for`` loops) x (bytes the enclosing block loads and stores per iteration) against a threshold fixed at
compile time from the host's cache size. Only unmasked (or all-true) stores whose addresses are contiguous
along the innermost axis qualify: each row whose start is vector-aligned is computed and written with
non-temporal vector stores in one loop (other rows are stored normally). The grid function ends with a fence, since non-temporal stores are weakly ordered;
kernels with atomics or barriers never stream.
"""
from __future__ import annotations

import functools
import glob
from contextlib import contextmanager
from typing import Any, Iterator

from tritium._mlir import ir

from .context import Context
from .irtext import SIZES, Function
from .lanes import LaneGroup, inner_step
from .opinfo import type_info
from .tiles import Evaluator, Node, loop_nest, numel

_ORDERING_OPS = ("tt.atomic_rmw", "tt.atomic_cas", "tt.descriptor_reduce", "gpu.barrier")
_MEMORY_OPS = ("tt.load", "tt.store", "tt.descriptor_load", "tt.descriptor_store")
# a row shorter than two cache lines gains little; a small tile is not worth compiling its store twice
_MIN_ROW_BYTES = 128
_MIN_TILE_BYTES = 1024


@functools.lru_cache(maxsize=None)
def llc_bytes() -> int:
    """Size of the host's largest cache level (sysfs), 8 MiB when unknown."""
    best = (0, 8 << 20)
    for d in glob.glob("/sys/devices/system/cpu/cpu0/cache/index*"):
        try:
            level = int(open(f"{d}/level").read())
            text = open(f"{d}/size").read().strip().upper()
        except (OSError, ValueError):
            continue
        mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
        digits = text.rstrip("KMG")
        if digits.isdigit() and level > best[0]:
            best = (level, int(digits) * mult)
    return best[1]


def block_traffic(ops: list[Any]) -> int:
    """Bytes the tile loads and stores among ``ops`` move (one iteration of a loop body)."""
    total = 0
    for op in ops:
        if op.name in _MEMORY_OPS:
            for v in list(op.results) + list(op.operands)[:2]:
                shape, lt, _ = type_info(v.type)
                if shape is not None and lt in SIZES and "!tt.ptr" not in str(v.type):
                    total += numel(shape) * SIZES[lt]
                    break
    return total


class Streaming:
    """Where stores may stream, for one kernel: the enclosing loops' trip counts and the current block's
    traffic, which the run-time decision multiplies out."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        ordering = []

        def visit(op: Any) -> Any:
            if op.name in _ORDERING_OPS:
                ordering.append(op)
            return ir.WalkResult.ADVANCE
        ctx.kernel.operation.walk(visit)
        self.allowed = not ordering
        #: per enclosing ``for`` loop, outermost first: the product of the trip counts down to it (i64)
        self.scale: list[str] = []
        #: bytes one pass over the block being lowered loads and stores
        self.traffic = 0
        #: whether some store streams: the grid function then ends with a fence
        self.used = False

    @contextmanager
    def block(self, ops: list[Any]) -> Iterator[None]:
        """While the ops of one block are lowered: know how much data one pass over it moves."""
        saved = self.traffic
        self.traffic = block_traffic(ops)
        try:
            yield
        finally:
            self.traffic = saved

    def loop_enter(self, lb: Any, ub: Any, step: Any, ity: str) -> None:
        fn: Function = self.ctx.fn
        wide = [v.value if ity == "i64" else fn.inst(f"sext {ity} {v.value} to i64") for v in (lb, ub, step)]
        span = fn.inst(f"sub i64 {wide[1]}, {wide[0]}")
        pos = fn.inst(f"icmp sgt i64 {wide[2]}, 0")
        st = fn.inst(f"select i1 {pos}, i64 {wide[2]}, i64 1")
        up = fn.inst(f"add i64 {span}, {st}")
        up = fn.inst(f"sub i64 {up}, 1")
        trips = fn.inst(f"sdiv i64 {up}, {st}")
        trips = fn.inst(f"call i64 @llvm.smax.i64(i64 {trips}, i64 1)")
        self.ctx.module.declare("llvm.smax.i64", "declare i64 @llvm.smax.i64(i64, i64)")
        outer = self.scale[-1] if self.scale else "1"
        self.scale.append(fn.inst(f"mul i64 {outer}, {trips}"))

    def loop_exit(self) -> None:
        self.scale.pop()

    def store(self, shape: tuple[int, ...], pn: Node, vn: Node, vty: str, facts: Any, plain: Any) -> None:
        """Emit a store whose masks are all true (``facts``: what the fast path knows, for the Evaluator):
        streaming when it qualifies and the launch is big, ``plain()`` otherwise."""
        size = SIZES.get(vty, 0)
        lanes = self.ctx.vector_bits // 8 // size if size else 0
        inner = shape[-1]
        if (not self.allowed or vty in ("i1", "ptr") or lanes < 2 or inner % lanes
                or inner * size < _MIN_ROW_BYTES or numel(shape) * size < _MIN_TILE_BYTES
                or inner_step(pn, len(shape) - 1) != size):
            plain()
            return
        fn: Function = self.ctx.fn
        programs = fn.inst("mul i32 %npid0, %npid1")
        programs = fn.inst(f"mul i32 {programs}, %npid2")
        launch = fn.inst(f"zext i32 {programs} to i64")
        if self.scale:
            launch = fn.inst(f"mul i64 {launch}, {self.scale[-1]}")
        traffic = max(self.traffic, numel(shape) * size)
        big = fn.inst(f"icmp ugt i64 {launch}, {llc_bytes() // 2 // traffic}")
        yes, no, done = fn.label("stream"), fn.label("cached"), fn.label("streamed")
        fn.cond_br(big, yes, no)
        fn.start_block(yes)
        self._copy(shape, pn, vn, vty, lanes, facts)
        fn.br(done)
        fn.start_block(no)
        plain()
        fn.br(done)
        fn.start_block(done)
        self.used = True

    def _copy(self, shape: tuple[int, ...], pn: Node, vn: Node, vty: str, lanes: int, facts: Any) -> None:
        """Write each row straight from the lazy value expression: no staging buffer and no second pass over
        the row (``must_stage`` already staged values that read what the store overwrites, as for ``plain``).
        Aligned rows: one vector of ``lanes`` elements per iteration, gathered with ``insertelement`` (the SLP
        vectorizer rebuilds vector ops) and stored non-temporally; the loop vectorizer would refuse a scalar
        non-temporal store of alignment < the vector's. Unaligned rows: an ordinary (vectorizable) store loop."""
        fn: Function = self.ctx.fn
        size, inner = SIZES[vty], shape[-1]
        vt, vbytes = f"<{lanes} x {vty}>", lanes * size
        nt = fn.metadata_node("i32 1")

        def row(outer: list[str]) -> None:
            start = Evaluator(fn, facts).value(pn, outer + ["0"], address=True)
            addr = fn.inst(f"ptrtoint ptr {start} to i64")
            low = fn.inst(f"and i64 {addr}, {vbytes - 1}")
            aligned = fn.inst(f"icmp eq i64 {low}, 0")
            fast, slow, joined = fn.label("ntrow"), fn.label("row"), fn.label("rowdone")
            fn.cond_br(aligned, fast, slow)
            fn.start_block(fast)

            def vec(idx: list[str]) -> None:
                off = fn.inst(f"mul nuw nsw i64 {idx[0]}, {lanes}")
                at = [outer + [fn.inst(f"add nuw nsw i64 {off}, {lane}") if lane else off] for lane in range(lanes)]
                # masked loads in the value: one vector load per vector, not a branch per lane (lanes.py)
                ev = Evaluator(fn, facts) if facts else LaneGroup(fn, facts, at, len(shape) - 1)
                v = "poison"
                for lane, i in enumerate(at):
                    v = fn.inst(f"insertelement {vt} {v}, {vty} {ev.value(vn, i)}, i64 {lane}")
                d = fn.inst(f"getelementptr {vty}, ptr {start}, i64 {off}")
                fn.emit(f"store {vt} {v}, ptr {d}, align {vbytes}, !nontemporal {nt}")
            loop_nest(fn, (inner // lanes, ), vec)
            fn.br(joined)
            fn.start_block(slow)

            def elem(idx: list[str]) -> None:
                ev = Evaluator(fn, facts)
                d = fn.inst(f"getelementptr {vty}, ptr {start}, i64 {idx[0]}")
                fn.emit(f"store {vty} {ev.value(vn, outer + [idx[0]])}, ptr {d}, align {size}")
            loop_nest(fn, (inner, ), elem)
            fn.br(joined)
            fn.start_block(joined)
        loop_nest(fn, shape[:-1], row)
