"""Argument specialization: from the values of a call to the key of the compiled kernel to use.

As in Triton: an integer becomes ``i32``/``i64``/``u64`` by its value, and is specialized when it equals 1
(it becomes a compile-time constant) or is divisible by 16; a tensor becomes a pointer to its element type,
specialized when its address is divisible by 16. ``do_not_specialize`` turns both off for an argument.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

#: element type names of torch and numpy, to Triton's signature spelling
DTYPE_NAMES = {
    "float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float64": "fp64", "float": "fp32", "half": "fp16",
    "double": "fp64", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
    "uint16": "u16", "uint32": "u32", "uint64": "u64", "bool": "i1", "float8_e4m3fn": "fp8e4nv",
    "float8_e5m2": "fp8e5", "float8_e4m3fnuz": "fp8e4b8", "float8_e5m2fnuz": "fp8e5b16", "int": "i32",
    "long": "i64", "short": "i16",
}


class PointerArg:
    """What the launcher needs of an array argument."""
    __slots__ = ("address", "device", "obj")

    def __init__(self, address: int, device: str, obj: Any) -> None:
        self.address = address
        self.device = device
        self.obj = obj


def dtype_name(dt: Any) -> str:
    text = str(dt).replace("torch.", "")
    name = DTYPE_NAMES.get(text)
    if name is None:
        from ..language.dtypes import dtype as tl_dtype, ty_to_str
        if isinstance(dt, tl_dtype):
            return ty_to_str(dt)
        raise TypeError(f"unsupported element type {dt}")
    return name


def _torch_ptr(t: Any) -> tuple[str, int, str]:
    return dtype_name(t.dtype), t.data_ptr(), t.device.type


def _numpy_ptr(a: Any) -> tuple[str, int, str]:
    return dtype_name(a.dtype), a.__array_interface__["data"][0], "cpu"


def _generic_ptr(a: Any) -> tuple[str, int, str]:
    if hasattr(a, "data_ptr") and hasattr(a, "dtype"):
        dev = getattr(getattr(a, "device", None), "type", None) or str(getattr(a, "device", "cpu"))
        return dtype_name(a.dtype), a.data_ptr(), dev
    if hasattr(a, "__cuda_array_interface__"):
        iface = a.__cuda_array_interface__
        import numpy as np
        return dtype_name(np.dtype(iface["typestr"]).name), iface["data"][0], "cuda"
    if hasattr(a, "__array_interface__"):
        iface = a.__array_interface__
        import numpy as np
        return dtype_name(np.dtype(iface["typestr"]).name), iface["data"][0], "cpu"
    raise TypeError(f"cannot pass a {type(a).__name__} to a kernel: expected a number, a torch tensor, a numpy "
                    "array or an object with __array_interface__/__cuda_array_interface__")


_POINTER_HANDLERS: dict[type, Callable[[Any], tuple[str, int, str]]] = {}


def _handler_for(t: type) -> Callable[[Any], tuple[str, int, str]]:
    h = _POINTER_HANDLERS.get(t)
    if h is None:
        mod = t.__module__
        if mod.startswith("torch") and hasattr(t, "data_ptr"):
            h = _torch_ptr
        elif mod == "numpy" and t.__name__ == "ndarray":
            h = _numpy_ptr
        else:
            h = _generic_ptr
        _POINTER_HANDLERS[t] = h
    return h


def _int_type(v: int) -> str:
    if -2**31 <= v < 2**31:
        return "i32"
    if 2**63 <= v < 2**64:
        return "u64"
    if -2**63 <= v < 2**63:
        return "i64"
    raise OverflowError(f"integer argument {v} does not fit in 64 bits")


def _const_key(v: Any) -> Any:
    try:
        hash(v)
        return (type(v).__name__, v)
    except TypeError:
        return (type(v).__name__, repr(v))


class ArgSpecializer:
    """Turns the arguments of a call into (cache key, launch values) for one JITFunction."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.params = fn.params

    def specialize(self, values: list[Any]) -> tuple[tuple, list[Any]]:
        """``values`` in parameter order. Returns the key and the run-time values (PointerArg for arrays)."""
        from ..language.core import constexpr
        from ..language.dtypes import dtype as tl_dtype
        key: list[Any] = []
        runtime: list[Any] = []
        for p, v in zip(self.params, values):
            if isinstance(v, constexpr):
                v = v.value
            if p.is_constexpr:
                key.append(("C", _const_key(v)))
                continue
            t = type(v)
            if t is bool:
                key.append(("i1", ""))
                runtime.append(v)
            elif t is int:
                ty = _int_type(v)
                if p.do_not_specialize:
                    key.append((ty, ""))
                    runtime.append(v)
                elif v == 1:
                    key.append((ty, "1"))   # specialized to a compile-time 1; not passed at run time
                else:
                    key.append((ty, "D" if v % 16 == 0 else ""))
                    runtime.append(v)
            elif t is float:
                key.append(("fp32", ""))
                runtime.append(v)
            elif v is None:
                key.append(("C", _const_key(None)))
            elif isinstance(v, tl_dtype):
                key.append(("C", _const_key(v)))
            elif t is MockTensor:
                key.append(("*" + v.type_name, "D"))
                runtime.append(PointerArg(0, "mock", v))
            else:
                name, address, device = _handler_for(t)(v)
                aligned = not p.do_not_specialize and not p.do_not_specialize_on_alignment and address % 16 == 0
                key.append(("*k" + name if p.is_const else "*" + name, "D" if aligned else ""))
                runtime.append(PointerArg(address, device, v))
        return tuple(key), runtime

    def compile_inputs(self, key: tuple, values: list[Any]) -> tuple[dict, dict, dict]:
        """Signature, constexprs and attrs for ASTSource from a specialization key."""
        signature: dict[str, str] = {}
        constexprs: dict[tuple, Any] = {}
        attrs: dict[tuple, list] = {}
        from ..language.core import constexpr
        for i, (p, (ty, spec), v) in enumerate(zip(self.params, key, values)):
            if ty == "C":
                signature[p.name] = "constexpr"
                constexprs[(i, )] = v.value if isinstance(v, constexpr) else v
            elif spec == "1":
                signature[p.name] = "constexpr"
                constexprs[(i, )] = 1
            else:
                signature[p.name] = ty
                if spec == "D":
                    attrs[(i, )] = [["tt.divisibility", 16]]
        return signature, constexprs, attrs


class MockTensor:
    """Stands in for a tensor of a given dtype in ``warmup`` (no memory needed)."""

    def __init__(self, dtype: Any, shape: Optional[list[int]] = None) -> None:
        self.dtype = dtype
        self.shape = shape or [1]
        self.type_name = dtype_name(dtype)

    @staticmethod
    def wrap_dtype(arg: Any) -> Any:
        from ..language.dtypes import dtype as tl_dtype
        if isinstance(arg, tl_dtype) or (type(arg).__name__ == "dtype" and "torch" in type(arg).__module__):
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

    def __str__(self) -> str:
        return f"TensorWrapper[{self.dtype}]({self.base})"


def reinterpret(tensor: Any, dtype: Any) -> Any:
    """View ``tensor``'s memory as elements of ``dtype`` (same width) when passed to a kernel."""
    if isinstance(tensor, TensorWrapper):
        if dtype == tensor.base.dtype:
            return tensor.base
        return TensorWrapper(tensor.base, dtype)
    return TensorWrapper(tensor, dtype)
