"""``for`` and ``while`` on run-time values, as ``scf.for`` and ``scf.while``; ``for`` over compile-time values
(``tl.static_range``, tuples, lists) unrolled.

Loops are visited twice, as Triton does: once to learn which variables the body assigns, then for real with
those variables as loop-carried values. Blocks run through :class:`~.control_flow.ControlFlow`'s helpers.
"""
from __future__ import annotations

import ast
import builtins
from typing import Any

from .._mlir import ir
from ..language import core as tl
from ..language.core import constexpr, tensor, tuple_value
from ..language.elementwise import condition
from .carried import flat, rebuild_all
from .control_flow import ControlFlow
from .frontend import Generator, Visitors

#: the tag of a ``tl.range(..., warp_specialize=True)`` loop's ``scf.for`` (Triton's name for the hint)
WARP_SPECIALIZE_ATTR = "tt.warp_specialize"

#: Triton's words, then what to do
RETURN_IN_LOOP = ("Cannot have `return` statements inside `while` or `for` statements in triton; keep the result in "
                  "a variable, end the loop through a `while` condition, and return after the loop")


class Loops:
    def __init__(self, gen: Generator, flow: ControlFlow) -> None:
        self.gen = gen
        self.flow = flow

    def visitors(self) -> Visitors:
        return {ast.For: self.visit_For, ast.While: self.visit_While}

    # -- for ---------------------------------------------------------------------------------------
    def visit_For(self, node: ast.For) -> None:
        if node.orelse:
            raise self.gen.error(node, "`for ... else` is not supported in kernels")
        it = node.iter
        if not isinstance(it, ast.Call):
            iterable = self.gen.visit(it)
            return self._unrolled(node, tl._unwrap(iterable))
        fn = tl._unwrap(self.gen.visit(it.func))
        args = [self.gen.visit(a) for a in it.args]
        kwargs = {kw.arg: self.gen.visit(kw.value) for kw in it.keywords}
        if fn is tl.static_range:
            r = tl.static_range(*args, **kwargs)
            return self._unrolled(node, range(tl._unwrap(r.start), tl._unwrap(r.end), tl._unwrap(r.step)))
        if fn is builtins.range or fn is tl.range:
            r = tl.range(*args, **kwargs)
            return self._scf_for(node, r)
        iterable = self.gen.call(fn, args, kwargs, it)
        return self._unrolled(node, tl._unwrap(iterable))

    def _unrolled(self, node: ast.For, values: Any) -> None:
        if isinstance(values, tensor):
            raise self.gen.error(node.iter, "cannot iterate over a tensor; use range() over its length")
        try:
            # an aggregate is a tuple that cannot be iterated (TypeError below, its own message)
            items = list(values.values if isinstance(values, tuple_value) and not
                         getattr(values, "__triton_aggregate__", False) else values)
        except TypeError:
            raise self.gen.error(node.iter, f"cannot iterate over {values!r} in a kernel") from None
        for v in items:
            self.gen.assign_target(node.target, v if isinstance(v, (tensor, constexpr, tuple_value))
                                else constexpr(v))
            self.gen.visit_compound(node.body)

    def _bound(self, v: Any) -> tensor:
        t = self.gen.semantic.to_tensor(v)
        if t.type.is_block() or not t.dtype.is_int():
            raise tl.CompileTimeError(f"loop bounds must be integer scalars, got {t.type}")
        return t

    def _scf_for(self, node: ast.For, r: tl.range) -> None:
        s, b = self.gen.semantic, self.gen.builder
        if not isinstance(node.target, ast.Name):
            raise self.gen.error(node.target, "the loop variable must be a single name")
        step_c = tl._unwrap(r.step)
        negative = isinstance(step_c, int) and step_c < 0
        if isinstance(step_c, int) and step_c == 0:
            raise self.gen.error(node.iter, "range() step must not be zero")
        lb, ub, st = self._bound(r.start), self._bound(r.end), self._bound(r.step)
        ity = tl.int64 if tl.int64 in (lb.dtype, ub.dtype, st.dtype) or tl.uint64 in (lb.dtype, ub.dtype, st.dtype) \
            else tl.int32
        lb, ub, st = s.cast(lb, ity), s.cast(ub, ity), s.cast(st, ity)
        start, step = lb, st
        zero = s.scalar_constant(0, ity)
        if negative:
            # scf.for counts up: iterate k over [0, ceil((lb - ub) / -step)) and use lb + k * step
            trip = s.floordiv(s.add(s.sub(lb, ub), s.sub(s.minus(st), 1)), s.minus(st))
            lb, ub, st = zero, s.maximum(trip, zero), s.scalar_constant(1, ity)
        elif not isinstance(step_c, int):
            # a run-time step may be negative (Python counts down then; scf.for would not run at all)
            up = s.floordiv(s.add(s.sub(ub, lb), s.sub(st, 1)), st)
            down = s.floordiv(s.add(s.sub(lb, ub), s.sub(s.minus(st), 1)), s.minus(st))
            trip = s.maximum(s.where(s.greater_than(st, zero), up, down), zero)
            lb, ub, st = zero, trip, s.scalar_constant(1, ity)
            negative = True   # the loop variable is start + k * step
        iv_ir = s.ir_type(ity)
        name = node.target.id

        def body_scope(iv: Any, scope: dict) -> dict:
            scope = dict(scope)
            ivt = tensor(iv, ity)
            if negative:
                ivt = s.add(start, s.mul(ivt, step))
            scope[name] = ivt
            return scope

        liveins = dict(self.gen.lscope)
        # 1) dry run: which live-in names does the body assign?
        tmp = b.op("scf.for", [lb.handle, ub.handle, st.handle], [], regions=1)
        tblock = tmp.regions[0].blocks.append(iv_ir)
        with b.at(tblock):
            _, defs, returned = self.flow.run_block(node.body, body_scope(tblock.arguments[0], liveins))
        tmp.erase()
        if returned:
            raise self.gen.error(node, RETURN_IN_LOOP)
        carried = [n for n in defs if n in liveins and n != name]
        inits = [self.flow.carry(node, n, liveins[n]) for n in carried]
        types = [t for v in inits for t in v.ir_types]
        # 2) the real loop
        op = b.op("scf.for", [lb.handle, ub.handle, st.handle] + flat(inits), types, regions=1)
        if tl._unwrap(r.warp_specialize) is True:
            # the user asks for warps of separate roles in this loop: a GPU lowering may give its copies warps
            # of their own (gpu/lower/pipeline_producer.py); other targets ignore the tag
            op.attributes[WARP_SPECIALIZE_ATTR] = ir.UnitAttr.get(b.context)
        block = op.regions[0].blocks.append(iv_ir, *types)
        scope = dict(liveins)
        scope.update(zip(carried, rebuild_all(inits, list(block.arguments)[1:])))
        with b.at(block):
            after, _, _ = self.flow.run_block(node.body, body_scope(block.arguments[0], scope))
            outs = []
            for n, v in zip(carried, inits):
                nv = self.flow.carry(node, n, after[n])
                if not nv.same_type(v):
                    raise self.gen.error(node, f"loop-carried variable `{n}` has type {v.type} before the loop but "
                                           f"{nv.type} after an iteration; keep its type the same (initialize it "
                                           "with the type the loop produces, e.g. tl.zeros(..., dtype=...))")
                outs.extend(nv.handles)
            b.yield_(outs)
        for n, t in zip(carried, rebuild_all(inits, list(op.results))):
            self.gen.lscope[n] = t
            self.gen.local_defs[n] = t

    # -- while -------------------------------------------------------------------------------------
    def visit_While(self, node: ast.While) -> None:
        if node.orelse:
            raise self.gen.error(node, "`while ... else` is not supported in kernels")
        b = self.gen.builder
        liveins = dict(self.gen.lscope)
        tmp = b.op("scf.execute_region", [], [], regions=1)
        tblock = tmp.regions[0].blocks.append()
        with b.at(tblock):
            _, defs, returned = self.flow.run_block(node.body, liveins)
        tmp.erase()
        if returned:
            raise self.gen.error(node, RETURN_IN_LOOP)
        carried = [n for n in defs if n in liveins]
        inits = [self.flow.carry(node, n, liveins[n]) for n in carried]
        types = [t for v in inits for t in v.ir_types]
        op = b.op("scf.while", flat(inits), types, regions=2)
        before = op.regions[0].blocks.append(*types)
        after = op.regions[1].blocks.append(*types)
        scope = dict(liveins)
        scope.update(zip(carried, rebuild_all(inits, list(before.arguments))))
        with b.at(before):
            saved = self.gen.lscope
            self.gen.lscope = scope
            try:
                cond = self.gen.visit(node.test)
            finally:
                self.gen.lscope = saved
            if isinstance(cond, condition):
                cond = tl._unwrap(cond.condition)
            if not isinstance(cond, tensor):
                cond = self.gen.semantic.to_tensor(cond)
            c = self.flow.scalar_condition(node.test, cond)
            b.op("scf.condition", [c] + list(before.arguments), [])
        scope = dict(liveins)
        scope.update(zip(carried, rebuild_all(inits, list(after.arguments))))
        with b.at(after):
            result_scope, _, _ = self.flow.run_block(node.body, scope)
            outs = []
            for n, v in zip(carried, inits):
                nv = self.flow.carry(node, n, result_scope[n])
                if not nv.same_type(v):
                    raise self.gen.error(node, f"loop-carried variable `{n}` has type {v.type} before the loop but "
                                           f"{nv.type} after an iteration; keep its type the same")
                outs.extend(nv.handles)
            b.yield_(outs)
        for n, t in zip(carried, rebuild_all(inits, list(op.results))):
            self.gen.lscope[n] = t
            self.gen.local_defs[n] = t
