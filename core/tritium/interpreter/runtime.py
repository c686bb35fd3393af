"""What a rewritten kernel calls where Python would need a value the compiler only has at run time.

:mod:`.rewrite` turns ``if c:`` into ``if rt.cond(c):``, ``for i in range(n):`` into
``for i in rt.iterate(rt.call(range, n)):``, every call ``f(...)`` into ``rt.call(f, ...)`` (so builtins get
the semantic, ``tl.float16(x)`` casts, ``print`` is ``device_print``...), ``a and b`` into
``rt.and_(a, lambda: b)`` and ``x.T`` into ``rt.transpose(x)``. Each helper does what the code generator
does for the same construct, with Python's own control flow.

When several programs run as one batch, a condition or loop bound that differs between them cannot be
followed by one Python execution: :class:`Divergence` carries the per-program values back to the launcher,
which splits the batch by them.
"""
from __future__ import annotations

import builtins
import inspect
import operator
import types
from typing import Any, Iterator

import numpy as np

from ..compiler.errors import COMPREHENSION_IF, COMPREHENSION_ITEMS
from ..language import core as tl
from ..language.aggregate import BoundJITMethod, compile_time_kwargs, is_aggregate_method
from ..language.core import CompileTimeError, _ambient_semantic, constexpr, tensor, tuple_value
from ..language.device_function import DeviceFunction
from ..language.elementwise import condition as _condition
from ..language.elementwise import slice as _tl_slice
from .uniform import Divergence as Divergence  # the launcher catches it from here
from .uniform import uniform_scalar as _uniform_scalar
from .values import as_type, storage


class _Loop:
    """What a rewritten ``for`` iterates; ``carries``: whether it is a run-time loop (see rewrite.py);
    ``types``: the types of its carried variables when it started."""
    __slots__ = ("it", "carries", "types")

    def __init__(self, it: Iterator[Any], carries: bool) -> None:
        self.it, self.carries = it, carries
        self.types: dict[str, Any] = {}

    def __iter__(self) -> "_Loop":
        return self

    def __next__(self) -> Any:
        return next(self.it)


class _RangeSpec:
    """``range(...)`` inside a kernel, before its bounds are known."""
    __slots__ = ("args", )

    def __init__(self, args: tuple) -> None:
        self.args = args


def _sem() -> Any:
    return _ambient_semantic.get()


