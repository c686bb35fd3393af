"""Reductions, scans and ``dot`` on the CPU."""
from __future__ import annotations

from typing import Any

from tritium._mlir import block_ops, ir

from .bounds import all_true as from_bounds
from .combine import combiner
from .context import Context
from .dot import emit_dot
from .fastpath import load_masks
from .irtext import FP8, SIZES, Function
from .opinfo import split_operands, type_info
from .optable import CPU_OPS
from .tiles import Buf, Elem, Evaluator, Node, Scalar, Tile, loop_nest, numel
from .vreduce import reduce_inner, seq_loop, simple_combine, supported

# partial results of a long reduction along the innermost axis: four AVX2 vectors of float32
_LANES = 32


# -- reduce ----------------------------------------------------------------------------------
def settle_soon(ctx: Context, op: Any) -> None:
    """Materialize the costly multi-use tiles the previous op defined (``set``) before ``op`` runs, except
    one that ``op`` reduces along its innermost axis with a vector reduction: that reduction writes the
    buffer from the values it computes anyway (softmax: the exp pass and the sum pass become one loop).
    The fused tile is the last op's result and ``op`` is the next in the same block, so nothing (a side
    effect, a branch) comes between its definition and its materialization."""
    soon, ctx.soon = ctx.soon, []
    keep = None
    if op is not None and op.name == "tt.reduce" and len(op.operands) == 1 and len(soon) == 1:
        t = ctx.values.get(op.operands[0])
        shape, ty, _ = type_info(op.operands[0].type)
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        block = op.regions[0].blocks[0]
        kind = simple_combine(block_ops(block), list(block.arguments))
        if (t is soon[0] and shape and all(s == 1 for s in shape[axis + 1:]) and kind is not None
                and supported(kind, ty, shape[axis], ctx.vector_bits)):
            keep = t
    for t in soon:
        if t is not keep:
            ctx.materialize(t)
    ctx.fusing = keep


