"""A descriptor store's other path when its bulk copies may not run (a start that may be negative, rows that may
end off a 16-byte boundary: descriptor_store.py): the block is already in shared memory in the copies' layout,
so every thread walks it in a loop, one element per step, and stores the elements inside the tensor.

A loop rather than the portable path's unrolled per-element stores from registers: the check sits in every
such store's epilogue, and unrolled it made examples/08's epilogue three times its size (640 -> 1920 SASS
instructions) and fp32's registers 90 -> 120, for a path that well-formed programs never take."""
from __future__ import annotations

from typing import Any

from .context import Context


def store_from_shared(ctx: Context, c: Any, block: tuple, smem: Any, idx: list, base: str) -> None:
    """Store the ``block`` (outermost first) held at ``base`` in the layout ``smem`` (a SmemLayout) to the
    descriptor ``c`` at ``idx`` (Scalars, outermost first), dropping the elements outside ``c``'s shape (negative
    coordinates too). Every thread of the program calls this, after a barrier made ``base`` readable."""
    fn = ctx.fn
    threads = ctx.num_warps * ctx.warp_size
    n = 1
    for d in block:
        n *= d
    eb = smem.eb
    ity = f"i{8 * eb}"              # the bits move as they are

    # the values the loop derives from the descriptor's fields and the thread index alone would be hoisted out of
    # the program's loops (they are invariant there), holding registers on the path that never comes here: a
    # target may pin them to this block
    cold = getattr(ctx.target, "cold_value", None)

    def pinned(ty: str, v: str) -> str:
        return cold(fn, ty, v) if cold is not None and not v.lstrip("-").isdigit() else v

    def i64(s: Any) -> str:
        return pinned("i64", s.value if s.ty == "i64" else fn.inst(f"sext {s.ty} {s.value} to i64"))

    starts = [i64(s) for s in idx]
    dims = [i64(s) for s in c.shape]
    strides = [i64(s) for s in c.strides]
    tid = pinned("i32", ctx.tid)
    pre = fn.current
    loop, body, latch, done = fn.label("dsloop"), fn.label("dsin"), fn.label("dsnext"), fn.label("dsdone")
    fn.cond_br(fn.inst(f"icmp ult i32 {tid}, {n}"), loop, done)
    fn.start_block(loop)
    e = fn.tmp("e")
    nxt = fn.tmp("enext")
    fn.emit(f"{e} = phi i32 [{tid}, %{pre}], [{nxt}, %{latch}]")
    coords, rest, inside, off = [], e, "true", "0"
    for d in range(len(block) - 1, -1, -1):         # innermost first: e = row-major index in the block
        coords.insert(0, fn.inst(f"urem i32 {rest}, {block[d]}") if d else rest)
        if d:
            rest = fn.inst(f"udiv i32 {rest}, {block[d]}")
    for d, x in enumerate(coords):
        g = fn.inst(f"add i64 {starts[d]}, {fn.inst(f'zext i32 {x} to i64')}")
        # unsigned: a negative coordinate is past every extent
        ok = fn.inst(f"icmp ult i64 {g}, {dims[d]}")
        inside = ok if inside == "true" else fn.inst(f"and i1 {inside}, {ok}")
        term = fn.inst(f"mul i64 {g}, {strides[d]}")
        off = term if off == "0" else fn.inst(f"add i64 {off}, {term}")
    fn.cond_br(inside, body, latch)
    fn.start_block(body)
    src = ctx.smem_ptr(base, ctx.imul(smem.offset(ctx, coords), eb))
    v = fn.inst(f"load {ity}, {ctx.target.shared_ptr} {src}, align {eb}")
    dst = fn.inst(f"getelementptr {ity}, {ctx.target.global_ptr} {c.base.value}, i64 {off}")
    fn.emit(f"store {ity} {v}, {ctx.target.global_ptr} {dst}, align {eb}")
    fn.br(latch)
    fn.start_block(latch)
    fn.emit(f"{nxt} = add i32 {e}, {threads}")
    fn.cond_br(fn.inst(f"icmp ult i32 {nxt}, {n}"), loop, done)
    fn.start_block(done)


def unless_inside(ctx: Context, c: Any, m: Any, idx: list, base: str, inside: str, join: str) -> None:
    """Branch on ``inside`` (the bulk copies' precondition, an i1 or "true") unless it is known true: where it
    fails, every thread stores the block at ``base`` (the bulk map ``m``'s layout) with ``store_from_shared`` and
    goes to ``join``; the builder is left where it holds, for the bulk copies."""
    if inside == "true":
        return
    fn = ctx.fn
    bulk, other = fn.label("bulkok"), fn.label("bulkneg")
    fn.cond_br(inside, bulk, other)
    fn.start_block(other)
    ctx.push_scope()
    store_from_shared(ctx, c, m.block, m.smem, idx, base)
    ctx.pop_scope()
    fn.br(join)
    fn.start_block(bulk)
