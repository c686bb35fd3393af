"""List comprehensions of a @jit function, unrolled at compile time into a tuple.

As in Triton, ``[f(v) for v in values]`` over a tuple (or ``tl.static_range``, or ``range`` of compile-time
bounds) evaluates the element once per item while compiling; the result is a tuple of the values, so it can be
indexed, iterated, passed to ``tl.tuple`` or returned. Nothing runs at run time: a comprehension over a tensor
or over a range with run-time bounds has no fixed length and is refused. The comprehension's variables are its
own, as in Python: a name it binds is restored afterwards.
"""
from __future__ import annotations

import ast
import builtins
from typing import Any, Iterable

from ..language import core as tl
from ..language.core import constexpr, tensor, tuple_value
from .errors import COMPREHENSION_IF, COMPREHENSION_ITEMS
from .frontend import Generator, Visitors, wrap_python


class Comprehensions:
    def __init__(self, gen: Generator) -> None:
        self.gen = gen

    def visitors(self) -> Visitors:
        return {ast.ListComp: self.visit_ListComp}

    def visit_ListComp(self, node: ast.ListComp) -> tuple_value:
        names = _bound_names(node.generators)
        saved = {n: (self.gen.lscope[n], n in self.gen.local_defs) for n in names if n in self.gen.lscope}
        out: list[Any] = []
        try:
            self._generate(node, 0, out)
        finally:
            for n in names:
                self.gen.lscope.pop(n, None)
                self.gen.local_defs.pop(n, None)
            for n, (v, was_local) in saved.items():
                self.gen.lscope[n] = v
                if was_local:
                    self.gen.local_defs[n] = v
        return tuple_value(out)

    def _generate(self, node: ast.ListComp, level: int, out: list[Any]) -> None:
        if level == len(node.generators):
            out.append(self.gen.visit(node.elt))
            return
        comp = node.generators[level]
        if comp.is_async:
            raise self.gen.error(comp, "async comprehensions are not supported in kernels")
        for item in self._items(comp.iter):
            self.gen.assign_target(comp.target, item)
            if all(self._holds(c) for c in comp.ifs):
                self._generate(node, level + 1, out)

    def _items(self, node: ast.expr) -> Iterable[Any]:
        if isinstance(node, ast.Call):
            fn = tl._unwrap(self.gen.visit(node.func))
            if fn is tl.static_range or fn is builtins.range or fn is tl.range:
                args = [self.gen.visit(a) for a in node.args]
                kwargs = {kw.arg: self.gen.visit(kw.value) for kw in node.keywords}
                r = tl.static_range(*args, **kwargs) if fn is tl.static_range else tl.range(*args, **kwargs)
                bounds = [tl._unwrap(v) for v in (r.start, r.end, r.step)]
                if not all(isinstance(b, int) for b in bounds):
                    raise self.gen.error(node, COMPREHENSION_ITEMS)
                return [constexpr(i) for i in range(*bounds)]
        values = tl._unwrap(self.gen.visit(node))
        if isinstance(values, tensor) or isinstance(values, (tl.range, tl.static_range)):
            raise self.gen.error(node, COMPREHENSION_ITEMS)
        if isinstance(values, tuple_value) and not getattr(values, "__triton_aggregate__", False):
            return list(values.values)
        try:
            return [wrap_python(v) for v in values]
        except TypeError:
            raise self.gen.error(node, f"cannot iterate over {values!r} in a kernel") from None

    def _holds(self, test: ast.expr) -> bool:
        c = self.gen.visit(test)
        if isinstance(c, tensor):
            raise self.gen.error(test, COMPREHENSION_IF)
        return bool(tl._unwrap(c))


def _bound_names(generators: list[ast.comprehension]) -> list[str]:
    return [n.id for g in generators for n in ast.walk(g.target) if isinstance(n, ast.Name)]
