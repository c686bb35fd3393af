"""Float formats numpy lacks (bfloat16, the five float8 formats) and roundings it does not offer.

The interpreter must round exactly like the compiled CPU backend (whose float8 and round-toward-zero
conversions are the bit-level recipes of ``tritium_cpu.codegen.mathlib``, which match torch where torch
has the type). Every function here works on whole numpy arrays with integer bit operations, so that no
conversion depends on torch being installed and each stays vectorized.

Representation inside the interpreter:

* bfloat16 values live in float32 arrays whose values are always representable in bfloat16: every
  operation that produces a bfloat16 rounds its float32 result (``round_bf16``). Computing in float32 and
  rounding once is exact for +, -, *, / and sqrt (24 >= 2 * 8 + 2 bits), which is also what LLVM does on
  a CPU without bfloat16 arithmetic.
* float8 values live in uint8 arrays holding their encodings; arithmetic decodes to float32 first.
"""
from __future__ import annotations

import numpy as np

from ..llvmir.fp8 import FORMATS

_U32 = np.uint32
_QNAN32 = 0x7FC00000
_INF32 = 0x7F800000


def f64_to_f32_round_odd(x: np.ndarray) -> np.ndarray:
    """float64 -> float32 rounding to odd: a following round-to-nearest to a format of at most 22
    significant bits (bfloat16, fp16, float8) then equals one correct rounding of the float64 value."""
    x = np.asarray(x, np.float64)
    y = x.astype(np.float32)
    back = y.astype(np.float64)
    inexact = (back != x) & ~np.isnan(x)
    if not inexact.any():
        return y
    even = (y.view(_U32) & 1) == 0
    toward = np.where(x > back, np.float32(np.inf), np.float32(-np.inf))
    return np.where(inexact & even, np.nextafter(y, toward), y)


def round_bf16(x: np.ndarray) -> np.ndarray:
    """Round float32 (or float64, with a single rounding) to the nearest bfloat16, ties to even; the result
    is a float32 array. NaNs stay NaN with the quiet bit set, as LLVM's fptrunc leaves them."""
    x = np.asarray(x)
    if x.dtype == np.float64:
        x = f64_to_f32_round_odd(x)
    elif x.dtype != np.float32:
        x = x.astype(np.float32)
    u = x.view(_U32)
    r = (u + (_U32(0x7FFF) + ((u >> 16) & 1))) & _U32(0xFFFF0000)
    nan = (u & 0x7FFFFFFF) > _INF32
    if nan.any():
        r = np.where(nan, (u | 0x00400000) & _U32(0xFFFF0000), r)
    return r.view(np.float32)


def to_f16(x: np.ndarray) -> np.ndarray:
    """float32/float64 -> float16 rounding to nearest even; signaling NaNs come out quiet, as the hardware's
    conversions leave them (numpy's software conversion keeps them signaling)."""
    h = np.asarray(x).astype(np.float16)
    nan = np.isnan(h)
    if nan.any():
        h = np.where(nan, (h.view(np.uint16) | np.uint16(0x0200)).view(np.float16), h)
    return h


def from_f16(h: np.ndarray, dt: np.dtype) -> np.ndarray:
    """float16 -> float32/float64, quieting signaling NaNs like the hardware."""
    out = np.asarray(h).astype(dt)
    nan = np.isnan(out)
    if nan.any():
        quiet = np.uint32(0x00400000) if dt == np.float32 else np.uint64(0x0008000000000000)
        bits = out.view(np.uint32 if dt == np.float32 else np.uint64)
        out = np.where(nan, (bits | quiet).view(dt), out)
    return out


_QUIET = {np.dtype(np.float16): (np.uint16, 0x0200), np.dtype(np.float32): (np.uint32, 0x00400000),
          np.dtype(np.float64): (np.uint64, 0x0008000000000000)}


def quiet_nans(a: np.ndarray) -> np.ndarray:
    """``a`` with its signaling NaNs made quiet. IEEE 754-2019 minimumNumber/maximumNumber (tl.minimum and
    tl.maximum as compiled) return the other operand for a signaling NaN as for a quiet one; numpy's fmin/fmax
    do so in their SIMD loops but give NaN in their scalar loops (accumulate, array tails), so the oracle's
    answer depended on an element's position. With no signaling NaN left, fmin/fmax are IEEE's everywhere."""
    q = _QUIET.get(a.dtype)
    if q is None:
        return a
    nan = np.isnan(a)
    if not nan.any():
        return a
    bits, quiet = q
    return np.where(nan, (a.view(bits) | bits(quiet)).view(a.dtype), a)


def bf16_to_bits(x: np.ndarray) -> np.ndarray:
    """float32 container (already a bfloat16 value) -> uint16 encoding."""
    return (np.ascontiguousarray(x, np.float32).view(_U32) >> 16).astype(np.uint16)


def bits_to_bf16(b: np.ndarray) -> np.ndarray:
    return (np.asarray(b).astype(np.uint16).astype(_U32) << 16).view(np.float32)


# ----------------------------------------------------------------------------------------------------
# Round toward zero (fp_downcast_rounding="rtz"); the same recipes as the CPU backend's mathlib
# ----------------------------------------------------------------------------------------------------

def f64_to_f32_rtz(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, np.float64)
    y = x.astype(np.float32)
    up = np.abs(y.astype(np.float64)) > np.abs(x)
    yb = y.view(_U32)
    return np.where(up, yb - _U32(1), yb).view(np.float32)


