"""numpy references for the conformance suite: element types, their storage, data, and conversions.

numpy has no bfloat16 or float8 types; such data lives in uint16/uint8 arrays and is handed to kernels
through ``tritium.reinterpret``. The conversions here are written from the formats' definitions, so the
suite needs nothing beyond numpy.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np

import tritium
import tritium.language as tl
from tritium.runtime.driver import driver


@dataclass(frozen=True)
class DType:
    name: str            # tritium.language attribute name
    storage: Any         # numpy dtype holding the bits
    kind: str            # "bool", "int", "uint", "float"
    bits: int
    capability: Optional[str] = None   # backend capability needed to use it at all

    @property
    def tl(self) -> Any:
        return getattr(tl, self.name)

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_int(self) -> bool:
        return self.kind in ("int", "uint", "bool")

    @property
    def native(self) -> bool:
        """Whether numpy computes in this type (bf16 and fp8 are decoded to float32 instead)."""
        return self.name not in BF16_FP8


BF16_FP8 = ("bfloat16", "float8e4nv", "float8e5", "float8e4b8", "float8e5b16", "float8e4b15")

DTYPES: dict[str, DType] = {d.name: d for d in [
    DType("int1", np.bool_, "bool", 1),
    DType("int8", np.int8, "int", 8), DType("int16", np.int16, "int", 16), DType("int32", np.int32, "int", 32),
    DType("int64", np.int64, "int", 64),
    DType("uint8", np.uint8, "uint", 8), DType("uint16", np.uint16, "uint", 16),
    DType("uint32", np.uint32, "uint", 32), DType("uint64", np.uint64, "uint", 64),
    DType("float16", np.float16, "float", 16), DType("bfloat16", np.uint16, "float", 16),
    DType("float32", np.float32, "float", 32), DType("float64", np.float64, "float", 64, "fp64"),
    DType("float8e4nv", np.uint8, "float", 8, "fp8"), DType("float8e5", np.uint8, "float", 8, "fp8"),
    DType("float8e4b8", np.uint8, "float", 8, "fp8"), DType("float8e5b16", np.uint8, "float", 8, "fp8"),
    DType("float8e4b15", np.uint8, "float", 8, "fp8"),
]}

INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
FP8 = ["float8e4nv", "float8e5", "float8e4b8", "float8e5b16", "float8e4b15"]
ALL = ["int1"] + INTS + FLOATS + FP8


# -- bfloat16 ------------------------------------------------------------------------------------------

def assert_ulp(got: np.ndarray, want: np.ndarray, ulps: int, err_msg: str = "") -> None:
    """float32 arrays equal within ``ulps`` units in the last place (NaNs where the other has NaN)."""
    g, w = np.asarray(got, np.float32), np.asarray(want, np.float32)
    np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=err_msg)

    def ordered(a: np.ndarray) -> np.ndarray:
        i = a.view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    ok = ~np.isnan(w)
    dist = np.abs(ordered(g[ok]) - ordered(w[ok]))
    assert (dist <= ulps).all(), f"{err_msg}: {int(dist.max())} ulp apart (at most {ulps} allowed)"


def bf16_to_f32(bits: np.ndarray) -> np.ndarray:
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16(x: np.ndarray, rtz: bool = False) -> np.ndarray:
    """Round float32 to bfloat16 bits: to nearest even (or toward zero), NaN stays NaN."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    if rtz:
        r = u >> 16
    else:
        r = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    nan = np.isnan(np.asarray(x, np.float32))
    r = np.where(nan, (u >> 16) | 0x40, r)
    return r.astype(np.uint16)


# -- float8 --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Fp8Format:
    exp_bits: int
    bias: int
    ieee: bool           # the top exponent encodes inf/nan (fp8e5)
    nan_codes: tuple     # codes that are NaN (besides the IEEE ones)
    neg_zero_is_nan: bool = False   # fnuz formats: 0x80 is NaN, there is no -0


FP8_FORMATS = {
    "float8e4nv": Fp8Format(4, 7, False, (0x7F, 0xFF)),
    "float8e5": Fp8Format(5, 15, True, ()),
    "float8e4b8": Fp8Format(4, 8, False, (0x80, ), True),
    "float8e5b16": Fp8Format(5, 16, False, (0x80, ), True),
    "float8e4b15": Fp8Format(4, 15, False, ()),
}


