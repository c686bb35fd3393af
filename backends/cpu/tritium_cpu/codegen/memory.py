"""Loads, stores, atomics, ``gather`` and ``histogram`` on the CPU."""
from __future__ import annotations

from typing import Any

from tritium._mlir import ir

from .blockptr import load_block_ptr, store_block_ptr
from .context import Context
from .fastpath import load_masks, select_conditions, with_mask_fast_path
from .hazards import must_stage, pointer_root
from .irtext import SIZES
from .opinfo import RMW, is_block_ptr, split_operands, str_attr, type_info
from .optable import CPU_OPS
from .prefetch import prefetch_next
from .streaming import Streaming
from .tiles import Buf, Evaluator, Load, Node, Scalar, Tile, loop_nest

_ORDER = {"acquire": "acquire", "release": "release", "acq_rel": "acq_rel", "relaxed": "monotonic", "": "seq_cst"}
#: the tl.atomic_* function an op kind comes from, for messages
_USER_RMW = {"fadd": "add", "umax": "max", "umin": "min", "fmax": "max", "fmin": "min"}


class Memory:
    """Loads and stores through pointer tiles; a store may stream past the cache (:class:`.Streaming`), a load
    in a loop prefetches the next iteration's tile (:mod:`.prefetch`)."""

    def __init__(self, ctx: Context, streaming: Streaming) -> None:
        self.ctx = ctx
        self.streaming = streaming

    @CPU_OPS.lowers("tt.load")
    def load(self, op: Any) -> None:
        ctx = self.ctx
        parts = split_operands(op, ["ptr", "mask", "other"])
        ptr_v = parts["ptr"][0]
        if is_block_ptr(ptr_v):
            return load_block_ptr(ctx, op, ptr_v)
        res = op.results[0]
        shape, lt, _ = type_info(res.type)
        ptr = ctx.consume(ptr_v)
        mask = ctx.consume(parts["mask"][0]) if parts["mask"] else None
        other = ctx.consume(parts["other"][0]) if parts["other"] else None
        volatile = "is_volatile" in op.attributes and ir.BoolAttr(op.attributes["is_volatile"]).value
        if shape is None:
            ctx.flush_pending()
            node = Load(_ScalarNode(ptr.value, "ptr"), _ScalarNode(mask.value, "i1") if mask else None,
                        _ScalarNode(other.value, lt) if other else None, lt, volatile)
            node.site = ctx.access_site(op, "load", mask is not None, lt)
            ctx.values[res] = Scalar(Evaluator(ctx.fn).value(node, []), lt)
            return
        node = Load(ctx.as_node(ptr, shape), ctx.as_node(mask, shape) if mask else None,
                    ctx.as_node(other, shape) if other else None, lt, volatile)
        node.root = pointer_root(ptr_v)
        node.site = ctx.access_site(op, "load", mask is not None, lt)
        if not volatile:
            prefetch_next(ctx, bool(self.streaming.scale), node.ptr, shape, lt)
        ctx.work += 2 * _n(shape)
        tile = Tile(node)
        ctx.set(res, tile)

    @CPU_OPS.lowers("tt.store")
    def store(self, op: Any) -> None:
        ctx = self.ctx
        parts = split_operands(op, ["ptr", "value", "mask"])
        if is_block_ptr(parts["ptr"][0]):
            return store_block_ptr(ctx, op, parts["ptr"][0], parts["value"][0])
        ptr = ctx.consume(parts["ptr"][0])
        val = ctx.consume(parts["value"][0])
        mask = ctx.consume(parts["mask"][0]) if parts["mask"] else None
        shape, _, _ = type_info(parts["ptr"][0].type)
        vty = type_info(parts["value"][0].type)[1]
        ctx.flush_pending(consumed=tuple(x for x in (ptr, val, mask) if isinstance(x, Tile)))
        fn = ctx.fn
        site = ctx.access_site(op, "store", mask is not None, vty)
        if shape is None:
            ctx.guarded(mask.value if mask else None,
                        lambda: fn.emit(f"store {vty} {val.value}, ptr {ctx.checked(ptr.value, site)}, "
                                          f"align {SIZES[vty]}"))
            return
        pn, vn = ctx.as_node(ptr, shape), ctx.as_node(val, shape)
        if isinstance(val, Tile) and must_stage(vn, pn, pointer_root(parts["ptr"][0])):
            vn = ctx.materialize(val)
        mn = ctx.as_node(mask, shape) if mask is not None else None
        ctx.work += 2 * _n(shape)

        def emit_loop(masks_true: bool) -> None:
            def body(idx: list[str]) -> None:
                ev = Evaluator(fn, masks_true)
                p = ev.value(pn, idx, address=True)
                v = ev.value(vn, idx)
                m = ev.value(mn, idx) if mn is not None and not masks_true else None
                ctx.guarded(m, lambda: fn.emit(f"store {vty} {v}, ptr {ctx.checked(p, site)}, "
                                               f"align {SIZES[vty]}"))
            if (masks_true or mn is None) and site is None:
                self.streaming.store(shape, pn, vn, vty, masks_true, lambda: loop_nest(fn, shape, body))
            else:
                loop_nest(fn, shape, body)

        masks = load_masks(vn) + load_masks(pn) + ([mn] if mn is not None else [])
        with_mask_fast_path(fn, shape, masks, emit_loop, select_conditions(vn))
        ctx.drop_consumed((ptr, val, mask))


