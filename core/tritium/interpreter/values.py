"""Values of an interpreted kernel: numpy arrays with a leading *batch* axis, and their element types.

Every run-time value (the ``handle`` of a ``tl.tensor``) is a :class:`V`: a numpy array of shape
``(B, *tile_shape)`` plus its Triton type. ``B`` is the number of programs executed together (see
:mod:`.launcher`), or 1 when the value is the same for all of them (constants, ``tl.arange``, scalar
arguments): numpy broadcasting then mixes uniform and per-program values for free, and a value whose
batch axis is 1 is known to be uniform without looking at it.

Pointers are int64 *virtual* addresses (see :mod:`.memory`); ``V.mem`` remembers which argument a pointer
was derived from, so that bounds errors can name it.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..language import core as tl
from .floats import fp8_to_f32
from .rewrite import RAW_CODES
from .uniform import uniform_scalar

#: element type name -> numpy dtype holding the interpreter's values (bf16: float32, fp8: encodings)
STORAGE = {
    "int1": np.dtype(np.bool_), "int8": np.dtype(np.int8), "int16": np.dtype(np.int16),
    "int32": np.dtype(np.int32), "int64": np.dtype(np.int64), "uint8": np.dtype(np.uint8),
    "uint16": np.dtype(np.uint16), "uint32": np.dtype(np.uint32), "uint64": np.dtype(np.uint64),
    "fp16": np.dtype(np.float16), "bf16": np.dtype(np.float32), "fp32": np.dtype(np.float32),
    "fp64": np.dtype(np.float64),
    "fp8e4nv": np.dtype(np.uint8), "fp8e5": np.dtype(np.uint8), "fp8e4b8": np.dtype(np.uint8),
    "fp8e5b16": np.dtype(np.uint8), "fp8e4b15": np.dtype(np.uint8),
}
#: element type name -> numpy dtype of its bytes in memory
MEMORY = dict(STORAGE, int1=np.dtype(np.int8), bf16=np.dtype(np.uint16))
SIGNED = {1: np.dtype(np.int8), 2: np.dtype(np.int16), 4: np.dtype(np.int32), 8: np.dtype(np.int64)}
UNSIGNED = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}
PTR = np.dtype(np.int64)


def storage(ty: tl.dtype) -> np.dtype:
    """The numpy dtype of values of scalar type ``ty``."""
    if ty.is_ptr():
        return PTR
    return STORAGE[ty.name]


def shape_of(ty: tl.dtype) -> tuple[int, ...]:
    return tuple(ty.shape) if ty.is_block() else ()


class V:
    """A run-time value: ``a`` has shape ``(B, *shape_of(type))``."""
    __slots__ = ("a", "type", "mem")

    def __init__(self, a: np.ndarray, type: Any, mem: Any = None) -> None:
        self.a = a
        self.type = type
        self.mem = mem

    @property
    def batch(self) -> int:
        return self.a.shape[0]

    @property
    def value(self) -> np.ndarray:
        """The values as a numpy array (bfloat16 and float8 decoded to float32); when one program runs, or
        the value is the same for all programs, without the batch axis."""
        a = self.a
        elt = self.type.scalar if self.type is not None else None
        if elt is not None and elt.is_fp8():
            a = fp8_to_f32(a, elt.name).reshape(a.shape)
        return np.array(a[0] if a.shape[0] == 1 else a)

    def python_scalar(self, t: Any, caller: Any) -> Any:
        """The Python value of scalar tensor ``t`` for a kernel that runs without being rewritten (made by
        ``exec()``, no source: Triton's tests patch kernels so), whose own ``if t:`` / ``range(t)`` reach
        ``tensor.__bool__``/``__index__``; as Triton's interpreter, which holds concrete values. None for any
        other caller: there the compiler's error stands. Programs of the batch that disagree split it."""
        if caller not in RAW_CODES:
            return None
        return uniform_scalar(t, "a condition")

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        v = self.value
        return v if dtype is None else v.astype(dtype)

    def __repr__(self) -> str:
        kind = str(self.type) if self.type is not None else "?"
        where = "" if self.a.shape[0] == 1 else f", {self.a.shape[0]} programs"
        return f"<{kind}{where}: {np.array2string(self.value, threshold=64, edgeitems=4)}>"


def as_type(a: np.ndarray, dt: np.dtype) -> np.ndarray:
    """Reinterpret integers of the same width with another signedness (no copy), or convert."""
    if a.dtype == dt:
        return a
    if a.dtype.kind in "iu" and dt.kind in "iu" and a.dtype.itemsize == dt.itemsize:
        return a.view(dt) if a.flags.c_contiguous or a.ndim == 0 else np.ascontiguousarray(a).view(dt)
    return a.astype(dt)


def signed(a: np.ndarray) -> np.ndarray:
    return as_type(a, SIGNED[a.dtype.itemsize]) if a.dtype.kind == "u" else a


def unsigned(a: np.ndarray) -> np.ndarray:
    return as_type(a, UNSIGNED[a.dtype.itemsize]) if a.dtype.kind == "i" else a


def tensor_value(t: Any) -> np.ndarray:
    """The numpy values of a kernel tensor (for debuggers and tests): ``tritium.interpreter.numpy(x)``."""
    if isinstance(t, tl.tensor):
        h = t.handle
        if isinstance(h, V):
            v = V(h.a, t.type, h.mem)
            return v.value
    if isinstance(t, tl.constexpr):
        return np.asarray(t.value)
    return np.asarray(t)