def fp8_table(name: str) -> np.ndarray:
    """float64 value of each of the 256 codes."""
    f = FP8_FORMATS[name]
    man_bits = 7 - f.exp_bits
    out = np.zeros(256, np.float64)
    for code in range(256):
        sign = -1.0 if code & 0x80 else 1.0
        e = (code >> man_bits) & ((1 << f.exp_bits) - 1)
        m = code & ((1 << man_bits) - 1)
        if code in f.nan_codes:
            out[code] = np.nan
        elif f.ieee and e == (1 << f.exp_bits) - 1:
            out[code] = sign * np.inf if m == 0 else np.nan
        elif e == 0:
            out[code] = sign * m * 2.0 ** (1 - f.bias - man_bits)
        else:
            out[code] = sign * (1 + m / 2 ** man_bits) * 2.0 ** (e - f.bias)
    return out


def fp8_to_f32(bits: np.ndarray, name: str) -> np.ndarray:
    return fp8_table(name)[np.asarray(bits, np.uint8)].astype(np.float32)


def fp8_finite_max(name: str) -> float:
    t = fp8_table(name)
    return float(np.nanmax(np.where(np.isinf(t), np.nan, t)))


def f32_to_fp8(x: np.ndarray, name: str) -> np.ndarray:
    """Round finite values within the format's range to the nearest code, ties to even mantissa. Values
    beyond the largest finite one are not defined here (backends saturate or produce NaN/inf)."""
    t = fp8_table(name)
    codes = np.array([c for c in range(256) if np.isfinite(t[c]) and not (t[c] == 0 and c & 0x80)], np.int64)
    vals = t[codes]
    order = np.argsort(vals, kind="stable")
    codes, vals = codes[order], vals[order]
    x = np.asarray(x, np.float64)
    hi = np.clip(np.searchsorted(vals, x), 1, len(vals) - 1)
    lo = hi - 1
    dlo, dhi = np.abs(x - vals[lo]), np.abs(vals[hi] - x)
    pick_hi = (dhi < dlo) | ((dhi == dlo) & ((codes[hi] & 1) == 0))
    out = np.where(pick_hi, codes[hi], codes[lo])
    neg_zero = (x == 0) & np.signbit(x) & (not FP8_FORMATS[name].neg_zero_is_nan)
    return np.where(neg_zero, 0x80, out).astype(np.uint8)


# -- storage and values --------------------------------------------------------------------------------

def decode(bits: np.ndarray, name: str) -> np.ndarray:
    """Values of stored data as numpy computes them (bf16 and fp8 as float32)."""
    if name == "bfloat16":
        return bf16_to_f32(bits)
    if name in FP8_FORMATS:
        return fp8_to_f32(bits, name)
    return np.asarray(bits)


def f64_to_f32_odd(x: np.ndarray) -> np.ndarray:
    """float64 to float32 rounded to odd: a second rounding to a narrower type is then exact."""
    x = np.asarray(x, np.float64)
    f = x.astype(np.float32)
    over = np.abs(f.astype(np.float64)) > np.abs(x)
    bits = f.view(np.uint32) - over.astype(np.uint32)
    inexact = (bits.view(np.float32).astype(np.float64) != x) & ~np.isnan(x)
    return np.where(inexact, bits | 1, f.view(np.uint32)).view(np.float32)


def encode(values: np.ndarray, name: str) -> np.ndarray:
    """Stored bits of ``values`` in the type ``name``, rounded to nearest even once."""
    v = np.asarray(values)
    if name == "bfloat16":
        return f32_to_bf16(f64_to_f32_odd(v) if v.dtype == np.float64 else np.asarray(v, np.float32))
    if name in FP8_FORMATS:
        return f32_to_fp8(v.astype(np.float64), name)
    return v.astype(DTYPES[name].storage)


def arg(bits: np.ndarray, name: str) -> Any:
    """The array as a kernel argument of element type ``name``."""
    if name in BF16_FP8:
        return tritium.reinterpret(bits, DTYPES[name].tl)
    return bits


