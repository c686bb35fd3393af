"""Calls inside kernels: builtins, @jit device functions, dtypes used as conversions, Python builtins on
compile-time values, ``min``/``max``/``print``; and the rule that plain Python functions cannot be called."""
from __future__ import annotations

import ast
import builtins
import inspect
import math as pymath
import types
from typing import Any, Optional

from ..language import core as tl
from ..language.aggregate import BoundJITMethod, compile_time_kwargs, is_aggregate_method
from ..language.core import constexpr, tensor, tuple_value
from ..language.device_function import DeviceFunction
from ..language.elementwise import condition
from ..language.elementwise import slice as tl_slice
from .frontend import Generator, Visitors, wrap_python

#: Python builtins a kernel may call; on compile-time values they run as Python
STATIC_BUILTINS = {
    "len", "int", "float", "bool", "str", "isinstance", "getattr", "hasattr", "abs", "round", "zip", "enumerate",
    "list", "tuple", "type", "repr", "divmod", "all", "any", "sorted", "reversed", "dict", "set", "slice",
    "ValueError", "TypeError", "RuntimeError", "AssertionError", "NotImplementedError", "sum",
}


class CallVisitor:
    def __init__(self, gen: Generator) -> None:
        self.gen = gen

    def visitors(self) -> Visitors:
        return {ast.Call: self.visit_Call, ast.keyword: self.visit_keyword}

    def visit_keyword(self, node: ast.keyword) -> tuple[Optional[str], Any]:
        return node.arg, self.gen.visit(node.value)

    def visit_Call(self, node: ast.Call) -> Any:
        fn = self.gen.visit(node.func)
        args: list[Any] = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                v = self.gen.visit(a.value)
                args += list(v.values if isinstance(v, tuple_value) else tl._unwrap(v))
            else:
                args.append(self.gen.visit(a))
        kwargs: dict[str, Any] = {}
        for kw in node.keywords:
            name, val = self.visit_keyword(kw)
            if name is None:
                kwargs.update({k: wrap_python(v) for k, v in tl._unwrap(val).items()})
            else:
                kwargs[name] = val
        return self.call(fn, args, kwargs, node)

    def call(self, fn: Any, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
        if isinstance(fn, constexpr) and inspect.isfunction(fn.value) and not isinstance(fn.value, DeviceFunction) \
                and not tl.is_builtin(fn.value):
            # a helper decorated with @tl.constexpr (FlagGems): Triton calls it at compile time with the arguments
            # as they are (constexpr wrappers included); plain undecorated functions stay refused below. A builtin
            # held in a constexpr (f: tl.constexpr = libdevice.acos) takes the builtin path, with the semantic
            return wrap_python(fn.value(*args, **kwargs))
        fn = tl._unwrap(fn)
        if getattr(node, "_tritium_unused", False):
            unused = tl.unused_result_error(fn, ast.unparse(node.func) if isinstance(node, ast.Call) else "this call")
            if unused:
                raise self.gen.error(node, unused)
        if isinstance(fn, DeviceFunction):
            return self.gen.call_jit_function(fn, args, kwargs, node)
        if isinstance(fn, BoundJITMethod):  # instance.method() of an aggregate's @jit method
            return self.gen.call_jit_function(fn.__func__, [fn.__self__] + args, kwargs, node)
        if is_aggregate_method(fn):
            # an aggregate's plain method runs now, on the values as they are (Triton passes _semantic to it)
            return wrap_python(fn(*args, **kwargs, **compile_time_kwargs(fn, self.gen.semantic, self.gen)))
        func = getattr(fn, "__func__", fn)
        if tl.is_builtin(func):
            extra = {"_semantic": self.gen.semantic}
            if getattr(func, "__wants_generator__", False):
                extra["_generator"] = self.gen
            return wrap_python(fn(*args, **kwargs, **extra))
        if isinstance(fn, tl.dtype):
            if len(args) != 1:
                raise self.gen.error(node, f"{fn}(x) takes one value to convert")
            return self.gen.semantic.cast(self.gen.semantic.to_tensor(args[0]), fn)
        if fn is builtins.print:
            prefix = ""
            vals = list(args)
            if vals and isinstance(vals[0], constexpr) and isinstance(vals[0].value, str):
                prefix = vals.pop(0).value
            return self.gen.semantic.device_print(prefix, [self.gen.semantic.to_tensor(v) for v in vals], False)
        if fn in (builtins.min, builtins.max):
            return self._minmax(fn, args, node)
        if fn is builtins.range:
            raise self.gen.error(node, "range() can only be used as the iterable of a for loop")
        if isinstance(fn, type) and issubclass(fn, (tl.range, tl.static_range, constexpr, tuple_value, condition,
                                                    tl_slice)):
            return fn(*args, **kwargs)
        if isinstance(fn, type) and issubclass(fn, tl.dtype):
            # types are compile-time values: tl.pointer_type(tl.float16), tl.block_type(...), tl.dtype("fp32")
            ua = [tl._unwrap(a) for a in args]
            if any(isinstance(a, tensor) for a in ua):
                raise self.gen.error(node, f"{fn.__name__}() builds a type at compile time and cannot take tensors")
            return wrap_python(fn(*ua, **{k: tl._unwrap(v) for k, v in kwargs.items()}))
        if fn is isinstance and len(args) == 2 and not kwargs:
            # a value's Python type is known at compile time, a tensor's too: isinstance(x, tl.tensor) (Triton)
            return wrap_python(isinstance(tl._unwrap(args[0]), tl._unwrap(args[1])))
        if tl.is_namedtuple_class(fn):
            return tl.make_namedtuple(fn, args, kwargs)
        if fn in (hasattr, getattr) and 2 <= len(args) <= 3 and not kwargs:
            # about the Python object, a tensor's too (Triton's test_short_circuiting: hasattr(x, "dtype"))
            return wrap_python(fn(*[tl._unwrap(a) for a in args]))
        if getattr(fn, "__triton_constexpr_function__", False) or fn is pymath.ceil or fn is pymath.floor \
                or getattr(fn, "__module__", "") == "math" or fn in _static_builtin_objects():
            ua = [tl._unwrap(a) for a in args]
            if any(isinstance(a, tensor) for a in ua):
                raise self.gen.error(node, f"{getattr(fn, '__name__', fn)}() runs at compile time and cannot take "
                                       "run-time tensors")
            return wrap_python(fn(*ua, **{k: tl._unwrap(v) for k, v in kwargs.items()}))
        # methods of compile-time values run as Python, as in Triton: x.dtype.is_floating(), t.index(v)
        if isinstance(fn, types.BuiltinMethodType) or (inspect.ismethod(fn) and
                                                       isinstance(fn.__self__, (tuple_value, constexpr, tl.dtype))):
            return wrap_python(fn(*[tl._unwrap(a) for a in args], **kwargs))
        name = getattr(fn, "__qualname__", getattr(fn, "__name__", repr(fn)))
        if callable(fn):
            raise self.gen.error(node, f"cannot call the Python function `{name}` from a kernel; decorate it with "
                                   "@triton.jit to make it a device function, or with @triton.constexpr_function "
                                   "if it only computes compile-time values")
        raise self.gen.error(node, f"{name!r} is not callable")

    def _minmax(self, fn: Any, args: list[Any], node: ast.AST) -> Any:
        if len(args) == 1:
            args = list(tl._unwrap(args[0]))
        if not any(isinstance(a, tensor) for a in args):
            values = [tl._unwrap(a) for a in args]
            # Python's min/max on NaN or -0.0 depend on the argument order, unlike tl.minimum: Triton refuses them
            which = "min" if fn is builtins.min else "max"
            if any(isinstance(v, float) and v != v for v in values):
                raise self.gen.error(node, f"constexpr {which} does not support NaN values; use tl.{which}imum on "
                                           "tensors, or handle the NaN before the call")
            if any(isinstance(v, float) and v == 0.0 and pymath.copysign(1.0, v) < 0 for v in values):
                raise self.gen.error(node, f"constexpr {which} does not support negative zero; pass 0.0, or use "
                                           f"tl.{which}imum on tensors")
            return wrap_python(fn(*values))
        acc = args[0]
        for a in args[1:]:
            acc = self.gen.semantic.minimum(acc, a) if fn is builtins.min else self.gen.semantic.maximum(acc, a)
        return acc


_STATIC_BUILTIN_OBJECTS = frozenset(getattr(builtins, n) for n in STATIC_BUILTINS)


def _static_builtin_objects() -> frozenset:
    return _STATIC_BUILTIN_OBJECTS
