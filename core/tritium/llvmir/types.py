"""LLVM types of MLIR element types, their sizes, and constant literals."""
from __future__ import annotations

import struct

from .fp8 import FP8

#: MLIR element type -> LLVM type. fp8 values live in bytes; pointers are the caller's (their address space
#: is the target's)
ELEMENT_TYPES = {
    "i1": "i1", "i8": "i8", "i16": "i16", "i32": "i32", "i64": "i64", "index": "i64",
    "f16": "half", "bf16": "bfloat", "f32": "float", "f64": "double",
    **{mlir: "i8" for mlir in FP8},
}
#: bytes of a value of each LLVM scalar type (pointers: the target's)
BYTES = {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "half": 2, "bfloat": 2, "float": 4, "double": 8}
FLOATS = ("half", "bfloat", "float", "double")
#: the integer type of a float's bits
INT_OF = {"half": "i16", "bfloat": "i16", "float": "i32", "double": "i64"}
#: the overload suffix of LLVM intrinsics (llvm.fabs.f32)
SUFFIX = {"half": "f16", "bfloat": "bf16", "float": "f32", "double": "f64", "i1": "i1", "i8": "i8", "i16": "i16",
          "i32": "i32", "i64": "i64"}


def llvm_type(mlir_elem: str, who: str = "this backend") -> str:
    """The LLVM type of an MLIR element type; ``!tt.ptr``/``!tt.tensordesc`` are plain ``ptr``."""
    if mlir_elem.startswith(("!tt.ptr", "!tt.tensordesc")):
        return "ptr"
    t = ELEMENT_TYPES.get(mlir_elem)
    if t is None:
        raise NotImplementedError(f"{who} has no representation for type {mlir_elem}")
    return t


def is_float(t: str) -> bool:
    return t in FLOATS


def is_ptr(t: str) -> bool:
    return t.startswith("ptr")


def bits(t: str) -> int:
    if t.startswith("i"):
        return int(t[1:])
    return {"half": 16, "bfloat": 16, "float": 32, "double": 64}.get(t, 64)


def vector_type(n: int, t: str) -> str:
    return t if n == 1 else f"<{n} x {t}>"


def const(t: str, v: float | int | bool) -> str:
    """An LLVM constant literal of type ``t``."""
    if t == "i1":
        return "true" if v else "false"
    if t.startswith("i"):
        return str(int(v))
    if is_ptr(t):
        return "null" if not v else f"inttoptr (i64 {int(v)} to {t})"
    fv = float(v)
    if t == "double":
        return "0x%016X" % struct.unpack("<Q", struct.pack("<d", fv))[0]
    if t == "float":
        # LLVM writes float constants as the double of the same value
        f32 = struct.unpack("<f", struct.pack("<f", fv))[0] if fv == fv else fv
        return "0x%016X" % struct.unpack("<Q", struct.pack("<d", f32))[0]
    if t == "half":
        return "0xH%04X" % struct.unpack("<H", struct.pack("<e", fv))[0]
    if t == "bfloat":
        b = struct.unpack("<I", struct.pack("<f", fv))[0]
        rounded = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) & 0xFFFF
        return "0xR%04X" % (0x7FC0 if fv != fv else rounded)
    raise ValueError(f"no constant of type {t}")
