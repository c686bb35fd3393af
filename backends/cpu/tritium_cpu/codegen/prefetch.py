"""Software prefetch of the next loop iteration's tile loads.

A persistent kernel (``for row in tl.range(pid, n_rows, num_programs)``) jumps a whole block of rows per
iteration, so each iteration's tile starts on a page the hardware prefetchers have not seen: they restart
at every row and the first pass over the tile (often a reduction with little arithmetic) waits on memory,
not overlapped with the arithmetic of the previous row. Measured on the fused softmax (znver3, rows of
4 KB): that first pass took a quarter of the kernel's time.

For a contiguous 1-D tile load inside a ``for`` loop, the address of its first element is remembered in a
stack slot from one iteration to the next; the difference to the current address predicts the next
iteration's tile (exact when the address is affine in the induction variable, which is the common case),
and each of its cache lines is prefetched. A wrong prediction (the first iteration, an irregular pattern)
only costs a few useless prefetches: prefetches never fault.
"""
from __future__ import annotations

from .context import Context
from .irtext import SIZES, Function
from .lanes import inner_step
from .tiles import Evaluator, Node, loop_nest

_LINE = 64
# below two lines the prefetchers (or the previous iteration) already did it; above 64 KB the tile does not
# stay in L1/L2 until it is used anyway
_MIN_BYTES = 2 * _LINE
_MAX_BYTES = 64 << 10


def prefetch_next(ctx: Context, in_loop: bool, pn: Node, shape: tuple[int, ...], lt: str) -> None:
    """Prefetch the next iteration's copy of the tile that pointer tile ``pn`` addresses (read);
    ``in_loop``: whether the load is inside a ``for`` loop."""
    size = SIZES.get(lt, 0)
    if (not in_loop or len(shape) != 1 or not size or lt in ("i1", "ptr")
            or not _MIN_BYTES <= shape[0] * size <= _MAX_BYTES or inner_step(pn, 0) != size):
        return
    fn: Function = ctx.fn
    slot = fn.alloca("ptr", 1, align=8, hint="pfprev")
    fn.allocas.append(f"store ptr null, ptr {slot}, align 8")   # runs at entry: "no previous iteration"
    start = Evaluator(fn).value(pn, ["0"], address=True)
    prev = fn.inst(f"load ptr, ptr {slot}, align 8")
    fn.emit(f"store ptr {start}, ptr {slot}, align 8")
    cur_i = fn.inst(f"ptrtoint ptr {start} to i64")
    prev_i = fn.inst(f"ptrtoint ptr {prev} to i64")
    first = fn.inst(f"icmp eq ptr {prev}, null")
    delta = fn.inst(f"sub i64 {cur_i}, {prev_i}")
    # no prediction (the first iteration) or a tile that does not move: its lines are the ones about to be
    # loaded, so prefetching them only costs a prefetch per line (a loop of one iteration per program,
    # layer norm's `for off in range(0, N, BLOCK)` with BLOCK >= N, paid that for every load of every row)
    still = fn.inst(f"icmp eq i64 {delta}, 0")
    skip = fn.inst(f"or i1 {first}, {still}")
    go, done = fn.label("pf"), fn.label("pfdone")
    fn.cond_br(skip, done, go)
    fn.start_block(go)
    nxt = fn.inst(f"getelementptr i8, ptr {start}, i64 {delta}")
    ctx.module.declare("llvm.prefetch.p0", "declare void @llvm.prefetch.p0(ptr, i32, i32, i32)")

    def line(idx: list[str]) -> None:
        off = fn.inst(f"mul nuw nsw i64 {idx[0]}, {_LINE}")
        p = fn.inst(f"getelementptr i8, ptr {nxt}, i64 {off}")
        fn.emit(f"call void @llvm.prefetch.p0(ptr {p}, i32 0, i32 3, i32 1)")
    loop_nest(fn, ((shape[0] * size + _LINE - 1) // _LINE, ), line)
    fn.br(done)
    fn.start_block(done)
