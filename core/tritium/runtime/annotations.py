"""Type annotations on kernel parameters: ``def k(X, v: tl.uint8, s: tl.float16, P: "*fp16")``.

As in Triton, an annotation that names a scalar or pointer type fixes that parameter's type in the signature,
whatever the argument's own type: ``v: tl.uint8`` makes ``v`` a ``u8`` even when a Python int is passed (which
would otherwise be an ``i32``). Annotations that name no such type (``torch.Tensor``, ``"whatever"``) are
ignored; ``tl.constexpr`` is handled by :class:`~.jit.KernelParam` itself. Python's own ``int``, ``float`` and
``bool`` count as types, as in Triton (``n: int`` makes ``n`` an ``i32``).

The values are converted as Triton's launcher converts them, once here, so that every backend and the
interpreter receive a value that is exactly representable in the annotated type:

- integers wrap around to the annotated width (300 passed as ``tl.uint8`` is 44); a negative value for an
  unsigned type, or one outside 64 bits, is refused (Triton's launcher raises OverflowError too);
- ``fp16`` rounds to nearest and refuses finite values beyond its range (Triton raises OverflowError);
  ``fp32`` rounds to nearest (beyond its range: infinity); ``bf16`` keeps the upper half of the ``fp32`` bits
  (truncation, as Triton's launcher does; NaN stays NaN);
- ``tl.int1``/``bool`` takes a bool, or an int's lowest bit;
- a pointer annotation (``"*fp16"``, ``tl.pointer_type(tl.float16)``) reads the array as that element type.
"""
from __future__ import annotations

import ctypes
import inspect
import math
import operator
import struct
from typing import Any, Callable

from ..language.dtypes import dtype as tl_dtype
from ..language.dtypes import pointer_type, str_to_ty

#: Triton's canonical spelling of the type names an annotation may use (``triton._utils``' table)
CANONICAL = {
    "bool": "u1", "int1": "u1", "uint1": "u1", "i1": "u1",
    "float8e4nv": "fp8e4nv", "float8e5": "fp8e5", "float8e4b15": "fp8e4b15", "float8_e4m3fn": "fp8e4nv",
    "float8e4b8": "fp8e4b8", "float8_e4m3fnuz": "fp8e4b8", "float8_e5m2": "fp8e5", "float8e5b16": "fp8e5b16",
    "float8_e5m2fnuz": "fp8e5b16",
    "half": "fp16", "float16": "fp16", "bfloat16": "bf16", "float": "fp32", "float32": "fp32", "double": "fp64",
    "float64": "fp64",
    "int8": "i8", "int16": "i16", "int": "i32", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
}
CANONICAL.update({v: v for v in list(CANONICAL.values())})
_TYPES = frozenset(CANONICAL.values())
_INT_BITS = {"i8": 8, "i16": 16, "i32": 32, "i64": 64, "u8": 8, "u16": 16, "u32": 32, "u64": 64}


def normalize(ann: Any) -> str:
    """An annotation in Triton's spelling: ``"u8"``, ``"fp16"``, ``"*fp32"``, ``"*kfp16"`` (const pointer);
    anything else as its name or text."""
    if isinstance(ann, str):
        ann = ann.strip()
        if ann.startswith("const "):
            inner = normalize(ann[len("const"):])
            return "*k" + inner[1:] if inner.startswith("*") else "const " + inner
        if ann.endswith("*"):
            return "*" + normalize(ann[:-1])
        if ann.startswith("*"):
            return "*" + normalize(ann[1:])
        if ann.startswith("tl."):
            return normalize(ann[3:])
        text = ann
    elif isinstance(ann, pointer_type):
        return "*" + normalize(ann.element_ty)
    elif isinstance(ann, tl_dtype):
        text = ann.name
    elif isinstance(ann, type):
        text = ann.__name__
    else:
        text = str(ann)
    return CANONICAL.get(text.replace("_t", ""), text)


def annotation_type(ann: Any) -> str:
    """The signature type an annotation fixes (``"u8"``, ``"*fp16"``, ``"*kfp16"``), or ``""`` when it names
    none (no annotation, ``tl.constexpr``, ``torch.Tensor``...)."""
    if ann is None or ann is inspect.Parameter.empty:
        return ""
    try:
        norm = normalize(ann)
    except Exception:  # an annotation is any Python object; one that does not even print fixes nothing
        return ""
    base = norm[2:] if norm.startswith("*k") else norm[1:] if norm.startswith("*") else norm
    return norm if base in _TYPES else ""


