"""Reductions, scans and ``dot`` on the CPU."""
from __future__ import annotations

from typing import Any, Callable

from tritium._mlir import block_ops, ir

from .irtext import SIZES, Function
from .memory import split_operands
from .tiles import Buf, Elem, Evaluator, Node, Tile, loop_nest, numel

_REASSOC = {"arith.addf", "arith.mulf"}


class ReduceMixin:
    # -- combine regions ---------------------------------------------------------------------------
    def _combiner(self, op: Any, n: int) -> Callable[[Function, list[str], list[str]], list[str]]:
        """Scalar code for the op's combine region: ``combine(fn, accumulators, values) -> results``."""
        from .lower import Scalar, type_info
        block = op.regions[0].blocks[0]
        body = block_ops(block)
        args = list(block.arguments)
        arg_types = [type_info(a.type)[1] for a in args]
        simple = len(body) == 2 and body[0].name in _REASSOC

        def combine(fn: Function, accs: list[str], vals: list[str]) -> list[str]:
            env: dict[Any, Any] = {}
            for a, v, t in zip(args, accs + vals, arg_types):
                env[a] = Scalar(v, t)
            saved_fn, saved_values = self.fn, self.values
            self.fn = fn
            self.values = _Overlay(saved_values, env)
            try:
                for o in body:
                    if o.name == "gpu.yield":
                        return [self.values[v].value for v in o.operands]
                    if simple:
                        a, b = (self.values[v] for v in o.operands)
                        r = fn.inst(f"{'fadd' if o.name == 'arith.addf' else 'fmul'} reassoc {a.ty} {a.value}, "
                                    f"{b.value}")
                        self.values[o.results[0]] = Scalar(r, a.ty)
                        continue
                    self.lower_op(o)
            finally:
                self.fn, self.values = saved_fn, saved_values
            raise AssertionError("combine region without gpu.yield")

        return combine

    # -- reduce ----------------------------------------------------------------------------------
    def op_reduce(self, op: Any) -> None:
        from .lower import Scalar, type_info
        n = len(op.results)
        srcs = [self.consume(v) for group in split_operands(op, [f"s{i}" for i in range(8)]).values() for v in group]
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        shape = srcs[0].shape
        tys = [s.ty for s in srcs]
        combine = self._combiner(op, n)
        fn = self.fn
        out_shape = tuple(s for d, s in enumerate(shape) if d != axis)
        nodes = [s.node for s in srcs]
        length = shape[axis]
        self.work += numel(shape) * n
        inner = all(s == 1 for s in shape[axis + 1:])
        if inner:
            results: list[list[str]] = []
            outs = [self.buffer(out_shape, t) for t in tys] if out_shape else []

            def body(oidx: list[str]) -> None:
                full = oidx[:axis] + ["0"] + oidx[axis:]
                ev = Evaluator(fn)
                init = [ev.value(nd, full) for nd in nodes]
                accs = self._seq_loop(fn, length - 1, init, tys, lambda k, accs: combine(
                    fn, accs, [Evaluator(fn).value(nd, full[:axis] + [fn.inst(f"add nuw nsw i64 {k}, 1")] +
                                                   full[axis + 1:]) for nd in nodes]))
                if out_shape:
                    for o, t, a in zip(outs, tys, accs):
                        p = Evaluator(fn).element_ptr(Buf(o, out_shape, t), oidx)
                        fn.emit(f"store {t} {a}, ptr {p}, align {SIZES[t]}")
                else:
                    results.append(accs)

            loop_nest(fn, out_shape, body)
            for i, res in enumerate(op.results):
                if out_shape:
                    self.set(res, Tile(Buf(outs[i], out_shape, tys[i])))
                else:
                    self.values[res] = Scalar(results[0][i], tys[i])
            return
        # reduce along an outer axis: accumulate whole rows so the inner loops vectorize
        outs = [self.buffer(out_shape, t) for t in tys]
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
                self.set(res, Tile(bufs[i]))

    def _seq_loop(self, fn: Function, count: int, init: list[str], tys: list[str],
                  step: Callable[[str, list[str]], list[str]]) -> list[str]:
        """A loop of ``count`` iterations carrying scalars; returns their final values."""
        if count <= 0:
            return init
        pre = fn.current
        head, latch, exit_ = fn.label("R"), fn.label("Rlatch"), fn.label("Rexit")
        fn.br(head)
        fn.start_block(head)
        k = fn.tmp("k")
        phis = [fn.tmp("acc") for _ in init]
        at = len(fn.blocks[-1][1])
        for _ in range(len(init) + 1):
            fn.emit("")
        new = step(k, phis)
        fn.br(latch)
        fn.start_block(latch)
        nk = fn.inst(f"add nuw nsw i64 {k}, 1")
        c = fn.inst(f"icmp ult i64 {nk}, {count}")
        fn.cond_br(c, head, exit_)
        for label, lines in fn.blocks:
            if label == head:
                lines[at] = f"{k} = phi i64 [0, %{pre}], [{nk}, %{latch}]"
                for j, (p, t, i0, nv) in enumerate(zip(phis, tys, init, new)):
                    lines[at + 1 + j] = f"{p} = phi {t} [{i0}, %{pre}], [{nv}, %{latch}]"
                break
        fn.start_block(exit_)
        return new

    # -- scan --------------------------------------------------------------------------------------
    def op_scan(self, op: Any) -> None:
        n = len(op.results)
        srcs = [self.consume(v) for group in split_operands(op, [f"s{i}" for i in range(8)]).values() for v in group]
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        reverse = "reverse" in op.attributes and ir.BoolAttr(op.attributes["reverse"]).value
        shape = srcs[0].shape
        tys = [s.ty for s in srcs]
        nodes = [s.node for s in srcs]
        combine = self._combiner(op, n)
        fn = self.fn
        length = shape[axis]
        self.work += numel(shape) * n
        bufs = [Buf(self.buffer(shape, t), shape, t) for t in tys]
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
            self.set(res, Tile(bufs[i]))

    # -- dot ---------------------------------------------------------------------------------------
    def op_dot(self, op: Any) -> None:
        from .dot import emit_dot
        from .lower import type_info
        a, b, c = (self.consume(v) for v in op.operands)
        shape, cty, _ = type_info(op.results[0].type)
        ct = {"half": "float", "bfloat": "float"}.get(cty, cty)
        _, aty, aelem = type_info(op.operands[0].type)
        compute = "i32" if ct == "i32" else ct
        fa = self._converted(a, compute, aelem)
        fb = self._converted(b, compute, type_info(op.operands[1].type)[2])
        if isinstance(c.node, Buf) and c.uses <= 0 and cty == compute and not c.node.ptr.startswith("@"):
            acc = c.node  # the accumulator has no other use: accumulate in place
        else:
            acc = self.materialize(Tile(self._cast_node(c.node, compute)))
        self.work += numel(shape) * a.shape[-1]
        emit_dot(self.fn, self.module, fa, fb, acc, compute, self.vector_bits)
        if cty != compute:
            self.set(op.results[0], Tile(self._cast_node(acc, cty)))
        else:
            self.set(op.results[0], Tile(acc))

    def _cast_node(self, node: Node, ty: str) -> Node:
        if node.ty == ty:
            return node
        src = node.ty
        widen = SIZES[ty] > SIZES[src]
        op = "fpext" if widen else "fptrunc"
        if src.startswith("i") and ty.startswith("i"):
            op = "sext" if widen else "trunc"
        return Elem("cast", [node], node.shape, ty, lambda ev, v: ev.fn.inst(f"{op} {src} {v[0]} to {ty}"))

    def _converted(self, t: Tile, compute: str, elem: str) -> Buf:
        from .irtext import FP8
        node = t.node
        if elem in FP8:
            math = self.math
            name = FP8[elem]
            node = Elem("fp8", [node], node.shape, "float",
                        lambda ev, v: math.call(ev.fn, f"tritium_{name}_to_f32", "float", [("i8", v[0])]))
        if node.ty != compute:
            node = self._cast_node(node, compute)
        if isinstance(node, Buf):
            return node
        return self.materialize(Tile(node))


class _Overlay(dict):
    """A value map that falls back to the enclosing one (for combine regions)."""

    def __init__(self, base: dict, local: dict) -> None:
        super().__init__(local)
        self.base = base

    def __missing__(self, key: Any) -> Any:
        return self.base[key]

