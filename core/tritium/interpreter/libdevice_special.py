"""The libdevice functions numpy and Python's math module lack or get wrong, for the interpreter's
:mod:`.libdevice`: inverse error functions (Newton steps), ``normcdf``/``erfcx``/``exp10`` with their arguments'
rounding carried, Bessel I by series and asymptotic expansion, ``cbrt``/``rcbrt`` and reciprocal norms polished
by an exact Newton step, scaled norms, ``sinpi``/``cospi`` by exact reduction, ``ilogb``/``logb``; C library
functions through ctypes. Each follows the CPU backend's ``tritium_cpu.codegen.libdevice_special`` (the
interpreter judges that backend, so it must be at least as accurate)."""
from __future__ import annotations

import ctypes
import ctypes.util
import math
from fractions import Fraction
from typing import Any, Callable

import numpy as np

F64 = np.dtype(np.float64)
_SQRT1_2 = 0.7071067811865476
_SQRT1_2_LO = -4.833646656726457e-17     # 1/sqrt(2) - _SQRT1_2
_LN10 = 2.302585092994046
_LN10_LO = -2.1707562233822494e-16       # ln(10) - _LN10


def _vec(fn: Callable[..., float], domain: float = math.nan) -> Callable[..., np.ndarray]:
    """``fn`` of Python floats over arrays, with the C library's answers where Python's math raises: an
    overflow is infinite, a domain error ``domain`` (NaN unless said otherwise)."""
    def safe(*a: float) -> float:
        try:
            return fn(*a)
        except OverflowError:
            return math.inf
        except (ValueError, ZeroDivisionError):
            return domain
    v = np.vectorize(safe, otypes=[np.float64])
    return lambda *xs: v(*xs) if xs[0].size else np.zeros(xs[0].shape)


_libm: Any = None


def _c(name: str, *argtypes: Any) -> Callable[..., np.ndarray]:
    def run(*xs: np.ndarray) -> np.ndarray:
        global _libm
        if _libm is None:
            _libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
        f = getattr(_libm, name)
        f.restype, f.argtypes = ctypes.c_double, list(argtypes)
        return _vec(lambda *a: f(*a))(*xs)
    return run


def _newton(x: float, f: Callable[[float], float], df: Callable[[float], float]) -> float:
    for _ in range(100):
        d = df(x)
        if d == 0 or not math.isfinite(x):
            break
        step = f(x) / d
        x -= step
        if abs(step) <= 1e-16 * max(1.0, abs(x)):
            break
    return x


def _erfinv(y: float) -> float:
    if not -1 <= y <= 1:
        return math.nan
    if abs(y) > 0.5:
        # 1 - |y| is exact: Newton on erf near 1 is limited by erf's absolute rounding, which the root's
        # slope exp(x^2) magnifies (erfinv(1 - 2^-53) came out 5.88 instead of 5.86)
        return math.copysign(_erfcinv(1 - abs(y)), y)
    return _erfinv_newton(y)


def _erfinv_newton(y: float) -> float:
    # Giles' single-precision approximation as the start, then Newton on erf in float64
    w = -math.log((1 - y) * (1 + y))
    if w < 5:
        w -= 2.5
        p = 2.81022636e-08
        for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                  -0.00417768164, 0.246640727, 1.50140941):
            p = c + p * w
    else:
        w = math.sqrt(w) - 3
        p = -0.000200214257
        for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047,
                  1.00167406, 2.83297682):
            p = c + p * w
    return _newton(p * y, lambda x: math.erf(x) - y, lambda x: 2 / math.sqrt(math.pi) * math.exp(-x * x))