def f32_to_f16_rtz(x: np.ndarray) -> np.ndarray:
    xb = np.ascontiguousarray(x, np.float32).view(_U32)
    sign = (xb >> 16) & 0x8000
    a = xb & 0x7FFFFFFF
    normal = (a - _U32((127 - 15) << 23)) >> 13
    is_den = a < _U32((127 - 14) << 23)
    ad = np.where(is_den, a.view(np.float32), np.float32(0.0))
    h = np.where(is_den, (ad * np.float32(2.0 ** 24)).astype(np.int32).astype(_U32), normal)
    h = np.where(h > 0x7BFF, _U32(0x7BFF), h)
    h = np.where(a == _INF32, _U32(0x7C00), h)
    h = np.where(a > _INF32, _U32(0x7E00), h)
    return (h | sign).astype(np.uint16).view(np.float16)


def f32_to_bf16_rtz(x: np.ndarray) -> np.ndarray:
    xb = np.ascontiguousarray(x, np.float32).view(_U32)
    hi = xb & _U32(0xFFFF0000)
    nan = (xb & 0x7FFFFFFF) > _INF32
    return np.where(nan, hi | 0x00400000, hi).view(np.float32)


# ----------------------------------------------------------------------------------------------------
# float8
# ----------------------------------------------------------------------------------------------------

# the formats (bits, bias, NaN/inf rules) are tritium.llvmir.fp8's table, shared with the code generators
FP8 = FORMATS


def fp8_to_f32(bits: np.ndarray, name: str) -> np.ndarray:
    f = FP8[name]
    u = np.asarray(bits).astype(np.uint8).astype(_U32)
    sign = (u & 0x80) << 24
    mag = u & 0x7F
    exp = mag >> f.mbits
    mmask = (1 << f.mbits) - 1
    normal = (mag << (23 - f.mbits)) + _U32((127 - f.bias) << 23)
    den = (mag & mmask).astype(np.float32) * np.float32(2.0 ** (1 - f.bias - f.mbits))
    out = np.where(exp == 0, den.view(_U32), normal)
    if f.kind == "fn":
        out = np.where(mag == 0x7F, _U32(_QNAN32), out)
    elif f.kind == "ieee":
        top = exp == (1 << f.ebits) - 1
        out = np.where(top, np.where((mag & mmask) == 0, _U32(_INF32), _U32(_QNAN32)), out)
    elif f.kind == "fnuz":
        out = np.where(u == 0x80, _U32(_QNAN32), out)
    return (out | sign).view(np.float32)


def f32_to_fp8(x: np.ndarray, name: str, rtz: bool = False, satfinite: bool = True) -> np.ndarray:
    """float32 -> float8 encoding (uint8), round to nearest even unless ``rtz``. A conversion saturates past the
    largest finite value, infinities included (``satfinite``, as Triton's and the CPU backend's); a constant
    (``satfinite=False``) keeps an infinity where the format has one."""
    f = FP8[name]
    xb = np.ascontiguousarray(x, np.float32).view(_U32)
    sign = (xb >> 24) & 0x80
    a = xb & 0x7FFFFFFF
    shift = 23 - f.mbits
    t = a - _U32((127 - f.bias) << 23)
    if not rtz:
        odd = (t >> shift) & 1
        t = t + _U32((1 << (shift - 1)) - 1) + odd
    normal = t >> shift
    is_den = a < _U32((127 + 1 - f.bias) << 23)
    ad = np.where(is_den, a.view(np.float32), np.float32(0.0))
    scaled = ad * np.float32(2.0 ** (f.bias - 1 + f.mbits))
    if not rtz:
        scaled = np.rint(scaled)
    code = np.where(is_den, scaled.astype(np.int32).astype(_U32), normal)
    is_nan = a > _INF32
    is_inf = a == _INF32
    nan_code = {"fn": 0x7F, "ieee": 0x7F, "fnuz": 0x80, "finite": f.max_code}[f.kind]
    inf_code = {"fn": f.max_code, "ieee": 0x7F & ~((1 << f.mbits) - 1), "fnuz": 0x80, "finite": f.max_code}[f.kind]
    over = f.max_code if rtz or (satfinite and f.kind == "ieee") else inf_code
    code = np.where(code > f.max_code, _U32(over), code)
    if rtz:
        code = np.where(is_inf, _U32(inf_code), code)
    code = np.where(is_nan, _U32(nan_code), code)
    if f.kind == "fnuz":
        sign = np.where((code == 0) | (code == 0x80), _U32(0), sign)
    return ((code | sign) & 0xFF).astype(np.uint8)


# ----------------------------------------------------------------------------------------------------
# fused multiply-add with one rounding
# ----------------------------------------------------------------------------------------------------

def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    c = a * 134217729.0  # 2**27 + 1 (Veltkamp)
    hi = c - (c - a)
    return hi, a - hi


def _two_prod(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def fma(x: np.ndarray, y: np.ndarray, z: np.ndarray, out: str) -> np.ndarray:
    """x * y + z rounded once to ``out`` ("fp16", "bf16", "fp32" or "fp64"); inputs hold values of that type."""
    x64, y64, z64 = (np.asarray(v, np.float64) for v in (x, y, z))
    if out == "fp64":
        p, pe = _two_prod(x64, y64)
        s, se = _two_sum(p, z64)
        r = s + (pe + se)
        # inf/nan inputs: the error terms are nan; the plain expression has the IEEE answer
        return np.where(np.isfinite(r), r, x64 * y64 + z64)
    # the product of two values of <= 24 bits is exact in float64; round the sum to odd, then to the target
    s, e = _two_sum(x64 * y64, z64)
    even = (s.view(np.uint64) & 1) == 0
    fix = (e != 0) & even & np.isfinite(s)
    if fix.any():
        s = np.where(fix, np.nextafter(s, np.where(e > 0, np.inf, -np.inf)), s)
    if out == "bf16":
        return round_bf16(s)
    return s.astype(np.float16 if out == "fp16" else np.float32)