@CPU_OPS.lowers("tt.reduce")
def reduce(ctx: Context, op: Any) -> None:
    n = len(op.results)
    srcs = [ctx.consume(v) for group in split_operands(op, [f"s{i}" for i in range(8)]).values() for v in group]
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    shape = srcs[0].shape
    tys = [s.ty for s in srcs]
    combine = combiner(ctx, op)
    fn = ctx.fn
    out_shape = tuple(s for d, s in enumerate(shape) if d != axis)
    nodes = [s.node for s in srcs]
    length = shape[axis]
    ctx.work += numel(shape) * n
    inner = all(s == 1 for s in shape[axis + 1:])
    if inner:
        results: list[list[str]] = []
        outs = [ctx.buffer(out_shape, t) for t in tys] if out_shape else []

        block = op.regions[0].blocks[0]
        kind = simple_combine(block_ops(block), list(block.arguments)) if n == 1 else None
        vector = kind is not None and supported(kind, tys[0], length, ctx.vector_bits)
        parts = [Buf(ctx.buffer((_LANES, ), t), (_LANES, ), t) for t in tys] \
            if length >= 2 * _LANES and not vector else None
        fused, ctx.fusing = ctx.fusing, None
        into = Buf(ctx.buffer(shape, tys[0]), shape, tys[0]) if fused is not None and vector else None

        def body(oidx: list[str]) -> None:
            full = oidx[:axis] + ["0"] + oidx[axis:]
            if vector:
                accs = [reduce_inner(ctx, fn, nodes[0], lambda e: full[:axis] + [e] + full[axis + 1:], axis,
                                     length, kind, tys[0], ctx.vector_bits, into)]
            elif parts is not None:
                accs = _chunked(ctx, fn, nodes, parts, combine, lambda e: full[:axis] + [e] + full[axis + 1:],
                                     length)
            else:
                ev = Evaluator(fn)
                init = [ev.value(nd, full) for nd in nodes]
                accs = seq_loop(fn, length - 1, init, tys, lambda k, accs: combine(
                    fn, accs, [Evaluator(fn).value(nd, full[:axis] + [fn.inst(f"add nuw nsw i64 {k}, 1")] +
                                                   full[axis + 1:]) for nd in nodes]))
            if out_shape:
                for o, t, a in zip(outs, tys, accs):
                    p = Evaluator(fn).element_ptr(Buf(o, out_shape, t), oidx)
                    fn.emit(f"store {t} {a}, ptr {p}, align {SIZES[t]}")
            else:
                results.append(accs)

        loop_nest(fn, out_shape, body)
        if into is not None:      # every element was written by the reduction's loop
            fused.node = into
            if fused in ctx.pending:
                ctx.pending.remove(fused)
        for i, res in enumerate(op.results):
            if out_shape:
                ctx.set(res, Tile(Buf(outs[i], out_shape, tys[i])))
            else:
                ctx.values[res] = Scalar(results[0][i], tys[i])
        return
    # reduce along an outer axis: accumulate whole rows so the inner loops vectorize
    outs = [ctx.buffer(out_shape, t) for t in tys]
    bufs = [Buf(o, out_shape, t) for o, t in zip(outs, tys)]

    def init(oidx: list[str]) -> None:
        ev = Evaluator(fn)
        full = oidx[:axis] + ["0"] + oidx[axis:]
        for nd, b in zip(nodes, bufs):
            fn.emit(f"store {b.ty} {ev.value(nd, full)}, ptr {ev.element_ptr(b, oidx)}, align {SIZES[b.ty]}")

    loop_nest(fn, out_shape, init)
    if length > 1:
        step_shape = tuple(length - 1 if d == axis else s for d, s in enumerate(shape))
        order = [d for d in range(len(shape)) if d < axis] + [axis] + [d for d in range(len(shape)) if d > axis]

        def step(idx: list[str]) -> None:
            ev = Evaluator(fn)
            k = idx[axis]
            src_idx = list(idx)
            src_idx[axis] = fn.inst(f"add nuw nsw i64 {k}, 1") if k.startswith("%") else str(int(k) + 1)
            oidx = idx[:axis] + idx[axis + 1:]
            ptrs = [ev.element_ptr(b, oidx) for b in bufs]
            accs = [fn.inst(f"load {b.ty}, ptr {p}, align {SIZES[b.ty]}") for b, p in zip(bufs, ptrs)]
            vals = [ev.value(nd, src_idx) for nd in nodes]
            new = combine(fn, accs, vals)
            for b, p, v in zip(bufs, ptrs, new):
                fn.emit(f"store {b.ty} {v}, ptr {p}, align {SIZES[b.ty]}")

        loop_nest(fn, step_shape, step, order=order)
    for i, res in enumerate(op.results):
        if out_shape:
            ctx.set(res, Tile(bufs[i]))