def _erfcinv(y: float) -> float:
    if not 0 <= y <= 2:
        return math.nan
    if y in (0, 2):
        return math.inf if y == 0 else -math.inf
    # erfcinv(y) = -erfcinv(2 - y), and 2 - y is exact above 1: solving erfc(x) = y near 2 directly would
    # lose the digits erfc cannot show there (it is known to 2e-16 absolute, the root's slope is exp(x^2))
    yy, sign = (y, 1.0) if y <= 1 else (2 - y, -1.0)
    if yy < 1e-300:
        # Newton on log(erfc(x)) = log(erfcx(x)) - x^2 (the CPU backend's tail iteration): erfc's slope exp(-x^2)
        # underflows here, which stopped Newton on erfc itself early (erfcinv(5e-324) was 27.2099, not 27.2133)
        x, ly = math.sqrt(-math.log(yy)), math.log(yy)
        for _ in range(50):
            sq = x * x
            cx = _erfcx(x)
            step = (math.log(cx) - sq - _product_low(x, x, sq) - ly) * cx * (math.sqrt(math.pi) / 2)
            x += step
            if abs(step) <= 1e-17 * x:
                break
        return sign * x
    start = _erfinv_newton(1 - yy) if yy > 1e-12 else math.sqrt(-math.log(yy))
    if not math.isfinite(start):
        start = math.sqrt(-math.log(yy))
    return sign * _newton(start, lambda x: math.erfc(x) - yy, lambda x: -2 / math.sqrt(math.pi) * math.exp(-x * x))


def _product_low(a: float, b: float, rounded: float) -> float:
    """The exact rounding error of the float product ``rounded`` of ``a`` and ``b``: a * b - rounded."""
    return float(Fraction(a) * Fraction(b) - Fraction(rounded))


def _normcdf(x: float) -> float:
    # erfc(m + dm) / 2 with m + dm = -x / sqrt(2) to twice double's precision: in the lower tail erfc
    # magnifies m's rounding about 2 m^2 times (1e3 ulp at x = -28); first-order correction where m > 0
    m = -x * _SQRT1_2
    if not 0 < m < 40:     # past 40 erfc(m) is 0 and the correction may overflow
        return 0.5 * math.erfc(m)
    dm = _product_low(-x, _SQRT1_2, m) - x * _SQRT1_2_LO
    return 0.5 * math.erfc(m) * (1 - dm * (2 / math.sqrt(math.pi)) / _erfcx(m))


def _erfcx(x: float) -> float:
    if x < 25:
        # exp magnifies the rounding of x^2 by x^2 (hundreds of ulp near 25): carry its exact low part
        sq = x * x
        low = _product_low(x, x, sq)
        return math.exp(sq) * (1 + low) * math.erfc(x)
    # asymptotic: 1 / (x sqrt(pi)) * (1 - 1/(2x^2) + 3/(4x^4) - 15/(8x^6) ...)
    t, total, term = 1 / (2 * x * x), 1.0, 1.0
    for k in range(1, 12):
        term *= -(2 * k - 1) * t
        total += term
    return total / (x * math.sqrt(math.pi))


def _bessel_i(k: int, x: float) -> float:
    if abs(x) <= 20:
        total, term, j = 0.0, (x / 2) ** k / math.factorial(k), 0
        while True:
            total += term
            j += 1
            term *= (x / 2) ** 2 / (j * (j + k))
            if abs(term) <= 1e-18 * abs(total) or j > 500:
                return total if total else x * k    # i1(-0) is -0 (odd)
    if math.isinf(x):
        return math.inf if k == 0 else x
    ax, mu = abs(x), 4.0 * k * k
    total, term = 1.0, 1.0
    for j in range(1, 30):
        term *= -(mu - (2 * j - 1) ** 2) / (j * 8 * ax)
        total += term
    # exp(x) overflows from 709.8 while i0/i1 stay finite up to 713.9: exp(x / 2) twice there
    # (math.exp raises past 709.78, and the wrapper's inf would lose i1's sign: i1(-4357.8) was +inf)
    half = math.exp(ax / 2) if ax < 1400 else math.inf
    r = half / math.sqrt(2 * math.pi * ax) * total * half if ax > 700 else \
        math.exp(ax) / math.sqrt(2 * math.pi * ax) * total
    return -r if (k == 1 and x < 0) else r


def _exp10(x: float) -> float:
    # exp(t) (1 + t_lo), t + t_lo = x ln(10) to twice double's precision (libm's exp10 is 1.8 ulp off)
    t = x * _LN10
    e = math.exp(t)
    if not math.isfinite(x) or e == 0 or math.isinf(e):
        return e
    lo = _product_low(x, _LN10, t) + x * _LN10_LO
    return e + e * lo


