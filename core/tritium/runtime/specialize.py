"""Argument specialization: from the values of a call to the key of the compiled kernel to use.

As in Triton: an integer becomes ``i32``/``i64``/``u64`` by its value, and is specialized when it equals 1
(it becomes a compile-time constant) or is divisible by 16; a tensor becomes a pointer to its element type,
specialized when its address is divisible by 16. ``do_not_specialize`` turns both off for an argument,
``do_not_specialize_on_alignment`` only the divisibility.

Every launch runs through :func:`make_binder`'s generated function, so the common argument types (int,
float, torch tensor, numpy array) are handled without a call per argument; anything else goes through
:func:`specialize_arg`. A key is a tuple with one entry per parameter:

- ``("C", type, value)`` a compile-time value (constexpr parameters, None, dtypes, ints equal to 1);
- ``(type_name, spec)`` a scalar, e.g. ``("i32", "D")`` (divisible by 16) or ``("fp32", "")``;
- ``("*", dtype, location, aligned)`` an array, ``location`` saying where its memory lives;
- ``("()", element keys, fields)`` a tuple and ``("TD", dtype, location, block, padding)`` a host tensor
  descriptor (see :mod:`.structured`; only the binder's slow path meets them).
"""
from __future__ import annotations

import inspect
import sys
import types
from typing import Any, Callable, Optional

from ..language.core import constexpr
from ..language.device_function import DeviceFunction
from ..language.dtypes import dtype as tl_dtype
from ..language.dtypes import pointer_type, str_to_ty, ty_to_str
from .annotations import annotated_binder
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

def _numpy_address_reader() -> Callable[[Any], int]:
    """numpy's ``__array_interface__`` and ``.ctypes`` cost 1.5-2 us per call. The data pointer is the first
    field after the object header of every ndarray (numpy 1 and 2); read it there, after checking on a probe
    array that this interpreter lays objects out that way."""
    import ctypes

    import numpy as np
    offset = object.__basicsize__
    read = ctypes.c_void_p.from_address
    probe = np.arange(4, dtype=np.int64)[1:]
    if read(id(probe) + offset).value == probe.__array_interface__["data"][0]:
        return lambda a: read(id(a) + offset).value or 0
    return lambda a: a.__array_interface__["data"][0]


_np_address: Optional[Callable[[Any], int]] = None


def numpy_address() -> Callable[[Any], int]:
    global _np_address
    if _np_address is None:
        _np_address = _numpy_address_reader()
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


# -- the binder ---------------------------------------------------------------------------------------

