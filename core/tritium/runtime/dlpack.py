"""Arrays of other libraries (JAX, CuPy...) passed to kernels through DLPack, read without copying."""
from __future__ import annotations

import ctypes
from typing import Any


#: DLPack device codes, named as torch names device types (the names drivers accept)
_DLPACK_DEVICES = {1: "cpu", 2: "cuda", 3: "cpu", 10: "cuda", 13: "cuda", 14: "cpu"}
#: DLPack (type code, bits) to numpy names; bfloat16 and float8 have no numpy name and map to ours
_DLPACK_TYPES = {(0, 8): "int8", (0, 16): "int16", (0, 32): "int32", (0, 64): "int64", (1, 8): "uint8",
                 (1, 16): "uint16", (1, 32): "uint32", (1, 64): "uint64", (2, 16): "float16", (2, 32): "float32",
                 (2, 64): "float64", (4, 16): "bfloat16", (6, 8): "bool"}


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.c_void_p), ("strides", ctypes.c_void_p),
                ("byte_offset", ctypes.c_uint64)]


def _capsule(v: Any) -> Any:
    """A versioned capsule where the producer offers one: only DLPack 1.0 can say that memory is read-only (and
    numpy refuses to export read-only arrays without it)."""
    try:
        return v.__dlpack__(max_version=(1, 0))
    except TypeError:  # a producer older than the max_version keyword
        return v.__dlpack__()


def dlpack_key(v: Any, align: bool) -> tuple[tuple, int]:
    """An object exporting DLPack (JAX, CuPy, ...): read its DLTensor without taking ownership. The capsule's
    memory stays valid while ``v`` lives, which covers the launch."""
    capsule = _capsule(v)
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    # a DLManagedTensor (and its versioned successor after a version header) starts with the DLTensor
    name = b"dltensor_versioned" if ctypes.pythonapi.PyCapsule_IsValid(
        ctypes.py_object(capsule), b"dltensor_versioned") else b"dltensor"
    ptr = get(capsule, name)
    if name == b"dltensor_versioned":
        ptr += 8  # DLPackVersion {uint32 major, minor}
        ptr += 8  # manager_ctx
        ptr += 8  # deleter
        ptr += 8  # flags (uint64)
    t = _DLTensor.from_address(ptr)
    kind = _DLPACK_TYPES.get((t.dtype.code, t.dtype.bits))
    if kind is None or t.dtype.lanes != 1:
        raise TypeError(f"cannot pass a {type(v).__name__} of DLPack type (code {t.dtype.code}, {t.dtype.bits} "
                        f"bits, {t.dtype.lanes} lanes) to a kernel")
    device = _DLPACK_DEVICES.get(t.device.device_type, f"dlpack-device-{t.device.device_type}")
    addr = (t.data or 0) + t.byte_offset
    return ("*", kind, device, align and not addr & 15), addr


def dlpack_layout(v: Any) -> tuple[tuple, bool]:
    """(strides in bytes, read-only?) of an object exporting DLPack, for the launch's safety checks
    (:mod:`.safety`). A producer that speaks DLPack 1.0 says whether its memory is read-only (JAX arrays are);
    an older one cannot, and its memory counts as writable."""
    capsule = _capsule(v)
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    versioned = ctypes.pythonapi.PyCapsule_IsValid(ctypes.py_object(capsule), b"dltensor_versioned")
    ptr = get(capsule, b"dltensor_versioned" if versioned else b"dltensor")
    readonly = False
    if versioned:
        # DLManagedTensorVersioned: version (8 bytes), manager_ctx, deleter, flags (bit 0: read-only), DLTensor
        readonly = bool(ctypes.c_uint64.from_address(ptr + 24).value & 1)
        ptr += 32
    t = _DLTensor.from_address(ptr)
    if not t.strides or t.ndim <= 0:
        return (), readonly  # no strides: compact, row-major
    itemsize = max(1, t.dtype.bits // 8)
    strides = (ctypes.c_int64 * t.ndim).from_address(t.strides)
    return tuple(int(s) * itemsize for s in strides), readonly