def _cbrt(x: float, recip: bool) -> float:
    # libm's cbrt polished by one exact Newton step (libm's is up to 2.6 ulp off, its reciprocal 4.4)
    y = math.copysign(abs(x) ** (1 / 3), x) if math.isfinite(x) else x
    if not math.isfinite(x) or x == 0:
        return (1 / y if y else math.copysign(math.inf, y)) if recip else y
    fy = Fraction(y)
    root = fy - (fy ** 3 - Fraction(x)) / (3 * fy * fy)
    return float(1 / root) if recip else float(root)


def _norm(v: tuple) -> np.ndarray:
    # scaled by a power of two (exact) from the largest magnitude: the squares neither overflow (norm3d(1e200,
    # ...) was inf) nor underflow; an infinite argument gives +inf even beside a NaN, as hypot
    a = [np.abs(np.asarray(x, F64)) for x in v]
    m = np.fmax.reduce(a)
    with np.errstate(all="ignore"):
        sc = np.where(m > 2.0 ** 500, 2.0 ** -600, np.where(m < 2.0 ** -500, 2.0 ** 600, 1.0))
        r = np.sqrt(sum((x * sc) ** 2 for x in a)) / sc
    return np.where(np.logical_or.reduce([np.isinf(x) for x in a]), np.inf, r)


def _rnorm1(*v: float) -> float:
    # 1 / sqrt of the exact sum of squares: one exact Newton step from the float estimate (1 / hypot and
    # 1 / sqrt(rounded sum) were up to 1.4 ulp off; CUDA documents 1)
    if any(math.isinf(x) for x in v):
        return 0.0
    if any(math.isnan(x) for x in v):
        return math.nan
    total = sum(Fraction(x) ** 2 for x in v)
    if total == 0:
        return math.inf
    m = max(abs(x) for x in v)
    est = 1 / (math.sqrt(float(total / Fraction(m) ** 2)) * m)    # scaled: the sum itself may overflow
    if est == 0 or math.isinf(est):
        return est
    r = Fraction(est)
    return float(r + r * (1 - total * r * r) / 2)


def _rnorm(v: tuple) -> np.ndarray:
    a = np.broadcast_arrays(*[np.asarray(x, F64) for x in v])
    out = [_rnorm1(*xs) for xs in zip(*[x.reshape(-1).tolist() for x in a])]
    return np.array(out, F64).reshape(a[0].shape)


def _pi_reduced(x: np.ndarray, cos: bool) -> np.ndarray:
    n = np.rint(x)
    r = x - n                                # exact: |r| <= 1/2
    # cos(pi r) = sin(pi (1/2 - |r|)), exact too: cos near r = 1/2 magnified pi r's rounding (3e3 ulp)
    t = np.sin(np.pi * (0.5 - np.abs(r))) if cos else np.sin(np.pi * r)
    t = np.where(np.fmod(n, 2) != 0, -t, t)
    # x - round(x) loses the sign of -0: sinpi(-0) is -0 (odd, as CUDA and C23 say)
    return np.where(np.abs(r) == 0.5, 0.0, t) if cos else np.where(x == 0, x, t)


def _ilogb(x: np.ndarray) -> np.ndarray:
    m, e = np.frexp(np.where(np.isfinite(x) & (x != 0), x, 1.0))
    out = (e - 1).astype(np.int32)
    out = np.where(x == 0, np.int32(-2**31), out)
    out = np.where(np.isinf(x), np.int32(2**31 - 1), out)
    return np.where(np.isnan(x), np.int32(-2**31), out)


def _logb(x: np.ndarray) -> np.ndarray:
    e = _ilogb(x).astype(np.float64)
    e = np.where(x == 0, -np.inf, e)
    e = np.where(np.isinf(x), np.inf, e)
    return np.where(np.isnan(x), np.nan, e)


def _round_away(x: np.ndarray) -> np.ndarray:
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)
