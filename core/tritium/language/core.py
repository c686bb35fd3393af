"""Values of the Triton language: tensors, and the ``@builtin`` decorator their operators go through.

The builtin protocol (``CompileTimeError``, the ambient semantic layer of the interpreter) is
builtin_protocol.py, constexpr and tuples are constexpr_and_tuple.py and the types are dtypes.py; all are
re-exported here, where Triton keeps them (``tl.core.dtype``, ``tl.core.constexpr``). The ``@builtin`` decorator
stays here, as in Triton: a builtin's error traceback passes through this file (Triton's test_err_in_builtin
looks for it).
"""
from __future__ import annotations

import builtins as _py
import functools
import inspect
from typing import Any, Callable, TypeVar

from .builtin_protocol import (  # noqa: F401  (re-exported as tl.core.*)
    TRITON_BUILTIN, CompileTimeError, _ambient_semantic, is_builtin, must_use_result, unused_result_error)
from .constexpr_and_tuple import (  # noqa: F401  (re-exported as tl.core.*)
    CONSTEXPR_0, _constexpr_to_value, _is_const_like, _unwrap, _unwrap_if_constexpr, _unwrap_shape, base_value,
    const, constexpr, is_namedtuple_class, make_namedtuple, tuple, tuple_value)
from .constexpr_function import ConstexprFunction, constexpr_function  # noqa: F401  (Triton's tl.core names)
from .dtypes import (  # noqa: F401  (re-exported as tl.core.*)
    KIND, SIGNEDNESS, block_type, bfloat16, constexpr_type, dtype, float8e4b8, float8e4b15, float8e4nv,
    float8e5, float8e5b16, float16, float32, float64, int1, int8, int16, int32, int64, pi32_t, pointer_type,
    tuple_type, uint8, uint16, uint32, uint64, void)

TRITON_MAX_TENSOR_NUMEL = 1048576
T = TypeVar("T")


def builtin(fn: T) -> T:
    """Mark a function as a builtin: it runs at compile time and receives ``_semantic``."""
    wants_generator = "_generator" in inspect.signature(fn).parameters  # type: ignore[arg-type]

    @functools.wraps(fn)  # type: ignore[arg-type]
    def wrapper(*args, **kwargs):
        if kwargs.get("_semantic") is None:
            ambient = _ambient_semantic.get()
            if ambient is not None:
                kwargs["_semantic"] = ambient
                if not wants_generator:
                    kwargs.pop("_generator", None)
                elif kwargs.get("_generator") is None:
                    # a kernel run unrewritten (no source): combine functions call back through the launch
                    kwargs["_generator"] = getattr(getattr(ambient, "launch", None), "generator", None)
                return fn(*args, **kwargs)  # type: ignore[operator]
            raise ValueError(f"{fn.__name__}() can only be called inside a @triton.jit function "  # type: ignore
                             "(did you forget the @jit decorator?)")
        if not wants_generator:
            kwargs.pop("_generator", None)
        return fn(*args, **kwargs)  # type: ignore[operator]

    setattr(wrapper, TRITON_BUILTIN, True)
    wrapper.__wants_generator__ = wants_generator  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


def check_bit_width(value: Any, shift_value: Any) -> None:
    if isinstance(value, tensor) and isinstance(shift_value, constexpr):
        bitwidth = value.type.scalar.primitive_bitwidth
        if shift_value.value >= bitwidth:
            import warnings
            warnings.warn(f"Value {shift_value.value} exceeds the maximum bitwidth ({bitwidth}) for type "
                          f"'{value.dtype}'. This may result in undefined behavior.")


# --------------------------------------------------------------------------------------------------
# tensor

def _bin(name: str, reverse: bool = False) -> Callable[..., Any]:
    def method(self: "tensor", other: Any, _semantic: Any = None) -> Any:
        fn = getattr(_semantic, name)
        return fn(other, self) if reverse else fn(self, other)
    method.__name__ = name
    return builtin(method)


class _Shape(_py.tuple):
    """A tensor's shape: a tuple that also equals the list of the same sizes, as Triton's ``tl.tuple`` does
    (``tl.static_assert(x.shape == [])``). The interpreter runs exec()'d kernels as plain Python, where no
    code generator turns the shape into a ``tuple_value`` first."""

    def __eq__(self, other: Any) -> bool:  # type: ignore[override]
        if isinstance(other, (list, _py.tuple)):
            return [_unwrap(s) for s in self] == [_unwrap(s) for s in other]
        return NotImplemented

    def __ne__(self, other: Any) -> bool:  # type: ignore[override]
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = _py.tuple.__hash__


