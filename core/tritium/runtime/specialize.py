"""Argument specialization: from the values of a call to the key of the compiled kernel to use.

As in Triton: an integer becomes ``i32``/``i64``/``u64`` by its value, and is specialized when it equals 1
(it becomes a compile-time constant) or is divisible by 16; a tensor becomes a pointer to its element type,
specialized when its address is divisible by 16. ``do_not_specialize`` turns both off for an argument,
``do_not_specialize_on_alignment`` only the divisibility.

Every launch runs through code generated per kernel (:mod:`.binder`), so the common argument types (int,
float, torch tensor, numpy array) are handled without a call per argument; anything else goes through
:func:`specialize_arg`. A key is a tuple with one entry per parameter:

- ``("C", type, value)`` a compile-time value (constexpr parameters, None, dtypes, ints equal to 1);
- ``(type_name, spec)`` a scalar, e.g. ``("i32", "D")`` (divisible by 16) or ``("fp32", "")``;
- ``("*", dtype, location, aligned)`` an array, ``location`` saying where its memory lives;
- ``("()", element keys, fields)`` a tuple and ``("TD", dtype, location, block, padding, rows16)`` a host tensor
  descriptor (see :mod:`.structured`; only the binder's slow path meets them).
"""
from __future__ import annotations

import sys
from typing import Any, Callable, Optional

from ..language.core import constexpr
from ..language.device_function import DeviceFunction
from ..language.dtypes import dtype as tl_dtype
from ..language.dtypes import pointer_type, str_to_ty, ty_to_str
from .driver import driver

#: element type names of torch and numpy, to Triton's signature spelling
DTYPE_NAMES = {
    "float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float64": "fp64", "float": "fp32", "half": "fp16",
    "double": "fp64", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
    "uint16": "u16", "uint32": "u32", "uint64": "u64", "bool": "i1", "float8_e4m3fn": "fp8e4nv",
    "float8_e5m2": "fp8e5", "float8_e4m3fnuz": "fp8e4b8", "float8_e5m2fnuz": "fp8e5b16", "int": "i32",
    "long": "i64", "short": "i16",
}

_dtype_names: dict[Any, str] = {}


def dtype_name(dt: Any) -> str:
    """Triton's spelling (``fp32``, ``i64``...) of a torch, numpy or tritium element type."""
    try:
        return _dtype_names[dt]
    except (KeyError, TypeError):
        pass
    text = str(dt).replace("torch.", "")
    name = DTYPE_NAMES.get(text)
    if name is None:
        if not isinstance(dt, tl_dtype):
            raise TypeError(f"unsupported element type {dt}")
        name = ty_to_str(dt)
    try:
        _dtype_names[dt] = name
    except TypeError:
        pass
    return name


# -- array addresses ---------------------------------------------------------------------------------

def _numpy_words() -> Optional[tuple[Any, int]]:
    """numpy's ``__array_interface__`` and ``.ctypes`` cost 1.5-2 us per call. The data pointer is the first
    field after the object header of every ndarray (numpy 1 and 2): (the process's memory as a memoryview of
    8-byte words, that field's byte offset), so that ``words[(id(a) + offset) >> 3]`` reads it (a subscript,
    where a ctypes object per read costs twice as much), after checking on a probe array that this interpreter
    lays objects out that way; None where it does not (or addresses are not 64-bit)."""
    import ctypes

    import numpy as np
    offset = object.__basicsize__
    if offset % 8 or ctypes.sizeof(ctypes.c_void_p) != 8:
        return None
    try:
        words = memoryview((ctypes.c_char * (1 << 62)).from_address(0)).cast("B").cast("Q")
    except (TypeError, ValueError, OverflowError, MemoryError):
        return None
    probe = np.arange(4, dtype=np.int64)[1:]
    if words[(id(probe) + offset) >> 3] != probe.__array_interface__["data"][0]:
        return None
    return words, offset


_np_words: Optional[tuple[Any, int]] = None
_np_address: Optional[Callable[[Any], int]] = None


def numpy_words() -> Optional[tuple[Any, int]]:
    global _np_words
    if _np_words is None:
        _np_words = _numpy_words() or (None, 0)
    return None if _np_words[0] is None else _np_words


def numpy_address() -> Callable[[Any], int]:
    """The data pointer of an ndarray."""
    global _np_address
    if _np_address is None:
        found = numpy_words()
        if found is None:
            _np_address = lambda a: a.__array_interface__["data"][0]  # noqa: E731
        else:
            words, offset = found
            _np_address = lambda a: words[(id(a) + offset) >> 3]  # noqa: E731
    return _np_address


def _numpy_handler(v: Any, align: bool) -> tuple[tuple, int]:
    addr = (_np_address or numpy_address())(v)
    return ("*", v.dtype, "cpu", align and not addr & 15), addr


def _torch_handler(v: Any, align: bool) -> tuple[tuple, int]:
    addr = v.data_ptr()
    # is_cpu is ~8x cheaper than device.type; other devices are named on the (rare) slow path
    return ("*", v.dtype, "cpu" if v.is_cpu else v.device.type, align and not addr & 15), addr


