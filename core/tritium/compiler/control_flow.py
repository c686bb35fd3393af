"""``if``, ``for`` and ``while`` on run-time values, as ``scf.if``, ``scf.for`` and ``scf.while``.

Variables a branch or loop body assigns, and that live on after it, become results of the ``scf``
operation. Loops are visited twice, as Triton does: once to learn which variables the body assigns,
then for real with those variables as loop-carried values.
"""
from __future__ import annotations

import ast
import builtins
import warnings
from typing import Any, Callable, Optional, Sequence

from ..language import core as tl
from ..language.core import constexpr, tensor, tuple_value
from ..language.elementwise import condition
from .frontend import Generator, ReturnSignal, Visitors


def _type_name(v: Any) -> str:
    if isinstance(v, tensor):
        return str(v.type)
    if isinstance(v, constexpr):
        return f"constexpr {v.value!r}"
    return type(v).__name__


def contains_return(node: ast.AST) -> bool:
    """Whether ``node`` returns from the function (returns inside nested function definitions do not count)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Return):
            return True
        if isinstance(child, (ast.FunctionDef, ast.Lambda)):
            continue
        if contains_return(child):
            return True
    return False


def always_returns(stmts: Sequence[ast.stmt]) -> bool:
    """Whether every path through ``stmts`` ends in a ``return``."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return):
        return True
    if isinstance(last, ast.If):
        return always_returns(last.body) and always_returns(last.orelse)
    return False


def _same_static(a: Any, b: Any) -> bool:
    """Both branches left the same compile-time value: no scf result is needed."""
    if isinstance(a, tensor) or isinstance(b, tensor):
        return False
    if a is b:
        return True
    ua, ub = tl._unwrap(a), tl._unwrap(b)
    return type(ua) is type(ub) and ua == ub