# -- atomics -------------------------------------------------------------------------------------
def _atomic(ctx: Context, op: Any, emit: Any, groups: list[str]) -> None:
    parts = split_operands(op, groups)
    vals = {k: (ctx.consume(v[0]) if v else None) for k, v in parts.items()}
    ctx.flush_pending()
    res = op.results[0]
    shape, lt, _ = type_info(res.type)
    fn = ctx.fn
    kind = "atomic_" + (_USER_RMW.get(str_attr(op, "op"), str_attr(op, "op")) if op.name == "tt.atomic_rmw"
                        else "cas")
    site = ctx.access_site(op, kind, vals.get("mask") is not None, lt)

    def checked_emit(args: dict) -> str:
        return emit(dict(args, ptr=ctx.checked(args["ptr"], site)))

    if shape is None:
        m = vals.get("mask")
        ctx.values[res] = Scalar(ctx.masked_value(m.value if m else None, lt,
                                                     lambda: checked_emit({k: (v.value if v else None)
                                                                           for k, v in vals.items()})), lt)
        return
    nodes = {k: (ctx.as_node(v, shape) if v is not None else None) for k, v in vals.items()}
    out = ctx.buffer(shape, lt)
    dst = Buf(out, shape, lt)

    def body(idx: list[str]) -> None:
        ev = Evaluator(fn)
        args = {k: (ev.value(n, idx, address=(k == "ptr")) if n is not None else None) for k, n in nodes.items()}
        r = ctx.masked_value(args.get("mask"), lt, lambda: checked_emit(args))
        fn.emit(f"store {lt} {r}, ptr {ev.element_ptr(dst, idx)}, align {SIZES[lt]}")

    loop_nest(fn, shape, body)
    ctx.set(res, Tile(dst))


@CPU_OPS.lowers("tt.atomic_rmw")
def atomic_rmw(ctx: Context, op: Any) -> None:
    kind = RMW[str_attr(op, "op")]
    order = _ORDER[str_attr(op, "sem", "acq_rel")]
    lt = type_info(op.results[0].type)[1]
    fn = ctx.fn
    _atomic(ctx, op, lambda a: fn.inst(f"atomicrmw {kind} ptr {a['ptr']}, {lt} {a['val']} {order}, align "
                                       f"{SIZES[lt]}"), ["ptr", "val", "mask"])