def make_binder(fn: Any) -> Callable[..., tuple]:
    """``binder(*args, **kwargs) -> (key, runtime, bound, options)`` for one JITFunction.

    ``runtime`` holds one value per non-constexpr parameter (an address for arrays), ``bound`` every
    parameter's value, ``options`` the keyword arguments that are not parameters (``num_warps``...).
    Python's own argument binding gives the TypeErrors for missing or repeated arguments.
    """
    ns: dict[str, Any] = {"_spec": specialize_arg, "_const": const_key, "_int_key": int_key, "_H": _HANDLERS,
                          "_handler_for": _handler_for, "_ONE": ("C", int, 1)}
    torch, np = sys.modules.get("torch"), sys.modules.get("numpy")
    if torch is not None and getattr(torch, "Tensor", None) is not None:
        ns["_Tensor"] = torch.Tensor
    if np is not None and getattr(np, "ndarray", None) is not None:
        ns["_ndarray"], ns["_np_addr"] = np.ndarray, numpy_address()
    sig, body, keys, runtime = [], [], [], []
    # the binder's own locals get a prefix no parameter name starts with
    pre = "__"
    while any(p.name.startswith(pre) for p in fn.params):
        pre += "_"
    simple = (int, float, bool, str, type(None))
    ns["_simple"] = frozenset(simple)
    for p in fn.params:
        n = f"a{p.num}"  # parameter names may shadow the helpers; _rename gives the real names back
        kind = p._param.kind
        if kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise TypeError(f"kernel `{fn.__name__}` takes {'*' if kind == inspect.Parameter.VAR_POSITIONAL else '**'}"
                            f"{p.name}: @jit kernels need every parameter named (give meta-parameters as "
                            "`NAME: tl.constexpr`)")
        if kind == inspect.Parameter.KEYWORD_ONLY and "*" not in sig:
            sig.append("*")
        if p.has_default:
            ns[f"_d{p.num}"] = p.default
            sig.append(f"{n}=_d{p.num}")
        else:
            sig.append(n)
        if p.is_constexpr:
            keys.append(f"(('C', type({n}), {n}) if type({n}) in _simple else _const({n}))")
            continue
        spec, align = not p.do_not_specialize, not p.do_not_specialize and not p.do_not_specialize_on_alignment
        if p.annotation_type:
            ns[f"_a{p.num}"] = annotated_binder(fn, p, spec, align, specialize_arg)
            keys.append(f"{pre}k{p.num}")
            runtime.append(f"{pre}r{p.num}")
            body.append(f"    {pre}k{p.num}, {pre}r{p.num} = _a{p.num}({n})")
            continue
        ns[f"_k{p.num}_D"], ns[f"_k{p.num}_"] = ("i32", "D" if align else ""), ("i32", "")
        int_fast = (f"_k{p.num}_ if {n} != 1 and {n} & 15 else _ONE if {n} == 1 else _k{p.num}_D"
                    if spec else f"_k{p.num}_")
        k, r = f"{pre}k{p.num}", f"{pre}r{p.num}"
        body += [
            f"    {pre}t = type({n})",
            f"    if {pre}t is int and -0x80000000 <= {n} <= 0x7fffffff:",
            f"        {k} = {int_fast}; {r} = {n}",
        ]
        # arrays of the libraries already loaded get a branch of their own: no call, no dispatch
        if "_Tensor" in ns:
            body += [
                f"    elif {pre}t is _Tensor:",
                f"        {r} = {n}.data_ptr()",
                f"        {k} = ('*', {n}.dtype, 'cpu' if {n}.is_cpu else {n}.device.type, {_aligned(r, align)})",
            ]
        if "_ndarray" in ns:
            body += [
                f"    elif {pre}t is _ndarray:",
                f"        {r} = _np_addr({n})",
                f"        {k} = ('*', {n}.dtype, 'cpu', {_aligned(r, align)})",
            ]
        body += [
            "    else:",
            f"        {pre}h = _H.get({pre}t)",
            f"        {k}, {r} = {pre}h({n}, {align}) if {pre}h is not None else _spec({n}, {spec}, {align})",
        ]
        keys.append(k)
        runtime.append(r)
    names = [f"a{p.num}" for p in fn.params]
    src = "\n".join([
        f"def binder({', '.join(sig + [f'**{pre}options'])}):",
        *body,
        f"    return ({', '.join(keys)}{',' if len(keys) == 1 else ''}), "
        f"({', '.join(runtime)}{',' if len(runtime) == 1 else ''}), "
        f"({', '.join(names)}{',' if len(names) == 1 else ''}), {pre}options",
    ])
    exec(compile(src, f"<binder of {fn.__name__}>", "exec"), ns)
    inner = ns["binder"]
    # the real parameter names, for keyword arguments and for Python's own error messages
    return _rename(inner, fn)


def _aligned(addr: str, align: bool) -> str:
    return f"not {addr} & 15" if align else "False"


def _rename(inner: Callable, fn: Any) -> Callable:
    code = inner.__code__
    names = tuple(p.name for p in fn.params)
    varnames = names + code.co_varnames[len(names):]
    if len(set(varnames)) != len(varnames):
        clash = sorted(set(names) & set(code.co_varnames[len(names):]))
        raise ValueError(f"parameter name(s) {clash} of {fn.__name__} clash with the launcher's own")
    new = inner.__code__.replace(co_varnames=varnames, co_name=fn.__name__, co_qualname=fn.__name__)
    out = types.FunctionType(new, inner.__globals__, fn.__name__, inner.__defaults__, inner.__closure__)
    if inner.__kwdefaults__:
        out.__kwdefaults__ = {fn.params[int(k[1:])].name: v for k, v in inner.__kwdefaults__.items()}
    return out


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