def _chunked(ctx: Context, fn: Function, nodes: list[Node], parts: list[Buf], combine: Any, full_of: Any,
             length: int) -> list[str]:
    """Reduce ``length`` elements in two levels: ``_LANES`` partial results combined with element
    ``j * _LANES + i`` for each j (a loop that vectorizes across i, with independent accumulators), then the
    partial results in order. Masked loads get a copy of the loops without mask checks, taken when the masks
    are all true for this reduction."""
    lanes = parts[0].shape[0]
    chunks = length // lanes

    def emit(masks_true: bool) -> None:
        def init(idx: list[str]) -> None:
            ev = Evaluator(fn, masks_true)
            for nd, pb in zip(nodes, parts):
                v = ev.value(nd, full_of(idx[0]))
                fn.emit(f"store {pb.ty} {v}, ptr {ev.element_ptr(pb, idx)}, align {SIZES[pb.ty]}")

        def step(idx: list[str]) -> None:
            j, i = idx
            base = fn.inst(f"mul nuw nsw i64 {j}, {lanes}") if j.startswith("%") else str(int(j) * lanes)
            e = fn.inst(f"add nuw nsw i64 {base}, {i}")
            e = fn.inst(f"add nuw nsw i64 {e}, {lanes}")
            ev = Evaluator(fn, masks_true)
            ptrs = [ev.element_ptr(pb, [i]) for pb in parts]
            accs = [fn.inst(f"load {pb.ty}, ptr {p}, align {SIZES[pb.ty]}") for pb, p in zip(parts, ptrs)]
            vals = [ev.value(nd, full_of(e)) for nd in nodes]
            for pb, p, v in zip(parts, ptrs, combine(fn, accs, vals)):
                fn.emit(f"store {pb.ty} {v}, ptr {p}, align {SIZES[pb.ty]}")

        loop_nest(fn, (lanes, ), init, keep_inner=True)
        loop_nest(fn, (chunks - 1, lanes), step, keep_inner=True)

    masks = [m for nd in nodes for m in load_masks(nd)]
    if masks:
        ok = _all_true_along(ctx, fn, masks, full_of, length)
        fast, slow, done = fn.label("rfast"), fn.label("rmasked"), fn.label("rdone")
        fn.cond_br(ok, fast, slow)
        fn.start_block(fast)
        emit(True)
        fn.br(done)
        fn.start_block(slow)
        emit(False)
        fn.br(done)
        fn.start_block(done)
    else:
        emit(False)
    first = [fn.inst(f"load {pb.ty}, ptr {pb.ptr}, align {SIZES[pb.ty]}") for pb in parts]
    return seq_loop(fn, lanes - 1, first, [pb.ty for pb in parts], lambda k, accs: combine(
        fn, accs, [fn.inst(f"load {pb.ty}, ptr {Evaluator(fn).element_ptr(pb, [fn.inst(f'add nuw nsw i64 {k}, 1')])}"
                           f", align {SIZES[pb.ty]}") for pb in parts]))


def _all_true_along(ctx: Context, fn: Function, masks: list[Node], full_of: Any, length: int) -> str:
    """An i1: every mask is true at every element this reduction reads."""
    def step(k: str, accs: list[str]) -> list[str]:
        ev = Evaluator(fn)
        cur = accs[0]
        for m in masks:
            cur = fn.inst(f"and i1 {cur}, {ev.value(m, full_of(k))}")
        return [cur]
    known = [from_bounds(fn, m) for m in masks]
    if all(k is not None for k in known):
        ok = "true"
        for k in known:
            ok = k if ok == "true" else fn.inst(f"and i1 {ok}, {k}")
        return ok
    # the sequential loop starts at element 1: fold element 0 into the initial value
    ev0 = Evaluator(fn)
    init = "true"
    for m in masks:
        init = fn.inst(f"and i1 {init}, {ev0.value(m, full_of('0'))}")
    return seq_loop(fn, length - 1, [init], ["i1"], lambda k, accs: step(
        fn.inst(f"add nuw nsw i64 {k}, 1"), accs))[0]