class Runtime:
    """The helpers, one instance shared by every rewritten function (they find the running launch through
    the ambient semantic)."""

    # -- control flow ------------------------------------------------------------------------------
    def cond(self, c: Any) -> bool:
        if isinstance(c, _condition):
            c = c.condition
        if isinstance(c, tensor):
            return bool(_uniform_scalar(c, "a condition"))
        return bool(c)

    def cond_kind(self, c: Any) -> int:
        """Bit 0: the condition holds; bit 1: it is a run-time value (a tensor)."""
        if isinstance(c, _condition):
            c = c.condition
        if isinstance(c, tensor):
            return 2 | bool(_uniform_scalar(c, "a condition"))
        return int(bool(c))

    def pick(self, c: Any, then: Any, other: Any) -> Any:
        """``then() if c else other()``; on a run-time condition the result is a tensor, as compiled."""
        kind = self.cond_kind(c)
        v = then() if kind & 1 else other()
        return carry(v) if kind & 2 else v

    def carry(self, v: Any) -> Any:
        return carry(v)

    def assign(self, v: Any) -> Any:
        """The value ``x = v`` binds: numbers (constexpr ones too) become scalar tensors, as compiled."""
        if isinstance(v, tuple_value):
            return v.mapped(self.assign)
        if type(v) is tuple:
            return tuple(self.assign(x) for x in v)
        return carry(v)

    def loop_state(self) -> "_Loop":
        return _Loop(iter(()), True)

    def carry_loop(self, loop: "_Loop", name: str, v: Any, entering: bool) -> Any:
        v = carry(v)
        ty = getattr(v, "type", None) if isinstance(v, tensor) else None
        if entering:
            loop.types[name] = ty
        else:
            before = loop.types.get(name)
            if before is not None and ty is not None and before != ty:
                raise CompileTimeError(f"loop-carried variable `{name}` has type {before} before the loop but {ty} "
                                       "after an iteration; keep its type the same (initialize it with the type the "
                                       "loop produces, e.g. tl.zeros(..., dtype=...))")
        return v

    def unsupported(self, message: str) -> None:
        raise CompileTimeError(message)

    def not_(self, c: Any) -> Any:
        if isinstance(c, tensor):
            return c.__not__(_semantic=_sem())
        return not c

    def and_(self, a: Any, rest: Any) -> Any:
        if isinstance(a, tensor):
            return _sem().logical_and(a, rest())
        return a and rest()

    def or_(self, a: Any, rest: Any) -> Any:
        if isinstance(a, tensor):
            return _sem().logical_or(a, rest())
        return a or rest()

    def compare(self, op: str, a: Any, b: Any) -> Any:
        """``a op b``: tensors compare elementwise; other values compare as the Python values they stand for
        (a ``tl.constexpr`` wrapping a dtype equals that dtype, as when compiled)."""
        if isinstance(a, tensor) or isinstance(b, tensor):
            if op in ("is", "is not") and (tl._unwrap(a) is None or tl._unwrap(b) is None):
                return (tl._unwrap(a) is tl._unwrap(b)) == (op == "is")  # `ptr is not None`: a tensor is never None (as compiled)
            if op in ("is", "is not", "in", "not in"):
                raise CompileTimeError(f"`{op}` compares compile-time values only; use == for tensors")
            return _TENSOR_CMP[op](a, b)
        a, b = tl._unwrap(a), tl._unwrap(b)
        return _PY_CMP[op](a, b)

    def transpose(self, x: Any) -> Any:
        if isinstance(x, tensor):
            n = len(x.shape)
            return _sem().permute(x, list(range(n - 2)) + [n - 1, n - 2])
        return x.T

    def iterate(self, it: Any) -> "_Loop":
        if isinstance(it, _RangeSpec):
            return _Loop(self._range(tl.range(*it.args)), True)
        if isinstance(it, tl.range):
            return _Loop(self._range(it), True)
        if isinstance(it, tl.static_range):
            return _Loop(iter(range(tl._unwrap(it.start), tl._unwrap(it.end), tl._unwrap(it.step))), False)
        if isinstance(it, tensor):
            raise CompileTimeError("cannot iterate over a tensor; use range() over its length")
        if isinstance(it, tuple_value):
            return _Loop(iter(it.values if not getattr(it, "__triton_aggregate__", False) else it), False)
        return _Loop(iter(tl._unwrap(it)), False)

    def comprehend(self, it: Any) -> list[Any]:
        """The items of a comprehension's ``for``: compile-time ones only, as compiled (compiler/comprehension.py)."""
        if isinstance(it, _RangeSpec):
            it = tl.range(*it.args)
        if isinstance(it, (tl.range, tl.static_range)):
            bounds = [tl._unwrap(v) for v in (it.start, it.end, it.step)]
            if all(isinstance(b, int) for b in bounds):
                return list(range(*bounds))
        elif isinstance(it, tuple_value):
            return list(it.values if not getattr(it, "__triton_aggregate__", False) else it)
        elif not isinstance(it, tensor):
            return list(tl._unwrap(it))
        raise CompileTimeError(COMPREHENSION_ITEMS)

    def comprehension_if(self, c: Any) -> bool:
        if isinstance(c, tensor):
            raise CompileTimeError(COMPREHENSION_IF)
        return bool(tl._unwrap(c))

    def _range(self, r: tl.range) -> Iterator[Any]:
        s = _sem()
        bounds = []
        for v in (r.start, r.end, r.step):
            t = s.to_tensor(tl._unwrap(v))
            if t.type.is_block() or not t.dtype.is_int():
                raise CompileTimeError(f"loop bounds must be integer scalars, got {t.type}")
            bounds.append(t)
        ity = tl.int64 if any(b.dtype in (tl.int64, tl.uint64) for b in bounds) else tl.int32
        arrays = [b.handle.a for b in bounds]
        if any(a.shape[0] > 1 for a in arrays):
            n = max(a.shape[0] for a in arrays)
            key = np.stack([np.broadcast_to(a.astype(np.int64), (n, )) for a in arrays], axis=1)
            if not (key == key[0]).all():
                raise Divergence(key)
        dt = storage(ity)
        start, end, step = (int(as_type(s.cast(b, ity).handle.a[:1], dt)[0]) for b in bounds)
        if step == 0:
            if start >= end:
                return iter(())  # as compiled: scf.for runs no iteration
            raise RuntimeError(f"range({start}, {end}, 0) would never end (its step is 0 at run time)")
        return self._count(s, ity, start, end, step)

    @staticmethod
    def _count(s: Any, ity: tl.dtype, start: int, end: int, step: int) -> Iterator[Any]:
        for i in range(start, end, step):
            yield tensor(s.builder.get_constant(i, ity), ity)

    def assert_(self, c: Any, msg: Any, text: str) -> None:
        msg = tl._unwrap(msg)
        if not isinstance(c, tensor):   # a condition known now is a device assert too, as compiled
            c = _sem().to_tensor(constexpr(bool(tl._unwrap(c))))
        _sem().device_assert(c, str(msg) if msg else f"Assertion `{text}` failed")

    # -- calls -------------------------------------------------------------------------------------
    def call_unused(self, text: str, f: Any, /, *args: Any, **kwargs: Any) -> Any:
        unused = tl.unused_result_error(f.value if type(f) is constexpr else f, text)
        if unused:
            raise CompileTimeError(unused)
        return self.call(f, *args, **kwargs)

    def call(self, f: Any, /, *args: Any, **kwargs: Any) -> Any:
        if isinstance(f, constexpr) and inspect.isfunction(f.value) and not isinstance(f.value, DeviceFunction):
            return f.value(*args, **kwargs)   # a @tl.constexpr-decorated helper, called as it is (as compiled)
        fn = f.value if type(f) is constexpr else f
        func = getattr(fn, "__func__", fn)
        if getattr(func, tl.TRITON_BUILTIN, False):
            s = _sem()
            return fn(*args, **kwargs, _semantic=s, _generator=s.launch.generator)
        if isinstance(fn, DeviceFunction):
            return _sem().launch.call_jit(fn, args, kwargs)
        if isinstance(fn, BoundJITMethod):   # an aggregate's @jit method, as compiled
            return _sem().launch.call_jit(fn.__func__, (fn.__self__, ) + args, kwargs)
        if is_aggregate_method(fn):          # an aggregate's plain method: the values as they are, and _semantic
            s = _sem()
            out = fn(*args, **kwargs, **compile_time_kwargs(fn, s, s.launch.generator))
            return tuple_value(list(out)) if type(out) is tuple else out
        if isinstance(fn, tl.dtype):
            if len(args) != 1 or kwargs:
                raise CompileTimeError(f"{fn}(x) takes one value to convert")
            s = _sem()
            return s.cast(s.to_tensor(tl._unwrap(args[0])), fn)
        if fn is builtins.range:
            return _RangeSpec(args)
        if fn is builtins.print:
            return self._print(args)
        if fn is builtins.min or fn is builtins.max:
            return self._minmax(fn, args)
        if isinstance(fn, type) and issubclass(fn, _CLASSES):
            return fn(*args, **kwargs)
        if isinstance(fn, type) and issubclass(fn, tl.dtype):
            # types are compile-time values, as in the compiler: tl.pointer_type(tl.float16), tl.block_type(...)
            ua = [tl._unwrap(a) for a in args]
            if any(isinstance(a, tensor) for a in ua):
                raise CompileTimeError(f"{fn.__name__}() builds a type at compile time and cannot take tensors")
            return fn(*ua, **{k: tl._unwrap(v) for k, v in kwargs.items()})
        if fn is isinstance and len(args) == 2 and not kwargs:
            # a value's Python type is known at compile time, a tensor's too: isinstance(x, tl.tensor) (Triton)
            return isinstance(tl._unwrap(args[0]), tl._unwrap(args[1]))
        if tl.is_namedtuple_class(fn):
            return tl.make_namedtuple(fn, args, kwargs)
        if fn in (hasattr, getattr) and 2 <= len(args) <= 3 and not kwargs:
            return fn(*[tl._unwrap(a) for a in args])  # about the Python object, a tensor's too (as compiled)
        if getattr(fn, "__triton_constexpr_function__", False) or getattr(fn, "__module__", "") == "math" \
                or _is_static_builtin(fn):
            ua = [tl._unwrap(a) for a in args]
            if any(isinstance(a, tensor) for a in ua):
                raise CompileTimeError(f"{getattr(fn, '__name__', fn)}() runs at compile time and cannot take "
                                       "run-time tensors")
            return fn(*ua, **{k: tl._unwrap(v) for k, v in kwargs.items()})
        # methods of compile-time values run as Python, as in the compiler: x.dtype.is_floating()
        if isinstance(fn, types.BuiltinMethodType) or (inspect.ismethod(fn) and
                                                       isinstance(fn.__self__, (tuple_value, constexpr, tl.dtype))):
            return fn(*[tl._unwrap(a) for a in args], **kwargs)
        name = getattr(fn, "__qualname__", getattr(fn, "__name__", repr(fn)))
        if callable(fn):
            raise CompileTimeError(f"cannot call the Python function `{name}` from a kernel; decorate it with "
                                   "@triton.jit to make it a device function, or with @triton.constexpr_function "
                                   "if it only computes compile-time values")
        raise CompileTimeError(f"{name!r} is not callable")

    def _print(self, args: tuple) -> Any:
        s = _sem()
        vals = list(args)
        prefix = ""
        if vals and isinstance(tl._unwrap(vals[0]), str):
            prefix = tl._unwrap(vals.pop(0))
        return s.device_print(prefix, [s.to_tensor(tl._unwrap(v)) for v in vals], False)

    def _minmax(self, fn: Any, args: tuple) -> Any:
        if len(args) == 1:
            args = tuple(tl._unwrap(args[0]))
        if not any(isinstance(a, tensor) for a in args):
            return fn(*[tl._unwrap(a) for a in args])
        s = _sem()
        acc = args[0]
        for a in args[1:]:
            acc = s.minimum(acc, a) if fn is builtins.min else s.maximum(acc, a)
        return acc


