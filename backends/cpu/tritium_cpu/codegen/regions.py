"""``tt.map_elementwise`` (a user function applied per element, branches and all) and ``tt.unsplat``."""
from __future__ import annotations

from typing import Any

from tritium._mlir import ir

from .combine import combiner
from .context import Context
from .irtext import SIZES
from .opinfo import split_operands, type_info
from .optable import CPU_OPS
from .tiles import Buf, Evaluator, Scalar, Tile, loop_nest, numel, strides


@CPU_OPS.lowers("tt.unsplat")
def unsplat(ctx: Context, op: Any) -> None:
    src = ctx.consume(op.operands[0])
    node = src.node
    ctx.values[op.results[0]] = Scalar(Evaluator(ctx.fn).value(node, ["0"] * len(node.shape)), node.ty)


@CPU_OPS.lowers("tt.map_elementwise")
def map_elementwise(ctx: Context, op: Any) -> None:
    srcs = [ctx.consume(v) for group in split_operands(op, [f"s{i}" for i in range(8)]).values()
            for v in group]
    pack = ir.IntegerAttr(op.attributes["pack"]).value
    results = list(op.results)
    combine = combiner(ctx, op)
    # the region runs inside the element loop: pending loads must not be materialized in there
    ctx.flush_pending()
    fn = ctx.fn
    shape = type_info(results[0].type)[0]
    if shape is None:
        outs = combine(fn, [s.value for s in srcs], [])
        for r, v in zip(results, outs):
            ctx.values[r] = Scalar(v, type_info(r.type)[1])
        return
    nodes = [ctx.as_node(s, shape) for s in srcs]
    rtys = [type_info(r.type)[1] for r in results]
    bufs = [Buf(ctx.buffer(shape, t), shape, t) for t in rtys]
    st = strides(shape)
    total = numel(shape)
    ctx.work += 4 * total

    def index_of(lin: str) -> list[str]:
        idx = []
        for d, n in enumerate(shape):
            q = fn.inst(f"udiv i64 {lin}, {st[d]}") if st[d] != 1 else lin
            idx.append(fn.inst(f"urem i64 {q}, {n}") if d > 0 else q)
        return idx

    def body(g: list[str]) -> None:
        ev = Evaluator(fn)
        lins, args = [], []
        for j in range(pack):
            lin = g[0] if pack == 1 else fn.inst(f"add i64 {fn.inst(f'mul i64 {g[0]}, {pack}')}, {j}")
            lins.append(index_of(lin))
        for nd in nodes:
            for j in range(pack):
                args.append(ev.value(nd, lins[j]))
        outs = combine(fn, args, [])
        for k, (b, t) in enumerate(zip(bufs, rtys)):
            for j in range(pack):
                p = Evaluator(fn).element_ptr(b, lins[j])
                fn.emit(f"store {t} {outs[k * pack + j]}, ptr {p}, align {SIZES[t]}")

    loop_nest(fn, (total // pack, ), body)
    for r, b in zip(results, bufs):
        ctx.set(r, Tile(b))