# -- scan --------------------------------------------------------------------------------------
@CPU_OPS.lowers("tt.scan")
def scan(ctx: Context, op: Any) -> None:
    n = len(op.results)
    srcs = [ctx.consume(v) for group in split_operands(op, [f"s{i}" for i in range(8)]).values() for v in group]
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    reverse = "reverse" in op.attributes and ir.BoolAttr(op.attributes["reverse"]).value
    shape = srcs[0].shape
    tys = [s.ty for s in srcs]
    nodes = [s.node for s in srcs]
    combine = combiner(ctx, op)
    fn = ctx.fn
    length = shape[axis]
    ctx.work += numel(shape) * n
    bufs = [Buf(ctx.buffer(shape, t), shape, t) for t in tys]
    first = str(length - 1) if reverse else "0"
    edge_shape = tuple(1 if d == axis else s for d, s in enumerate(shape))

    def edge(idx: list[str]) -> None:
        ev = Evaluator(fn)
        full = list(idx)
        full[axis] = first
        for nd, b in zip(nodes, bufs):
            fn.emit(f"store {b.ty} {ev.value(nd, full)}, ptr {ev.element_ptr(b, full)}, align {SIZES[b.ty]}")

    loop_nest(fn, edge_shape, edge)
    if length > 1:
        step_shape = tuple(length - 1 if d == axis else s for d, s in enumerate(shape))
        order = [axis] + [d for d in range(len(shape)) if d != axis]

        def step(idx: list[str]) -> None:
            ev = Evaluator(fn)
            k = idx[axis]
            cur, prev = list(idx), list(idx)
            if reverse:
                cur[axis] = fn.inst(f"sub nuw nsw i64 {length - 2}, {k}")
                prev[axis] = fn.inst(f"add nuw nsw i64 {cur[axis]}, 1")
            else:
                cur[axis] = fn.inst(f"add nuw nsw i64 {k}, 1")
                prev[axis] = k
            accs = [fn.inst(f"load {b.ty}, ptr {ev.element_ptr(b, prev)}, align {SIZES[b.ty]}") for b in bufs]
            vals = [ev.value(nd, cur) for nd in nodes]
            for b, v in zip(bufs, combine(fn, accs, vals)):
                fn.emit(f"store {b.ty} {v}, ptr {ev.element_ptr(b, cur)}, align {SIZES[b.ty]}")

        loop_nest(fn, step_shape, step, order=order)
    for i, res in enumerate(op.results):
        ctx.set(res, Tile(bufs[i]))


# -- dot ---------------------------------------------------------------------------------------
@CPU_OPS.lowers("tt.dot")
def dot(ctx: Context, op: Any) -> None:
    a, b, c = (ctx.consume(v) for v in op.operands)
    shape, cty, _ = type_info(op.results[0].type)
    ct = {"half": "float", "bfloat": "float"}.get(cty, cty)
    _, aty, aelem = type_info(op.operands[0].type)
    compute = "i32" if ct == "i32" else ct
    fa = _converted(ctx, a, compute, aelem)
    fb = _converted(ctx, b, compute, type_info(op.operands[1].type)[2])
    if isinstance(c.node, Buf) and c.uses <= 0 and cty == compute and not c.node.ptr.startswith("@"):
        acc = c.node  # the accumulator has no other use: accumulate in place
    else:
        node = _cast_node(c.node, compute)
        # the dot accumulates into ``acc``: a buffer that is still read elsewhere (the accumulator's other uses,
        # a constant) is copied first, not written through
        into = ctx.frame.materialize_into(ctx, node) if isinstance(node, Buf) else None
        acc = ctx.materialize(Tile(node), into=into)
    ctx.work += numel(shape) * a.shape[-1]
    emit_dot(ctx.fn, ctx.module, fa, fb, acc, compute, ctx.vector_bits)
    if cty != compute:
        ctx.set(op.results[0], Tile(_cast_node(acc, cty)))
    else:
        ctx.set(op.results[0], Tile(acc))


def _cast_node(node: Node, ty: str) -> Node:
    if node.ty == ty:
        return node
    src = node.ty
    widen = SIZES[ty] > SIZES[src]
    op = "fpext" if widen else "fptrunc"
    if src.startswith("i") and ty.startswith("i"):
        op = "sext" if widen else "trunc"
    return Elem("cast", [node], node.shape, ty, lambda ev, v: ev.fn.inst(f"{op} {src} {v[0]} to {ty}"))


def _converted(ctx: Context, t: Tile, compute: str, elem: str) -> Buf:
    node = t.node
    if elem in FP8:
        math = ctx.math
        name = FP8[elem]
        node = Elem("fp8", [node], node.shape, "float",
                    lambda ev, v: math.call(ev.fn, f"tritium_{name}_to_f32", "float", [("i8", v[0])]))
    if node.ty != compute:
        node = _cast_node(node, compute)
    if isinstance(node, Buf):
        return node
    return ctx.materialize(Tile(node))