def random(name: str, shape: Any, rng: np.random.Generator, low: float = -8, high: float = 8,
           nonzero: bool = False) -> np.ndarray:
    """Random stored data of type ``name``; floats are exactly representable in the type."""
    d = DTYPES[name]
    if d.kind == "bool":
        return rng.random(shape) < 0.5
    if d.is_int:
        info = np.iinfo(d.storage)
        lo, hi = max(int(low), info.min), min(int(high), info.max)
        v = rng.integers(lo, hi + 1, size=shape, dtype=np.int64)
        if nonzero:
            v = np.where(v == 0, 1, v)
        return v.astype(d.storage)
    v = rng.uniform(low, high, size=shape)
    if name in FP8_FORMATS:
        limit = min(fp8_finite_max(name), max(abs(low), abs(high)))
        v = np.clip(v, -limit, limit)
    bits = encode(v.astype(np.float32) if d.bits <= 32 else v, name)
    if nonzero:
        vals = decode(bits, name)
        bits = np.where(vals == 0, encode(np.ones_like(vals), name), bits)
    return bits


# -- Philox random numbers (tl.rand) -------------------------------------------------------------------

def philox(seed: int, counters: Sequence[Any], n_rounds: int = 10) -> list[np.ndarray]:
    """Philox 4x32 from its definition (Salmon et al.) with Triton's key (the 64-bit seed, two's complement when
    negative, split in 32-bit halves): the four uint32 output words for the counters (c0, c1, c2, c3), each
    taken modulo 2**32, as ``tl.philox``/``tl.randint4x`` return them."""
    m32 = np.uint64(0xFFFFFFFF)
    # astype wraps negative int64 counters to their two's complement, as the kernels' integer casts do
    c0, c1, c2, c3 = (np.asarray(c).astype(np.uint64) & m32 for c in counters)
    seed &= 2**64 - 1
    k0, k1 = np.uint64(seed & 0xFFFFFFFF), np.uint64(seed >> 32)
    for _ in range(n_rounds):
        p0, p2 = np.uint64(0xD2511F53) * c0, np.uint64(0xCD9E8D57) * c2   # 32x32-bit products fit in 64 bits
        c0, c1, c2, c3 = ((p2 >> np.uint64(32)) ^ c1 ^ k0) & m32, p2 & m32, ((p0 >> np.uint64(32)) ^ c3 ^ k1) & m32, \
            p0 & m32
        k0, k1 = (k0 + np.uint64(0x9E3779B9)) & m32, (k1 + np.uint64(0xBB67AE85)) & m32
    return [c.astype(np.uint32) for c in (c0, c1, c2, c3)]


def uniform_from_bits(bits: np.ndarray) -> np.ndarray:
    """``tl.rand``'s float from one Philox word: the word as a nonnegative 31-bit integer times the largest
    float32 scale that keeps the result below 1."""
    x = np.asarray(bits).astype(np.uint32).view(np.int32).astype(np.int64)
    x = np.where(x < 0, -x - 1, x)
    return x.astype(np.float32) * np.float32(4.6566127342e-10)


def philox_uniform(seed: int, offsets: np.ndarray, n_rounds: int = 10) -> np.ndarray:
    """What ``tl.rand(seed, offsets)`` returns: the first word of Philox with counter (offset, 0, 0, 0)."""
    zero = np.zeros(np.shape(offsets), np.uint64)
    return uniform_from_bits(philox(seed, [offsets, zero, zero, zero], n_rounds)[0])


# -- arrays the suite's automatic device copies do not cover --------------------------------------------

def to_backend(backend: Any, a: np.ndarray) -> Any:
    """``a`` where the backend's kernels can address it: the array itself on a backend that reads host memory,
    else a torch tensor on the active device. For what the suite's per-launch copies miss: arrays whose addresses
    a kernel reads from memory, and launches of precompiled kernels."""
    if backend.has("host-memory"):
        return a
    import torch
    return torch.from_numpy(np.ascontiguousarray(a)).to(driver.active.get_active_torch_device())


def address(x: Any) -> int:
    return x.ctypes.data if isinstance(x, np.ndarray) else x.data_ptr()


def to_host(x: Any) -> np.ndarray:
    return x if isinstance(x, np.ndarray) else x.cpu().numpy()