class tensor(base_value):
    """A value computed by the kernel: a scalar or a block (tile) of elements."""

    _reflects_constexpr_ops = True   # `2 + x` is x.__radd__(2): code in the kernel

    def __init__(self, handle: Any, type: dtype) -> None:
        self.handle = handle
        self.type = type
        self.dtype = type.scalar
        self.shape: tuple[int, ...] = _Shape(constexpr(s) for s in type.shape) if type.is_block() else _Shape()
        self.numel = constexpr(type.numel if type.is_block() else 1)

    def __str__(self) -> str:
        return f"{self.dtype}[{', '.join(str(s.value) for s in self.shape)}]"

    def __repr__(self) -> str:
        return f"tensor({self.type})"

    def __bool__(self) -> bool:
        concrete = getattr(self.handle, "python_scalar", None)
        if concrete is not None:  # interpreted, where Python itself meets the tensor (see values.V.python_scalar)
            v = concrete(self, _py.__import__("sys")._getframe(1).f_code)
            if v is not None:
                return _py.bool(v)
        raise CompileTimeError("a tensor's truth value is not known at compile time; compare it inside `if`, "
                               "or use tl.where for elementwise choices")

    def __index__(self) -> int:
        concrete = getattr(self.handle, "python_scalar", None)
        if concrete is not None and self.dtype.is_int():
            v = concrete(self, _py.__import__("sys")._getframe(1).f_code)
            if v is not None:
                return _py.int(v)
        raise CompileTimeError("a tensor cannot be used where a compile-time integer is needed; "
                               "pass it as a tl.constexpr argument")

    __add__ = _bin("add")
    __radd__ = _bin("add", True)
    __sub__ = _bin("sub")
    __rsub__ = _bin("sub", True)
    __mul__ = _bin("mul")
    __rmul__ = _bin("mul", True)
    __truediv__ = _bin("truediv")
    __rtruediv__ = _bin("truediv", True)
    __floordiv__ = _bin("floordiv")
    __rfloordiv__ = _bin("floordiv", True)
    __mod__ = _bin("mod")
    __rmod__ = _bin("mod", True)
    __and__ = _bin("and_")
    __rand__ = _bin("and_", True)
    __or__ = _bin("or_")
    __ror__ = _bin("or_", True)
    __xor__ = _bin("xor_")
    __rxor__ = _bin("xor_", True)
    __lshift__ = _bin("shl")
    __rlshift__ = _bin("shl", True)
    __rshift__ = _bin("shr")
    __rrshift__ = _bin("shr", True)
    __gt__ = _bin("greater_than")
    __ge__ = _bin("greater_equal")
    __lt__ = _bin("less_than")
    __le__ = _bin("less_equal")
    __eq__ = _bin("equal")  # type: ignore[assignment]
    __ne__ = _bin("not_equal")  # type: ignore[assignment]
    __hash__ = object.__hash__  # type: ignore[assignment]
    logical_and = _bin("logical_and")
    logical_or = _bin("logical_or")

    @builtin
    def __pow__(self, other: Any, _semantic: Any = None) -> Any:
        return _semantic.pow(self, other)

    @builtin
    def __rpow__(self, other: Any, _semantic: Any = None) -> Any:
        return _semantic.pow(other, self)

    @builtin
    def __neg__(self, _semantic: Any = None) -> "tensor":
        return _semantic.minus(self)

    @builtin
    def __pos__(self, _semantic: Any = None) -> "tensor":
        return self

    @builtin
    def __invert__(self, _semantic: Any = None) -> "tensor":
        return _semantic.invert(self)

    @builtin
    def __not__(self, _semantic: Any = None) -> "tensor":
        return _semantic.not_(self)

    @builtin
    def __getitem__(self, slices: Any, _semantic: Any = None) -> "tensor":
        return _semantic.subscript(self, slices)

    @property
    def T(self) -> "tensor":
        raise CompileTimeError("use .T inside a kernel")  # replaced by the code generator's attribute hook

    @builtin
    def to(self, dtype: Any, fp_downcast_rounding: Any = None, bitcast: Any = False,
           _semantic: Any = None) -> "tensor":
        dtype = _unwrap(dtype)
        if _unwrap(bitcast):
            return _semantic.bitcast(self, dtype)
        return _semantic.cast(self, dtype, _unwrap(fp_downcast_rounding))


def is_constexpr_function(fn: Any) -> bool:
    return getattr(fn, "__triton_constexpr_function__", False)


def __getattr__(name: str) -> Any:
    # Triton keeps every builtin in triton.language.core and libraries reach them there (torch's inductor
    # inspects tl.core.view); tritium spreads them over sibling modules, all gathered in the package
    # (tl.core.range and static_range too: iterators.py builds on this module)
    import sys
    package = sys.modules.get(__name__.rpartition(".")[0])
    value = getattr(package, name, None) if package is not None and not name.startswith("__") else None
    if value is not None and not isinstance(value, type(sys)):
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
