"""``tl.constexpr`` and ``tl.tuple``: compile-time constants, tuples of values, their base class and the
unwrapping of constexprs that every builtin does on its arguments.

The two types need each other (a constexpr unwraps the tuple it meets; a tuple wraps its constants), and neither
needs the builtin machinery, so they live apart from ``core.py`` (``tensor`` and ``@builtin``), which
re-exports all of this as Triton's ``tl.core.*``.
"""
from __future__ import annotations

import builtins as _py
from typing import Any, Callable, Sequence

from .dtypes import constexpr_type, dtype, tuple_type


def _unwrap_if_constexpr(o: Any) -> Any:
    if isinstance(o, tuple_value) and not getattr(o, "__triton_aggregate__", False):  # an aggregate stays whole
        return tuple_value([_unwrap_if_constexpr(x) for x in o.values], o.type)
    return o.value if isinstance(o, constexpr) else o


_unwrap = _unwrap_if_constexpr


def _unwrap_shape(shape: Any) -> list[int]:
    shape = _unwrap(shape)
    if isinstance(shape, (int, constexpr)):
        shape = [shape]
    if isinstance(shape, tuple_value):
        shape = shape.values
    return [int(_unwrap(s)) for s in shape]


def _constexpr_to_value(v: Any) -> Any:
    return v.value if isinstance(v, constexpr) else v


class const:
    """Annotation marking a pointer argument as pointing to read-only data."""


class base_value:
    type: Any
    #: constexpr's operators give way to this value's reflected ones (``2 + x`` runs ``x.__radd__(2)``, which
    #: emits code): set by ``tensor``, whose module (core.py) imports this one
    _reflects_constexpr_ops: bool = False