def _generic_handler(v: Any, align: bool) -> tuple[tuple, int]:
    if isinstance(v, MockTensor):
        return ("*", v.dtype, driver.active.device_type, True), 0
    if hasattr(v, "data_ptr") and hasattr(v, "dtype"):
        dev = getattr(v, "device", None)
        dev = getattr(dev, "type", None) or (str(dev) if dev is not None else "cpu")
        addr = v.data_ptr()
        return ("*", v.dtype, dev, align and not addr & 15), addr
    if hasattr(v, "__cuda_array_interface__"):
        iface = v.__cuda_array_interface__
        import numpy as np
        addr = iface["data"][0]
        return ("*", np.dtype(iface["typestr"]), "cuda", align and not addr & 15), addr
    if hasattr(v, "__array_interface__"):
        iface = v.__array_interface__
        import numpy as np
        addr = iface["data"][0]
        return ("*", np.dtype(iface["typestr"]), "cpu", align and not addr & 15), addr
    if hasattr(v, "__dlpack__"):
        from .dlpack import dlpack_key
        return dlpack_key(v, align)
    raise TypeError(f"cannot pass a {type(v).__name__} to a kernel: expected a number, a torch tensor, a numpy "
                    "array or an object with data_ptr(), __array_interface__, __cuda_array_interface__ or "
                    "__dlpack__")


_FP32, _U1, _NONE = ("fp32", ""), ("u1", ""), ("C", type(None), None)
_HANDLERS: dict[type, Callable[[Any, bool], tuple[tuple, Any]]] = {
    float: lambda v, align: (_FP32, v),
    bool: lambda v, align: (_U1, v),
    type(None): lambda v, align: (_NONE, None),
}


def _handler_for(t: type) -> Callable[[Any, bool], tuple[tuple, int]]:
    h = _HANDLERS.get(t)
    if h is None:
        torch = sys.modules.get("torch")
        np = sys.modules.get("numpy")
        if torch is not None and t is torch.Tensor or (torch is not None and issubclass(t, torch.Tensor)
                                                       and t.__module__.startswith("torch")):
            h = _torch_handler
        elif np is not None and t is np.ndarray:
            h = _numpy_handler
        else:
            h = _generic_handler
        _HANDLERS[t] = h
    return h


# -- scalars ------------------------------------------------------------------------------------------

def int_key(v: int, specialize: bool = True, align: bool = True) -> tuple:
    if -2**31 <= v < 2**31:
        ty = "i32"
    elif -2**63 <= v < 2**63:
        ty = "i64"
    elif 2**63 <= v < 2**64:
        ty = "u64"
    else:
        raise OverflowError(f"integer argument {v} does not fit in 64 bits")
    if not specialize:
        return (ty, "")
    if v == 1:
        return ("C", int, 1)
    return (ty, "D" if align and v % 16 == 0 else "")


def const_key(v: Any) -> tuple:
    """Key of a compile-time value: its type is part of it, since 1, 1.0 and True hash alike."""
    if isinstance(v, constexpr):
        v = v.value
    if isinstance(v, DeviceFunction):
        # a @jit function passed as a value is compiled into the kernel: its source (cache_key, which
        # _unsafe_update_src resets) keys the kernel too, as Triton keys it by cache_key alone
        return ("C", type(v), v, v.cache_key)
    try:
        hash(v)
        return ("C", type(v), v)
    except TypeError:
        return ("C", type(v), repr(v))


def specialize_arg(v: Any, specialize: bool = True, align: bool = True) -> tuple[tuple, Any]:
    """(key entry, run-time value) of an argument of a non-constexpr parameter; any type."""
    t = type(v)
    if t is int:
        return int_key(v, specialize, align), v
    h = _HANDLERS.get(t)
    if h is not None:
        return h(v, specialize and align)
    if isinstance(v, tuple):  # before the imports below: tuple arguments go through here on every launch
        return tuple_key(v, specialize, align)
    if isinstance(v, (constexpr, tl_dtype, DeviceFunction)) or t.__name__ == "dtype":
        # a @jit function passed as an argument is compile-time, as in Triton (test_tuple.py::test_namedtuple)
        return const_key(v), None
    if t.__module__ == "numpy" and isinstance(v, sys.modules["numpy"].generic):  # not arrays (memmap, ndarray)
        return _numpy_scalar(v, specialize, align)
    if isinstance(v, bool):
        return ("u1", ""), bool(v)
    if isinstance(v, int) or t.__name__.startswith(("int", "uint")) and hasattr(v, "__index__"):
        iv = int(v.__index__())
        return int_key(iv, specialize, align), iv
    if isinstance(v, float) or t.__name__.startswith("float") and hasattr(v, "__float__") and not hasattr(v, "shape"):
        return ("fp32", ""), float(v)
    if isinstance(v, list):
        raise TypeError("cannot pass a list to a kernel parameter that is not a tl.constexpr: pass a tuple")
    return _handler_for(t)(v, specialize and align)