@CPU_OPS.lowers("tt.atomic_cas")
def atomic_cas(ctx: Context, op: Any) -> None:
    order = _ORDER[str_attr(op, "sem", "acq_rel")]
    fail = "acquire" if order in ("acq_rel", "acquire", "seq_cst") else "monotonic"
    if order == "release":
        fail = "monotonic"
    lt = type_info(op.results[0].type)[1]
    it = {"half": "i16", "bfloat": "i16", "float": "i32", "double": "i64"}.get(lt, lt)
    fn = ctx.fn

    def emit(a: dict) -> str:
        cmp, val = a["cmp"], a["val"]
        if it != lt:
            cmp = fn.inst(f"bitcast {lt} {cmp} to {it}")
            val = fn.inst(f"bitcast {lt} {val} to {it}")
        pair = fn.inst(f"cmpxchg ptr {a['ptr']}, {it} {cmp}, {it} {val} {order} {fail}, align {SIZES[lt]}")
        old = fn.inst(f"extractvalue {{ {it}, i1 }} {pair}, 0")
        return fn.inst(f"bitcast {it} {old} to {lt}") if it != lt else old

    _atomic(ctx, op, emit, ["ptr", "cmp", "val"])



# -- gather and histogram ----------------------------------------------------------------------
@CPU_OPS.lowers("tt.gather")
def gather(ctx: Context, op: Any) -> None:
    src = ctx.consume(op.operands[0])
    index = ctx.consume(op.operands[1])
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    shape, lt, _ = type_info(op.results[0].type)
    buf = ctx.materialize(src) if not isinstance(src.node, Buf) else src.node
    ity = type_info(op.operands[1].type)[1]
    inode = index.node
    n = buf.shape[axis]

    class Gather(Node):
        def __init__(self) -> None:
            self.shape, self.ty = shape, lt

        def eval(self, ev: Evaluator, idx: list[str]) -> str:
            f = ev.fn
            i = ev.value(inode, idx)
            i64 = f.inst(f"sext {ity} {i} to i64") if ity != "i64" else i
            ok = f.inst(f"icmp ult i64 {i64}, {n}")
            safe = f.inst(f"select i1 {ok}, i64 {i64}, i64 0")
            sidx = list(idx)
            sidx[axis] = safe
            return ev.value(buf, sidx)

        def children(self) -> list[Node]:
            return [inode, buf]

    ctx.set(op.results[0], Tile(Gather()))


@CPU_OPS.lowers("tt.histogram")
def histogram(ctx: Context, op: Any) -> None:
    parts = split_operands(op, ["src", "mask"])
    src = ctx.consume(parts["src"][0])
    mask = ctx.consume(parts["mask"][0]) if parts["mask"] else None
    shape, _, _ = type_info(op.results[0].type)
    sshape, sty, _ = type_info(parts["src"][0].type)
    bins = shape[0]
    fn = ctx.fn
    out = ctx.buffer(shape, "i32")
    fn.emit(f"call void @llvm.memset.p0.i64(ptr align 16 {out}, i8 0, i64 {4 * bins}, i1 false)")
    ctx.module.declare("llvm.memset.p0.i64", "declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)")
    dst = Buf(out, shape, "i32")
    mnode = ctx.as_node(mask, sshape) if mask is not None else None

    def body(idx: list[str]) -> None:
        ev = Evaluator(fn)
        v = ev.value(src.node, idx)
        v64 = fn.inst(f"sext {sty} {v} to i64") if sty != "i64" else v
        ok = fn.inst(f"icmp ult i64 {v64}, {bins}")
        if mnode is not None:
            ok = fn.inst(f"and i1 {ok}, {ev.value(mnode, idx)}")

        def inc() -> None:
            p = fn.inst(f"getelementptr inbounds i32, ptr {out}, i64 {v64}")
            c = fn.inst(f"load i32, ptr {p}, align 4")
            c1 = fn.inst(f"add i32 {c}, 1")
            fn.emit(f"store i32 {c1}, ptr {p}, align 4")
        ctx.guarded(ok, inc)

    loop_nest(fn, sshape, body)
    ctx.set(op.results[0], Tile(dst))


class _ScalarNode(Node):
    def __init__(self, value: str, ty: str) -> None:
        self.value, self.ty, self.shape = value, ty, ()

    def eval(self, ev: Evaluator, idx: list[str]) -> str:
        return self.value


def _n(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n