_TENSOR_CMP = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
               ">=": operator.ge}
_PY_CMP = dict(_TENSOR_CMP, **{"is": operator.is_, "is not": operator.is_not,
                               "in": lambda a, b: operator.contains(b, a),
                               "not in": lambda a, b: not operator.contains(b, a)})

#: Python builtins a kernel may call on compile-time values (the compiler's list)
_STATIC_BUILTINS = frozenset(getattr(builtins, n) for n in (
    "len", "int", "float", "bool", "str", "isinstance", "getattr", "hasattr", "abs", "round", "zip", "enumerate",
    "list", "tuple", "type", "repr", "divmod", "all", "any", "sorted", "reversed", "dict", "set", "slice",
    "ValueError", "TypeError", "RuntimeError", "AssertionError", "NotImplementedError", "sum"))


def _is_static_builtin(fn: Any) -> bool:
    try:
        return fn in _STATIC_BUILTINS
    except TypeError:
        return False


_CLASSES = (tl.range, tl.static_range, constexpr, tuple_value, _condition, _tl_slice)

RT = Runtime()


def returned(value: Any) -> Any:
    """A device function's return value as the compiler makes it: Python numbers returned (alone or as an
    element of the returned tuple, not deeper) become tensors."""
    if isinstance(value, tuple) and not isinstance(value, tuple_value):
        return tuple_value([carry(v) for v in value])
    if isinstance(value, tuple_value):
        return value.mapped(carry)
    return carry(value)


def carry(value: Any) -> Any:
    """A value that leaves run-time control flow (an ``if`` on a tensor, a loop, a call): as when compiled,
    Python numbers become tensors (``x = 0`` before ``for i in range(n): x += ...`` is an int32 tensor)."""
    raw = value.value if type(value) is constexpr else value
    if type(raw) in (bool, int, float):
        return _sem().to_tensor(raw)
    return value