def _numpy_scalar(v: Any, specialize: bool, align: bool) -> tuple[tuple, Any]:
    """A numpy scalar (np.float32(0.5), np.bool_(True), np.int64(3)) passes as the Python number it holds: it
    also exposes the array interface, which would otherwise pass the address of a temporary copy."""
    kind = v.dtype.kind
    if kind == "b":
        return ("u1", ""), bool(v)
    if kind in "iu":
        iv = int(v)
        return int_key(iv, specialize, align), iv
    if kind == "f":
        return ("fp32", ""), float(v)
    raise TypeError(f"cannot pass a numpy {v.dtype} scalar to a kernel: pass a Python int, float or bool")


# -- the binder ---------------------------------------------------------------------------------------

def binder_helpers() -> dict[str, Any]:
    """What the generated binding code (:mod:`.binder`) calls: keys of the argument types it does not inline."""
    return {"_spec": specialize_arg, "_const": const_key, "_int_key": int_key, "_H": _HANDLERS,
            "_handler_for": _handler_for, "_ONE": ("C", int, 1), "_numpy_address": numpy_address,
            "_numpy_words": numpy_words}


def make_binder(fn: Any, device_type: Optional[str] = None, pinned_apart: bool = False) -> Callable[..., tuple]:
    """``binder(*args, **kwargs) -> (key, runtime, bound, options)`` for one JITFunction (generated by
    :mod:`.binder`)."""
    from .binder import make_binder as generate
    return generate(fn, binder_helpers(), device_type, pinned_apart)


class MockTensor:
    """Stands in for a tensor of a given dtype in ``warmup`` (no memory needed)."""

    def __init__(self, dtype: Any, shape: Optional[list[int]] = None) -> None:
        self.dtype = dtype
        self.shape = shape or [1]
        self.type_name = dtype_name(dtype)

    @staticmethod
    def wrap_dtype(arg: Any) -> Any:
        if isinstance(arg, pointer_type):
            return MockTensor(arg.element_ty)
        if isinstance(arg, str) and arg.startswith("*"):
            return MockTensor(str_to_ty(arg[1:]))
        if (type(arg).__name__ == "dtype" and "torch" in type(arg).__module__) or \
                (isinstance(arg, tl_dtype) and not isinstance(arg, pointer_type)):
            return MockTensor(arg)
        return arg

    def data_ptr(self) -> int:
        return 0


class TensorWrapper:
    """A tensor viewed with another element type (``triton.reinterpret``)."""

    def __init__(self, base: Any, dtype: Any) -> None:
        self.base = base
        self.dtype = dtype
        self.data = getattr(base, "data", None)
        self.device = getattr(base, "device", None)
        self.shape = getattr(base, "shape", None)

    def data_ptr(self) -> int:
        if hasattr(self.base, "data_ptr"):
            return self.base.data_ptr()
        return self.base.__array_interface__["data"][0]

    def stride(self, *args: Any) -> Any:
        return self.base.stride(*args)

    def element_size(self) -> int:
        return self.base.element_size()

    def numel(self) -> int:
        return self.base.numel()

    # torch-style helpers that keep the reinterpreted element type (Triton's tests copy wrapped tensors around)
    def new_empty(self, sizes: Any) -> "TensorWrapper":
        return TensorWrapper(self.base.new_empty(sizes), self.dtype)

    def copy_(self, other: Any) -> "TensorWrapper":
        self.base.copy_(other.base if isinstance(other, TensorWrapper) else other)
        return self

    def clone(self) -> "TensorWrapper":
        return TensorWrapper(self.base.clone(), self.dtype)

    def to(self, device: Any) -> "TensorWrapper":
        return TensorWrapper(self.base.to(device), self.dtype)

    def cpu(self) -> "TensorWrapper":
        return TensorWrapper(self.base.cpu(), self.dtype)

    def __str__(self) -> str:
        return f"TensorWrapper[{self.dtype}]({self.base})"


def reinterpret(tensor: Any, dtype: Any) -> Any:
    """View ``tensor``'s memory as elements of ``dtype`` (same width) when passed to a kernel."""
    if isinstance(tensor, TensorWrapper):
        if dtype == tensor.base.dtype:
            return tensor.base
        return TensorWrapper(tensor.base, dtype)
    return TensorWrapper(tensor, dtype)


def tuple_key(v: tuple, specialize: bool = True, align: bool = True) -> tuple[tuple, tuple]:
    """(key entry, run-time value) of a tuple argument, element by element."""
    keys, values = [], []
    for x in v:
        if isinstance(x, list):
            raise TypeError("cannot pass a list inside a tuple to a kernel: use a tuple")
        k, r = specialize_arg(x, specialize, align)
        keys.append(k)
        values.append(r)
    fields = getattr(type(v), "_fields", None)
    return ("()", tuple(keys), tuple(fields) if fields else None), tuple(values)