class ControlFlow:
    def __init__(self, gen: Generator) -> None:
        self.gen = gen
        #: what the block :meth:`_run_block` last ran returned (None: it did not return)
        self._block_returns: Optional[list[Any]] = None

    def visitors(self) -> Visitors:
        return {ast.If: self.visit_If, ast.For: self.visit_For, ast.While: self.visit_While}

    # -- helpers ---------------------------------------------------------------------------------
    def _run_block(self, stmts: Sequence[ast.stmt], scope: dict) -> tuple[dict, dict, bool]:
        """Visit ``stmts`` with a copy of ``scope``; return (scope after, names assigned, returned).

        When the block returned, ``self._block_returns`` holds what it returned (a list of values)."""
        gen = self.gen
        saved_scope, saved_defs, saved_ret, saved_values = gen.lscope, gen.local_defs, gen.returned, gen.ret_values
        gen.lscope, gen.local_defs = dict(scope), {}
        gen.ret_values = None
        returned = False
        try:
            gen.visit_compound(stmts)
        except ReturnSignal:
            returned = True
        returned = returned or gen.returned
        self._block_returns = list(gen.ret_values or []) if returned else None
        try:
            return gen.lscope, gen.local_defs, returned
        finally:
            gen.lscope, gen.local_defs, gen.returned, gen.ret_values = saved_scope, saved_defs, saved_ret, saved_values

    def _carried_value(self, node: ast.AST, name: str, v: Any) -> tensor:
        if isinstance(v, tensor):
            return v
        if isinstance(v, constexpr) and isinstance(v.value, (int, float, bool)):
            return self.gen.semantic.to_tensor(v)
        raise self.gen.error(node, f"`{name}` changes inside run-time control flow but holds {_type_name(v)}, "
                               "which only exists at compile time")

    # -- if ----------------------------------------------------------------------------------------
    def _scalar_condition(self, node: ast.AST, cond: tensor) -> Any:
        if cond.type.is_block() and cond.type.numel == 1:
            # Triton takes a one-element block as its element (with this warning): test_core.py::test_unsplat
            warnings.warn(f"If conditional called with multidimensional Tensor instead of scalar; please use "
                          f"\"if ({ast.unparse(getattr(node, 'test', node))}).item()\" instead", stacklevel=2)
            cond = self.gen.semantic.unsplat(cond)
        if cond.type.is_block():
            raise self.gen.error(node, f"an `if` condition must be a scalar, got a block of type {cond.type}; "
                                   "use tl.where for elementwise choices")
        return self.gen.semantic.cast(cond, tl.int1).handle

    def visit_If(self, node: ast.If, rest: Sequence[ast.stmt] = ()) -> None:
        """``rest``: the statements after this ``if`` in the function body, when a branch returns early; they
        run in each branch that does not return, so both branches end the function."""
        cond = self.gen.visit(node.test)
        if not isinstance(cond, tensor):
            body = node.body if tl._unwrap(cond) else node.orelse
            self.gen.visit_compound(list(body) + list(rest))
            return
        then_stmts = list(node.body) + ([] if always_returns(node.body) else list(rest))
        else_stmts = list(node.orelse) + ([] if always_returns(node.orelse) else list(rest))
        early = bool(rest) or contains_return(node)
        returns: list = []

        def branch(stmts: list) -> Callable:
            def run(scope: dict) -> tuple[dict, dict, bool]:
                out = self._run_block(stmts, scope)
                returns.append(self._block_returns)
                return out
            return run

        self._emit_if(node, cond, branch(then_stmts), branch(else_stmts), early_return=early, returns=returns)

    def _emit_if(self, node: ast.AST, cond: tensor, then_fn: Callable, else_fn: Callable,
                 want: Sequence[str] | None = None, early_return: bool = False,
                 returns: list | None = None) -> list[tensor]:
        b = self.gen.builder
        c = self._scalar_condition(node, cond)
        tmp = b.op("scf.if", [c], [], regions=2)
        then_block = tmp.regions[0].blocks.append()
        else_block = tmp.regions[1].blocks.append()
        liveins = dict(self.gen.lscope)
        with b.at(then_block):
            then_scope, then_defs, then_ret = then_fn(liveins)
        with b.at(else_block):
            else_scope, else_defs, else_ret = else_fn(liveins)
        if (then_ret or else_ret) and not early_return:
            raise self.gen.error(node, "`return` inside a run-time `if` is not supported here; assign the result to a "
                                   "variable and return it after the if")
        if early_return:
            return self._if_returns(node, c, tmp, then_block, else_block, returns or [None, None])
        names = list(want) if want is not None else [
            n for n in dict.fromkeys(list(then_defs) + list(else_defs))
            if (n in then_defs and n in else_defs) or n in liveins]
        then_vals, else_vals, static = [], [], {}
        for n in names:
            tv, ev = then_scope.get(n), else_scope.get(n)
            if tv is None or ev is None:
                continue
            if _same_static(tv, ev):
                static[n] = tv
                continue
            with b.at(then_block):
                tv = self._carried_value(node, n, tv)
            with b.at(else_block):
                ev = self._carried_value(node, n, ev)
            if tv.type != ev.type:
                # Triton's phrases lead (its tests match them): a ternary is an `if` on its own hidden name here
                head = ("Ternary expression with dynamic condition has inconsistent type" if n == "__ifexp_value__"
                        else f"Mismatched type for {n}")
                raise self.gen.error(node, f"{head}: {tv.type} after the then-branch but {ev.type} after the "
                                       "else-branch; make both branches produce the same type")
            then_vals.append((n, tv))
            else_vals.append((n, ev))
        with b.at(then_block):
            b.yield_([v.handle for _, v in then_vals])
        with b.at(else_block):
            b.yield_([v.handle for _, v in else_vals])
        real = b.op("scf.if", [c], [v.handle.type for _, v in then_vals], regions=2)
        then_block.append_to(real.regions[0])
        else_block.append_to(real.regions[1])
        tmp.erase()
        results = []
        for i, (n, v) in enumerate(then_vals):
            t = tensor(real.results[i], v.type)
            self.gen.lscope[n] = t
            self.gen.local_defs[n] = t
            results.append(t)
        for n, v in static.items():
            self.gen.lscope[n] = v
            self.gen.local_defs[n] = v
        return results

    def _if_returns(self, node: ast.AST, c: Any, tmp: Any, then_block: Any, else_block: Any,
                    returns: list) -> list[tensor]:
        """An ``if`` that ends the function: its branches' return values become the ``scf.if`` results."""
        b = self.gen.builder
        then_vals, else_vals = (list(r or []) for r in returns)
        if len(then_vals) != len(else_vals):
            raise self.gen.error(node, "the branches of this `if` return different numbers of values; return the "
                                   "same kind of value on every path")
        ty, yields = [], ([], [])
        static: list = []
        for tv, ev in zip(then_vals, else_vals):
            if _same_static(tv, ev):
                static.append(tv)
                continue
            with b.at(then_block):
                tv = self._carried_value(node, "return value", tv)
            with b.at(else_block):
                ev = self._carried_value(node, "return value", ev)
            if tv.type != ev.type:
                # point at the else-branch's return, as Triton does (test_returns_branched_on_non_constexpr)
                rets = [s for s in ast.walk(ast.Module(body=list(getattr(node, "orelse", [])), type_ignores=[]))
                        if isinstance(s, ast.Return)]
                raise self.gen.error(rets[0] if rets else node, f"Inconsistent return types: this function returns "
                                     f"{tv.type} on one path and {ev.type} on this one; convert them to one type")
            ty.append(tv.type)
            yields[0].append(tv.handle)
            yields[1].append(ev.handle)
            static.append(None)
        with b.at(then_block):
            b.yield_(yields[0])
        with b.at(else_block):
            b.yield_(yields[1])
        real = b.op("scf.if", [c], [h.type for h in yields[0]], regions=2)
        then_block.append_to(real.regions[0])
        else_block.append_to(real.regions[1])
        tmp.erase()
        results, k = [], 0
        for sv in static:
            if sv is None:
                results.append(tensor(real.results[k], ty[k]))
                k += 1
            else:
                results.append(sv)
        self.gen.ret_values = results
        self.gen.returned = True
        return [r for r in results if isinstance(r, tensor)]

    def if_expression(self, node: ast.IfExp, cond: tensor) -> tensor:
        key = "__ifexp_value__"

        def branch(expr: ast.AST) -> Callable:
            def run(scope: dict) -> tuple[dict, dict, bool]:
                value = self.gen.visit(expr)
                return {key: value}, {key: value}, False
            return run

        results = self._emit_if(node, cond, branch(node.body), branch(node.orelse), want=[key])
        self.gen.lscope.pop(key, None)
        self.gen.local_defs.pop(key, None)
        if not results:
            raise self.gen.error(node, "a run-time conditional expression must produce a value in both branches")
        return results[0]

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
            items = list(values.values if isinstance(values, tuple_value) else values)
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
            _, defs, returned = self._run_block(node.body, body_scope(tblock.arguments[0], liveins))
        tmp.erase()
        if returned:
            raise self.gen.error(node, "`return` inside a loop is not supported")
        carried = [n for n in defs if n in liveins and n != name]
        inits = [self._carried_value(node, n, liveins[n]) for n in carried]
        # 2) the real loop
        op = b.op("scf.for", [lb.handle, ub.handle, st.handle] + [v.handle for v in inits],
                  [v.handle.type for v in inits], regions=1)
        block = op.regions[0].blocks.append(iv_ir, *[v.handle.type for v in inits])
        scope = dict(liveins)
        for i, (n, v) in enumerate(zip(carried, inits)):
            scope[n] = tensor(block.arguments[i + 1], v.type)
        with b.at(block):
            after, _, _ = self._run_block(node.body, body_scope(block.arguments[0], scope))
            outs = []
            for n, v in zip(carried, inits):
                nv = self._carried_value(node, n, after[n])
                if nv.type != v.type:
                    raise self.gen.error(node, f"loop-carried variable `{n}` has type {v.type} before the loop but "
                                           f"{nv.type} after an iteration; keep its type the same (initialize it "
                                           "with the type the loop produces, e.g. tl.zeros(..., dtype=...))")
                outs.append(nv.handle)
            b.yield_(outs)
        for i, (n, v) in enumerate(zip(carried, inits)):
            t = tensor(op.results[i], v.type)
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
            _, defs, returned = self._run_block(node.body, liveins)
        tmp.erase()
        if returned:
            raise self.gen.error(node, "`return` inside a loop is not supported")
        carried = [n for n in defs if n in liveins]
        inits = [self._carried_value(node, n, liveins[n]) for n in carried]
        types = [v.handle.type for v in inits]
        op = b.op("scf.while", [v.handle for v in inits], types, regions=2)
        before = op.regions[0].blocks.append(*types)
        after = op.regions[1].blocks.append(*types)
        scope = dict(liveins)
        for i, (n, v) in enumerate(zip(carried, inits)):
            scope[n] = tensor(before.arguments[i], v.type)
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
            c = self._scalar_condition(node.test, cond)
            b.op("scf.condition", [c] + list(before.arguments), [])
        scope = dict(liveins)
        for i, (n, v) in enumerate(zip(carried, inits)):
            scope[n] = tensor(after.arguments[i], v.type)
        with b.at(after):
            result_scope, _, _ = self._run_block(node.body, scope)
            outs = []
            for n, v in zip(carried, inits):
                nv = self._carried_value(node, n, result_scope[n])
                if nv.type != v.type:
                    raise self.gen.error(node, f"loop-carried variable `{n}` has type {v.type} before the loop but "
                                           f"{nv.type} after an iteration; keep its type the same")
                outs.append(nv.handle)
            b.yield_(outs)
        for i, (n, v) in enumerate(zip(carried, inits)):
            t = tensor(op.results[i], v.type)
            self.gen.lscope[n] = t
            self.gen.local_defs[n] = t
