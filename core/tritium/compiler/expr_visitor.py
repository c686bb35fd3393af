"""Expressions of a @jit function: names, constants, operators, subscripts, attributes.

A collaborator of the code generator: it reaches the generator's state and the other visitors through the
:class:`~.frontend.Generator` it is given.
"""
from __future__ import annotations

import ast
import builtins
import operator
import types
from typing import Any

from .. import knobs
from ..language import core as tl
from ..language.aggregate import aggregate_value, is_aggregate
from ..language.core import constexpr, tensor, tuple_value
from ..language.device_function import DeviceFunction
from .call_visitor import STATIC_BUILTINS
from .frontend import Generator, Visitors, wrap_python

_BINOPS = {
    ast.Add: "__add__", ast.Sub: "__sub__", ast.Mult: "__mul__", ast.Div: "__truediv__", ast.FloorDiv: "__floordiv__",
    ast.Mod: "__mod__", ast.Pow: "__pow__", ast.LShift: "__lshift__", ast.RShift: "__rshift__", ast.BitAnd: "__and__",
    ast.BitOr: "__or__", ast.BitXor: "__xor__",
}
_CMPOPS = {
    ast.Eq: "__eq__", ast.NotEq: "__ne__", ast.Lt: "__lt__", ast.LtE: "__le__", ast.Gt: "__gt__", ast.GtE: "__ge__",
}
_PYOPS = {name: getattr(operator, name) for name in list(_BINOPS.values()) + list(_CMPOPS.values())}
_REFLECT = {"__lt__": "__gt__", "__le__": "__ge__", "__gt__": "__lt__", "__ge__": "__le__", "__eq__": "__eq__",
            "__ne__": "__ne__"}