# -- values --------------------------------------------------------------------------------------------------

def _wrap(ty: str, v: Any) -> int:
    i = operator.index(v)  # floats are refused, as Triton's PyLong_As* refuse them
    bits = _INT_BITS[ty]
    if ty[0] == "u":
        if i < 0:
            raise OverflowError(f"{i} is negative and the parameter is unsigned ({ty})")
        if i >= 1 << 64:
            raise OverflowError(f"{i} does not fit in 64 bits")
        return i & ((1 << bits) - 1)
    if not -(1 << 63) <= i < 1 << 63:
        raise OverflowError(f"{i} does not fit in a signed 64-bit integer")
    i &= (1 << bits) - 1
    return i - (1 << bits) if i >> (bits - 1) else i


def _fp16(v: Any) -> float:
    f = float(v)
    try:
        return struct.unpack("<e", struct.pack("<e", f))[0]
    except OverflowError:
        raise OverflowError(f"{f!r} is beyond fp16's range (largest finite value 65504)") from None


def _fp32(v: Any) -> float:
    return ctypes.c_float(float(v)).value


def _bf16(v: Any) -> float:
    f = ctypes.c_float(float(v)).value
    if math.isnan(f):
        return f
    bits = struct.unpack("<I", struct.pack("<f", f))[0] & 0xFFFF0000
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def _bool(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    i = operator.index(v)
    if i < 0:
        raise OverflowError(f"{i} is negative and the parameter is a bool (u1)")
    return bool(i & 1)


def converter(ty: str) -> Callable[[Any], Any]:
    """The function that turns an argument into the value of scalar type ``ty`` that Triton's launcher would
    pass."""
    if ty in _INT_BITS:
        return lambda v: _wrap(ty, v)
    if ty == "u1":
        return _bool
    if ty == "fp16":
        return _fp16
    if ty == "bf16":
        return _bf16
    if ty == "fp32":
        return _fp32
    if ty == "fp64":
        return float
    raise TypeError(f"a scalar parameter cannot be annotated {ty}: kernels take fp8 values only through pointers "
                    "(annotate it '*" + ty + "', or pass an fp16/fp32 value and convert it in the kernel)")


def pointee(ty: str) -> tl_dtype:
    """The element type of a pointer annotation (``"*kfp16"`` -> fp16)."""
    return str_to_ty(ty[2:] if ty.startswith("*k") else ty[1:])


def annotated_binder(fn: Any, p: Any, spec: bool, align: bool,
                     specialize_arg: Callable[..., tuple[tuple, Any]]) -> Callable[[Any], tuple[tuple, Any]]:
    """For the binder (:func:`.specialize.make_binder`, whose ``specialize_arg`` keys arrays): (key entry,
    run-time value) of an argument of parameter ``p``, whose annotation fixes its type. The key carries the
    annotated type, the value is converted to it."""
    ty = p.annotation_type

    def refuse(exc: Exception, v: Any) -> Exception:
        return type(exc)(f"argument `{p.name}` of kernel `{fn.__name__}` is annotated {describe(p)} ({ty}), got "
                         f"{v!r} ({type(v).__name__}): {exc}")

    if ty.startswith("*"):
        elt = pointee(ty)

        def bind_pointer(v: Any) -> tuple[tuple, Any]:
            if v is None:
                return ("C", type(None), None), None
            try:
                k, r = specialize_arg(v, spec, align)
            except (TypeError, ValueError) as exc:
                raise refuse(exc, v) from None
            if k[0] != "*":
                raise refuse(TypeError("expected an array (a tensor, or an object with data_ptr())"), v)
            return ("*", elt, k[2], k[3]), r
        return bind_pointer

    try:
        convert = converter(ty)
    except TypeError as exc:
        raise TypeError(f"parameter `{p.name}` of kernel `{fn.__name__}`: {exc}") from None
    ints = ty[0] in "iu" and ty != "u1"
    plain = (ty, "")
    divisible = (ty, "D")

    def bind_scalar(v: Any) -> tuple[tuple, Any]:
        try:
            r = convert(v)
        except (TypeError, ValueError, OverflowError) as exc:
            raise refuse(exc, v) from None
        # as Triton: an annotated int is never a compile-time 1, but may be known divisible by 16
        return (divisible if ints and align and r % 16 == 0 else plain), r
    return bind_scalar


def describe(p: Any) -> str:
    """How the annotation reads in a message."""
    ann = p.annotation
    return ann if isinstance(ann, str) else getattr(ann, "__name__", None) or repr(ann)
