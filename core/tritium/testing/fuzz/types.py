"""The element types the fuzzer generates, with Triton's promotion rules and the numpy side of each type.

bfloat16 has no numpy type: its arrays are ``uint16`` bit patterns, handed to kernels through
``tritium.reinterpret`` and compared as floats after widening to float32 (exact)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class DType:
    name: str          # tl attribute name
    kind: str          # "b" bool, "i" signed, "u" unsigned, "f" float
    bits: int
    np_name: str       # numpy storage type (bit patterns for bfloat16)

    @property
    def tl(self) -> str:
        return f"tl.{self.name}"

    @property
    def np(self) -> np.dtype:
        return np.dtype(self.np_name)

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_int(self) -> bool:
        return self.kind in "iu"

    @property
    def signed(self) -> bool:
        return self.kind == "i"


_ALL = [DType("int1", "b", 1, "bool"),
        DType("int8", "i", 8, "int8"), DType("int16", "i", 16, "int16"), DType("int32", "i", 32, "int32"),
        DType("int64", "i", 64, "int64"),
        DType("uint8", "u", 8, "uint8"), DType("uint16", "u", 16, "uint16"), DType("uint32", "u", 32, "uint32"),
        DType("uint64", "u", 64, "uint64"),
        DType("float16", "f", 16, "float16"), DType("bfloat16", "f", 16, "uint16"),
        DType("float32", "f", 32, "float32"), DType("float64", "f", 64, "float64")]
BY_NAME = {d.name: d for d in _ALL}
ALL = tuple(_ALL)
INTS = tuple(d for d in _ALL if d.is_int)
FLOATS = tuple(d for d in _ALL if d.is_float)
BOOL = BY_NAME["int1"]


def get(name: str) -> DType:
    return BY_NAME[name]


def _fkind(d: DType) -> int:
    return {"b": 0, "i": 1, "u": 1, "f": 2}[d.kind]


def promote(a: DType, b: DType, div_or_mod: bool = False) -> DType:
    """The computation type of a binary operator on two tensors (Triton's ``computation_type_impl``)."""
    names = {a.name, b.name}
    if "float64" in names:
        return BY_NAME["float64"]
    if "float32" in names:
        return BY_NAME["float32"]
    if "float16" in names:
        return BY_NAME["float32" if div_or_mod else "float16"]
    if names == {"bfloat16"}:
        return BY_NAME["float32" if div_or_mod else "bfloat16"]
    if "bfloat16" in names:
        return BY_NAME["float32"]
    # integers and bool: the wider wins; on equal width unsigned wins; bool is the narrowest
    if a.kind == "b":
        return b
    if b.kind == "b":
        return a
    if a.signed == b.signed:
        return a if a.bits > b.bits else b
    u, s = (a, b) if not a.signed else (b, a)
    return u if u.bits >= s.bits else s


def with_scalar(t: DType, scalar_kind: str, div_or_mod: bool = False) -> DType:
    """Type of ``tensor op python_scalar`` (scalar_kind "i" or "f"): a scalar of a lower or equal kind takes the
    tensor's type."""
    skind = 1 if scalar_kind == "i" else 2
    if skind <= _fkind(t):
        if div_or_mod and t.name in ("float16", "bfloat16"):
            return BY_NAME["float32"]
        return t
    return BY_NAME["float32"] if skind == 2 else BY_NAME["int32"]


def int_range(d: DType) -> tuple[int, int]:
    if d.kind == "b":
        return 0, 1
    info = np.iinfo(d.np)
    return int(info.min), int(info.max)


def finfo(d: DType) -> tuple[float, float, float, int]:
    """(max, smallest normal, smallest subnormal, mantissa bits) of a float type."""
    if d.name == "bfloat16":
        return float(np.float32(3.3895313892515355e38)), 2.0 ** -126, 2.0 ** -133, 7
    fi = np.finfo(d.np)
    return float(fi.max), float(fi.tiny), float(fi.smallest_subnormal), int(fi.nmant)


def round_down_to(d: DType, x: float) -> float:
    """The largest value of float type ``d`` that is <= x (x finite and within range)."""
    if d.name == "bfloat16":
        f = np.float32(x)
        if float(f) > x:
            f = np.nextafter(f, np.float32(-np.inf))
        bits = int(f.view(np.uint32))
        if f >= 0:
            bits &= 0xFFFF0000
        elif bits & 0xFFFF:
            bits = (bits & 0xFFFF0000) + 0x10000
        return float(np.uint32(bits).view(np.float32))
    f = d.np.type(x)
    if float(f) > x:
        f = np.nextafter(f, d.np.type(-np.inf))
    return float(f)


def bf16_bits(x: np.ndarray) -> np.ndarray:
    """float32 values to bfloat16 bit patterns, round to nearest even (NaN stays NaN)."""
    b = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    nan = np.isnan(np.asarray(x, np.float32))
    r = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(nan, np.uint16(0x7FC0), r).astype(np.uint16)


def bf16_to_f32(bits: np.ndarray) -> np.ndarray:
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(np.float32)


def as_float_view(d: DType, a: np.ndarray) -> np.ndarray:
    """The values of an array of type ``d`` as numpy numbers (bfloat16 widened to float32, exactly)."""
    return bf16_to_f32(a) if d.name == "bfloat16" else a