class ExpressionVisitor:
    def __init__(self, gen: Generator) -> None:
        self.gen = gen

    def visitors(self) -> Visitors:
        return {ast.Constant: self.visit_Constant, ast.JoinedStr: self.visit_JoinedStr,
                ast.FormattedValue: self.visit_FormattedValue, ast.Name: self.visit_Name, ast.Tuple: self.visit_Tuple,
                ast.List: self.visit_Tuple, ast.Slice: self.visit_Slice, ast.Subscript: self.visit_Subscript,
                ast.Attribute: self.visit_Attribute, ast.UnaryOp: self.visit_UnaryOp, ast.BinOp: self.visit_BinOp,
                ast.Compare: self.visit_Compare, ast.BoolOp: self.visit_BoolOp, ast.IfExp: self.visit_IfExp}

    def visit_Constant(self, node: ast.Constant) -> Any:
        return constexpr(node.value)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> Any:
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                parts.append(str(v.value))
            elif isinstance(v, ast.FormattedValue):
                val = self.gen.visit(v.value)
                if isinstance(val, tensor):
                    raise self.gen.error(v, "f-strings can only format compile-time values; pass tensors to "
                                        "tl.device_print as arguments")
                val = tl._unwrap(val)
                spec = tl._unwrap(self.gen.visit(v.format_spec)) if v.format_spec is not None else ""
                conv = {115: str, 114: repr, 97: ascii}.get(v.conversion, lambda x: x)
                parts.append(format(conv(val), spec))
        return constexpr("".join(parts))

    def visit_FormattedValue(self, node: ast.FormattedValue) -> Any:
        return self.visit_JoinedStr(ast.JoinedStr(values=[node]))

    def visit_Name(self, node: ast.Name) -> Any:
        name = node.id
        if name in self.gen.lscope:
            return self.gen.lscope[name]
        if name in self.gen.gscope:
            return self._global(node, name, self.gen.gscope[name])
        if hasattr(builtins, name):
            obj = getattr(builtins, name)
            if name in ("range", "min", "max", "print") or name in STATIC_BUILTINS or name in ("True", "False",
                                                                                                    "None"):
                return obj
            raise self.gen.error(node, f"the Python builtin `{name}` cannot be used in a kernel")
        raise self.gen.error(node, f"name `{name}` is not defined")

    def _global(self, node: ast.AST, name: str, val: Any) -> Any:
        if isinstance(val, (constexpr, types.ModuleType, type, tl.dtype)) or callable(val) or isinstance(val, DeviceFunction):
            return val
        if val is None or isinstance(val, (tl.base_value, )):
            return wrap_python(val)
        if knobs.compilation.allow_non_constexpr_globals:
            return wrap_python(val)
        if getattr(val, "__triton_constexpr__", False):
            return wrap_python(val)
        raise self.gen.error(node, f"Cannot access global variable `{name}` from a kernel: only globals created as "
                               f"`{name} = tl.constexpr(...)` (and modules, functions, dtypes) are compile-time "
                               "constants. Wrap it in tl.constexpr, or pass it as an argument "
                               "(TRITON_ALLOW_NON_CONSTEXPR_GLOBALS=1 lifts the check)")

    def visit_Tuple(self, node: ast.Tuple) -> Any:
        vals = []
        for e in node.elts:
            if isinstance(e, ast.Starred):
                v = self.gen.visit(e.value)
                vals += list(v.values if isinstance(v, tuple_value) else tl._unwrap(v))
            else:
                vals.append(self.gen.visit(e))
        return tuple_value(vals)


    def visit_Slice(self, node: ast.Slice) -> Any:
        lo = tl._unwrap(self.gen.visit(node.lower)) if node.lower else None
        hi = tl._unwrap(self.gen.visit(node.upper)) if node.upper else None
        st = tl._unwrap(self.gen.visit(node.step)) if node.step else None
        return slice(lo, hi, st)

    def visit_Subscript(self, node: ast.Subscript) -> Any:
        value = self.gen.visit(node.value)
        idx = self.gen.visit(node.slice)
        if isinstance(value, tensor):
            return self.gen.semantic.subscript(value, idx)
        if is_aggregate(value):
            getitem = getattr(value, "__getitem__")
            if getattr(getitem, "__func__", None) is aggregate_value.__getitem__:
                raise self.gen.error(node, f"{type(value).__name__} is not subscriptable: define __getitem__ on the "
                                           "aggregate class, or read its fields by name")
            return self.gen.call(getitem, [idx], {}, node)
        if isinstance(value, tuple_value):
            i = tl._unwrap(idx)
            if isinstance(i, tensor):
                raise self.gen.error(node.slice, "tuples can only be indexed with compile-time integers")
            return value[i]
        raw = tl._unwrap(value)
        return wrap_python(raw[tl._unwrap(idx)])

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        value = self.gen.visit(node.value)
        attr = node.attr
        if isinstance(value, tensor):
            if attr == "T":
                return self.gen.semantic.permute(value, list(range(len(value.shape)))[:-2] +
                                             [len(value.shape) - 1, len(value.shape) - 2])
            if attr in ("dtype", "type", "shape", "numel", "handle"):
                return wrap_python(getattr(value, attr))
            return getattr(value, attr)
        if isinstance(value, constexpr) and not isinstance(value.value, (types.ModuleType, )):
            if attr == "type" and (not hasattr(value.value, "type") or isinstance(value.value, tuple_value)):
                # constexpr_type(v), as Triton's (test_constexpr_assignment), also for a tuple (`t: tl.constexpr =
                # (5, 6, 7)`): Triton's constexpr keeps its own type whatever it wraps
                return value.type
            return wrap_python(getattr(value.value, attr))
        if isinstance(value, tuple_value):
            return getattr(value, attr)
        if isinstance(value, tl.dtype):
            return wrap_python(getattr(value, attr))
        return wrap_python(getattr(value, attr))

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Any:
        operand = self.gen.visit(node.operand)
        op = type(node.op)
        if isinstance(operand, tensor):
            fn = {ast.USub: "__neg__", ast.UAdd: "__pos__", ast.Invert: "__invert__", ast.Not: "__not__"}[op]
            return getattr(operand, fn)(_semantic=self.gen.semantic)
        v = tl._unwrap(operand)
        if isinstance(v, tuple_value):  # Triton refuses these (test_compile_errors.py::test_err_in_unary_op)
            sym = {ast.USub: "-", ast.UAdd: "+", ast.Invert: "~", ast.Not: "not"}[op]
            raise self.gen.error(node, f"unary `{sym}` is not defined for a tuple; apply it to its elements, or test "
                                       "len(t) == 0")
        return constexpr({ast.USub: lambda: -v, ast.UAdd: lambda: +v, ast.Invert: lambda: ~v,
                          ast.Not: lambda: not v}[op]())

    def binary(self, method: str, lhs: Any, rhs: Any, node: ast.AST) -> Any:
        if isinstance(lhs, tensor):
            return getattr(lhs, method)(rhs, _semantic=self.gen.semantic)
        if isinstance(rhs, tensor):
            rmethod = _REFLECT.get(method, "__r" + method[2:])
            return getattr(rhs, rmethod)(lhs, _semantic=self.gen.semantic)
        a, b = tl._unwrap(lhs), tl._unwrap(rhs)
        if isinstance(a, tuple_value) or isinstance(b, tuple_value):
            res = getattr(lhs, method)(rhs)
            if res is NotImplemented and method in ("__eq__", "__ne__"):
                # a Python list's == knows no tuple_value (desc.block_shape == [M, N]); NotImplemented is
                # truthy, so asserts on it always held: ask the tuple_value, as Python's own dispatch would
                res = getattr(rhs, method)(lhs)
            return res
        if _py_num(a, b):
            return constexpr(_py_binop(method, a, b))
        try:
            # Python's own dispatch (reflected operand, identity fallback of ==): calling a.__eq__(b) directly
            # gave NotImplemented for `None == 0`, a truthy value that took the wrong constexpr branch
            return wrap_python(_PYOPS[method](a, b))
        except TypeError as exc:
            raise self.gen.error(node, f"cannot apply {method} to the compile-time values {a!r} and {b!r}: {exc}") \
                from exc

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        lhs = self.gen.visit(node.left)
        rhs = self.gen.visit(node.right)
        method = _BINOPS.get(type(node.op))
        if method is None:
            raise self.gen.error(node, f"operator {type(node.op).__name__} is not supported")
        return self.binary(method, lhs, rhs, node)

    def visit_Compare(self, node: ast.Compare) -> Any:
        if len(node.comparators) != 1:
            raise self.gen.error(node, "chained comparisons (a < b < c) are not supported; write (a < b) & (b < c)")
        lhs = self.gen.visit(node.left)
        rhs = self.gen.visit(node.comparators[0])
        op = type(node.ops[0])
        if op in (ast.Is, ast.IsNot):
            none = tl._unwrap(lhs) is None or tl._unwrap(rhs) is None
            if (isinstance(lhs, tensor) or isinstance(rhs, tensor)) and not none:
                # `x is None` is decidable (a tensor never is), as in Triton; tensor identity is not
                raise self.gen.error(node, "`is` compares compile-time values only; use == for tensors")
            res = tl._unwrap(lhs) is tl._unwrap(rhs)
            return constexpr(res if op is ast.Is else not res)
        if op in (ast.In, ast.NotIn):
            res = tl._unwrap(lhs) in tl._unwrap(rhs)
            return constexpr(res if op is ast.In else not res)
        return self.binary(_CMPOPS[op], lhs, rhs, node)

    def visit_BoolOp(self, node: ast.BoolOp) -> Any:
        is_and = isinstance(node.op, ast.And)
        result = self.gen.visit(node.values[0])
        for v in node.values[1:]:
            if not isinstance(result, tensor):
                # short-circuit on compile-time values, like Python
                if bool(tl._unwrap(result)) != is_and:
                    return result
                result = self.gen.visit(v)
                continue
            rhs = self.gen.visit(v)
            result = self.gen.semantic.logical_and(result, rhs) if is_and else self.gen.semantic.logical_or(result, rhs)
        return result

    def visit_IfExp(self, node: ast.IfExp) -> Any:
        cond = self.gen.visit(node.test)
        if not isinstance(cond, tensor):
            return self.gen.visit(node.body if tl._unwrap(cond) else node.orelse)
        return self.gen.if_expression(node, cond)


def _py_num(a: Any, b: Any) -> bool:
    return isinstance(a, (int, float, bool)) and isinstance(b, (int, float, bool))


def _py_binop(method: str, a: Any, b: Any) -> Any:
    r = getattr(a, method)(b)
    if r is NotImplemented:
        r = getattr(b, _REFLECT.get(method, "__r" + method[2:]))(a)
    return r