def _cx(fn: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def method(self: "constexpr", other: Any) -> Any:
        if isinstance(other, base_value) and other._reflects_constexpr_ops:
            return NotImplemented
        return constexpr(fn(self.value, _unwrap(other)))
    return method


def _rcx(fn: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def method(self: "constexpr", other: Any) -> Any:
        if isinstance(other, base_value) and other._reflects_constexpr_ops:
            return NotImplemented
        return constexpr(fn(_unwrap(other), self.value))
    return method


class constexpr(base_value):
    """A value known at compile time. ``tl.constexpr`` is also the annotation of such parameters."""

    def __init__(self, value: Any) -> None:
        while isinstance(value, constexpr):
            value = value.value
        self.value = value
        self.type = constexpr_type(value)

    def __repr__(self) -> str:
        return f"constexpr[{self.value!r}]"

    def __hash__(self) -> int:
        return hash((type(self.value).__name__, repr(self.value)))

    def __index__(self) -> int:
        return self.value

    def __bool__(self) -> bool:
        return bool(self.value)

    def __int__(self) -> int:
        return int(self.value)

    def __float__(self) -> float:
        return float(self.value)

    def __iter__(self):
        return iter(self.value)

    def __len__(self) -> int:
        return len(self.value)

    def __getitem__(self, i: Any) -> Any:
        return constexpr(self.value[_unwrap(i)])

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.value(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.value, name)

    __add__ = _cx(lambda a, b: a + b)
    __radd__ = _rcx(lambda a, b: a + b)
    __sub__ = _cx(lambda a, b: a - b)
    __rsub__ = _rcx(lambda a, b: a - b)
    __mul__ = _cx(lambda a, b: a * b)
    __rmul__ = _rcx(lambda a, b: a * b)
    __truediv__ = _cx(lambda a, b: a / b)
    __rtruediv__ = _rcx(lambda a, b: a / b)
    __floordiv__ = _cx(lambda a, b: a // b)
    __rfloordiv__ = _rcx(lambda a, b: a // b)
    __mod__ = _cx(lambda a, b: a % b)
    __rmod__ = _rcx(lambda a, b: a % b)
    __pow__ = _cx(lambda a, b: a**b)
    __rpow__ = _rcx(lambda a, b: a**b)
    __gt__ = _cx(lambda a, b: a > b)
    __ge__ = _cx(lambda a, b: a >= b)
    __lt__ = _cx(lambda a, b: a < b)
    __le__ = _cx(lambda a, b: a <= b)
    __eq__ = _cx(lambda a, b: a == b)  # type: ignore[assignment]
    __ne__ = _cx(lambda a, b: a != b)  # type: ignore[assignment]
    __and__ = _cx(lambda a, b: a & b)
    __rand__ = _rcx(lambda a, b: a & b)
    __or__ = _cx(lambda a, b: a | b)
    __ror__ = _rcx(lambda a, b: a | b)
    __xor__ = _cx(lambda a, b: a ^ b)
    __rxor__ = _rcx(lambda a, b: a ^ b)
    __lshift__ = _cx(lambda a, b: a << b)
    __rlshift__ = _rcx(lambda a, b: a << b)
    __rshift__ = _cx(lambda a, b: a >> b)
    __rrshift__ = _rcx(lambda a, b: a >> b)

    def __neg__(self) -> "constexpr":
        return constexpr(-self.value)

    def __pos__(self) -> "constexpr":
        return constexpr(+self.value)

    def __invert__(self) -> "constexpr":
        return constexpr(~self.value)

    def __abs__(self) -> "constexpr":
        return constexpr(abs(self.value))

    def logical_and(self, other: Any) -> "constexpr":
        return constexpr(self.value and _unwrap(other))

    def logical_or(self, other: Any) -> "constexpr":
        return constexpr(self.value or _unwrap(other))

    def __not__(self) -> "constexpr":
        return constexpr(not self.value)


CONSTEXPR_0 = constexpr(0)


class tuple_value(base_value):
    """A tuple of values inside a kernel (``tl.tuple``)."""

    def __new__(cls, args: Sequence[Any] = (), type: Any = None) -> Any:
        base_cls = getattr(type, "base_cls", None)
        if cls is tuple_value and base_cls is not None:
            # rebuilt from its type (a call's arguments and results, loop-carried values): an aggregate again
            return base_cls._from_values(list(args))
        return super().__new__(cls)

    def __init__(self, args: Sequence[Any], type: Any = None) -> None:
        self.values = [a if isinstance(a, base_value) or not _is_const_like(a) else constexpr(a) for a in args]
        self.type = type or tuple_type([getattr(v, "type", None) for v in self.values])

    def with_values(self, values: Sequence[Any]) -> "tuple_value":
        """A tuple of the same kind (a namedtuple's field names, an aggregate's class) holding ``values``."""
        t = tuple_value(values)
        t.type = tuple_type([getattr(v, "type", None) for v in t.values], getattr(self.type, "fields", None))
        return t

    def mapped(self, fn: Callable[[Any], Any]) -> "tuple_value":
        """``fn`` applied to each element; a namedtuple keeps its field names."""
        return self.with_values([fn(v) for v in self.values])

    def __getitem__(self, idx: Any) -> Any:
        idx = _unwrap(idx)
        if isinstance(idx, slice):
            return tuple_value(self.values[idx])
        return self.values[idx]

    def __getattr__(self, name: str) -> Any:
        fields = getattr(self.type, "fields", None) or []
        if name in fields:
            return self.values[fields.index(name)]
        raise AttributeError(name)

    def __setitem__(self, idx: Any, value: Any) -> None:
        self.values[_unwrap(idx)] = value

    def __add__(self, other: Any) -> "tuple_value":
        other = other.values if isinstance(other, tuple_value) else list(_unwrap(other))
        return tuple_value(self.values + other)

    def __mul__(self, n: Any) -> "tuple_value":
        return tuple_value(self.values * _unwrap(n))

    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        other = other.values if isinstance(other, tuple_value) else list(_unwrap(other))
        return constexpr(self.values == other)

    def __hash__(self) -> int:
        return hash(_py.tuple(map(repr, self.values)))  # `tuple` here is tl.tuple (below)

    def __len__(self) -> int:
        return len(self.values)

    def __iter__(self):
        return iter(self.values)

    def __repr__(self) -> str:
        return f"({', '.join(repr(v) for v in self.values)})"


tuple = tuple_value  # noqa: A001  (tl.tuple)


def is_namedtuple_class(fn: Any) -> bool:
    return isinstance(fn, type) and issubclass(fn, _py.tuple) and hasattr(fn, "_fields")


def make_namedtuple(cls: Any, args: Sequence[Any], kwargs: dict) -> tuple_value:
    """``Point(x=..., y=...)`` inside a kernel: a tuple whose fields are the class's (Triton: test_namedtuple)."""
    values = _py.list(cls(*args, **kwargs))  # the class itself binds positions, keywords and defaults
    t = tuple_value(values)
    t.type = tuple_type([getattr(v, "type", None) for v in t.values], cls._fields)
    return t


def _is_const_like(a: Any) -> bool:
    return isinstance(a, (int, float, bool, str, type(None), dtype)) or callable(a)


# tritium.language.core is these classes' public home (Triton's too): reprs, pickles, keys that name an
# annotation's class, and the triton package's renaming of constexpr (written by inductor into generated code)
# read __module__
for _cls in (base_value, const, constexpr, tuple_value):
    _cls.__module__ = "tritium.language.core"
del _cls
