"""``tl.extra.libdevice`` in the interpreter: the math ops it becomes and its ``tt.extern_elementwise`` symbols
(``<function>_<argument types>``), on numpy arrays.

The definitions follow the compiled CPU backend's: float32 functions without a vectorized numpy equivalent are
computed in float64 and rounded once; directed-rounding arithmetic and conversions are exact (rational
arithmetic decides the direction, element by element: they are rare); the functions numpy and Python's math
module lack come from the C library (Bessel functions, through ctypes) or from the same series and Newton
iterations the backend uses.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import math
from fractions import Fraction
from typing import Any, Callable

import numpy as np

from . import floats, libdevice_f64
from .elementwise import _f2i
from .values import SIGNED, UNSIGNED, as_type, signed, storage, unsigned

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
    half = math.exp(ax / 2) if ax < 1e4 else math.inf
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


# -- float functions computed in float64 (float32 variants round once), by libdevice name -----------------
_F64: dict[str, Callable[..., np.ndarray]] = {
    "tan": np.tan, "sinh": np.sinh, "cosh": libdevice_f64.cosh, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
    "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh, "erfc": _vec(math.erfc), "erf": _vec(math.erf),
    "cbrt": _vec(lambda v: _cbrt(v, False)), "log10": np.log10, "log1p": np.log1p, "expm1": np.expm1, "exp": np.exp, "exp2": np.exp2,
    "log": np.log, "log2": np.log2, "sin": np.sin, "cos": np.cos, "tanh": libdevice_f64.tanh,
    "exp10": _vec(lambda v: _exp10(v)), "fast_exp10f": _vec(lambda v: _exp10(v)),
    "lgamma": _c("lgamma", ctypes.c_double), "tgamma": _c("tgamma", ctypes.c_double),
    "j0": _c("j0", ctypes.c_double), "j1": _c("j1", ctypes.c_double), "y0": _c("y0", ctypes.c_double),
    "y1": _c("y1", ctypes.c_double), "logb": _logb,
    "atan2": np.arctan2, "hypot": np.hypot, "fmod": np.fmod, "remainder": _vec(math.remainder), "pow": np.power,
    "rhypot": lambda a, b: _rnorm((a, b)), "rcbrt": _vec(lambda v: _cbrt(v, True)),
    "norm3d": lambda *v: _norm(v), "rnorm3d": lambda *v: _rnorm(v),
    "norm4d": lambda *v: _norm(v), "rnorm4d": lambda *v: _rnorm(v),
    "sinpi": lambda x: _pi_reduced(x, False), "cospi": lambda x: _pi_reduced(x, True),
    "normcdf": _vec(_normcdf),
    "erfinv": _vec(_erfinv), "erfcinv": _vec(_erfcinv),
    "normcdfinv": lambda p: -1.4142135623730951 * _vec(_erfcinv)(2.0 * p),
    "erfcx": _vec(_erfcx), "cyl_bessel_i0": _vec(lambda v: _bessel_i(0, v)),
    "cyl_bessel_i1": _vec(lambda v: _bessel_i(1, v)),
}
# ... computed in the argument's own type, as compiled
_NATIVE: dict[str, Callable[..., np.ndarray]] = {
    "rsqrt_rn": lambda x: np.asarray(1, x.dtype) / np.sqrt(x), "rcp_rn": lambda x: np.asarray(1, x.dtype) / x,
    "rcp64h": lambda x: np.asarray(1, x.dtype) / x, "nextafter": np.nextafter,
    "fdim": lambda a, b: np.where((a > b) | np.isnan(a) | np.isnan(b), a - b, np.zeros((), a.dtype)),
    "saturatef": lambda x: np.where(x > 0, np.where(x < 1, x, np.asarray(1, x.dtype)), np.zeros((), x.dtype)),
}


# -- directed rounding -------------------------------------------------------------------------------------

def _exact(v: Any) -> Fraction:
    return Fraction(float(v))


def _adjust(r: Any, err: int, dt: np.dtype, mode: str) -> Any:
    """The round-to-nearest result ``r``, whose error (exact - r) has sign ``err``, rounded toward zero ("rz"),
    down ("rd") or up ("ru") instead."""
    if err < 0 and (mode == "rd" or (mode == "rz" and r > 0)):
        return np.nextafter(r, dt.type(-np.inf))
    if err > 0 and (mode == "ru" or (mode == "rz" and r < 0)):
        return np.nextafter(r, dt.type(np.inf))
    return r


def _sign(v: Fraction) -> int:
    return (v > 0) - (v < 0)


def _directed_op(name: str, mode: str, args: list[np.ndarray], dt: np.dtype) -> np.ndarray:
    def one(*xs: Any) -> Any:
        r = dt.type(_RN[name](*[dt.type(x) for x in xs]))
        if not all(np.isfinite(x) for x in xs) or np.isnan(r):
            return r
        if np.isinf(r) and name in ("div", "rcp") and xs[-1] == 0:
            return r         # an exact infinity (division by zero)
        if np.isinf(r):      # overflow of finite operands: directed modes may stop at the largest finite value
            keep = (mode == "ru" and r > 0) or (mode == "rd" and r < 0)
            return r if keep else dt.type(math.copysign(float(np.finfo(dt).max), float(r)))
        fx = [_exact(x) for x in xs]
        if name == "sqrt":
            err = _sign(fx[0] - _exact(r) ** 2)   # sqrt(x) - r has the sign of x - r^2
        else:
            exact = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
                     "div": lambda a, b: a / b, "rcp": lambda b: 1 / b, "fma": lambda a, b, c: a * b + c}[name](*fx)
            err = _sign(exact - _exact(r))
        return _adjust(r, err, dt, mode)
    shape = np.broadcast_shapes(*[a.shape for a in args])
    flat = [np.broadcast_to(np.asarray(a, dt), shape).reshape(-1) for a in args]
    with np.errstate(all="ignore"):
        out = np.array([one(*xs) for xs in zip(*flat)], dt) if flat[0].size else np.zeros(0, dt)
    return out.reshape(shape)


_RN: dict[str, Callable[..., Any]] = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b,
    "rcp": lambda b: b.dtype.type(1) / b, "sqrt": np.sqrt,
    "fma": lambda a, b, c: floats.fma(np.array([a]), np.array([b]), np.array([c]),
                                      "fp64" if np.asarray(a).dtype == F64 else "fp32")[0],
}


# -- conversions -------------------------------------------------------------------------------------------

_ROUND = {"rn": np.rint, "rz": np.trunc, "rd": np.floor, "ru": np.ceil}


def _to_int(x: np.ndarray, mode: str, dt: np.dtype) -> np.ndarray:
    return _f2i(_ROUND[mode](x), dt)


def _int_to_float(i: np.ndarray, mode: str, dt: np.dtype) -> np.ndarray:
    f = i.astype(dt)
    if mode == "rn":
        return f
    # compare the exact integer with the converted value, converted back (saturating)
    back = _f2i(f, np.dtype(np.int64) if i.dtype.kind == "i" else np.dtype(np.uint64))
    wide = i.astype(np.int64) if i.dtype.kind == "i" else i.astype(np.uint64)
    below, above = wide < back, wide > back
    down = np.nextafter(f, dt.type(-np.inf))
    up = np.nextafter(f, dt.type(np.inf))
    if mode == "rd":
        return np.where(below, down, f)
    if mode == "ru":
        return np.where(above, up, f)
    return np.where(below & (f > 0), down, np.where(above & (f < 0), up, f))


def _double_to_float(x: np.ndarray, mode: str) -> np.ndarray:
    f = x.astype(np.float32)
    if mode == "rn":
        return f
    back = f.astype(np.float64)      # exact: the comparison with x is too
    down = np.nextafter(f, np.float32(-np.inf))
    up = np.nextafter(f, np.float32(np.inf))
    lo, hi = x < back, x > back
    if mode == "rd":
        return np.where(lo, down, f)
    if mode == "ru":
        return np.where(hi, up, f)
    return np.where(lo & (f > 0), down, np.where(hi & (f < 0), up, f))


# -- integer functions -------------------------------------------------------------------------------------

def _ffs(a: np.ndarray) -> np.ndarray:
    u = unsigned(a).astype(np.uint64)
    low = u & (~u + np.uint64(1))                          # the lowest set bit
    pos = np.where(u == 0, 0, np.floor(np.log2(np.maximum(low, 1).astype(np.float64))).astype(np.int64) + 1)
    return pos.astype(np.int32)


def _brev(a: np.ndarray) -> np.ndarray:
    bits = a.dtype.itemsize * 8
    u = unsigned(a).astype(np.uint64)
    out = np.zeros(u.shape, np.uint64)
    for i in range(bits):
        out |= ((u >> np.uint64(i)) & np.uint64(1)) << np.uint64(bits - 1 - i)
    return as_type(out.astype(UNSIGNED[a.dtype.itemsize]), a.dtype)


def _mulhi(a: np.ndarray, b: np.ndarray, signed_op: bool) -> np.ndarray:
    if a.dtype.itemsize == 4:
        x, y = (signed(a).astype(np.int64), signed(b).astype(np.int64)) if signed_op else \
            (unsigned(a).astype(np.int64), unsigned(b).astype(np.int64))
        return as_type((x * y >> 32).astype(np.int64).astype(np.uint64).astype(np.uint32), a.dtype)
    fn = (lambda x, y: (int(x) * int(y)) >> 64)
    xs, ys = (signed(a), signed(b)) if signed_op else (unsigned(a), unsigned(b))
    out = [fn(x, y) & (2**64 - 1) for x, y in zip(xs.reshape(-1).tolist(), ys.reshape(-1).tolist())]
    return as_type(np.array(out, np.uint64).reshape(a.shape), a.dtype)


def _mul24(a: np.ndarray, b: np.ndarray, signed_op: bool) -> np.ndarray:
    def low24(v: np.ndarray) -> np.ndarray:
        u = unsigned(v).astype(np.int64) & 0xFFFFFF
        return np.where(u >= 2**23, u - 2**24, u) if signed_op else u
    return as_type((low24(a) * low24(b)).astype(np.uint64).astype(np.uint32), a.dtype)


def _hadd(a: np.ndarray, b: np.ndarray, signed_op: bool, plus: int) -> np.ndarray:
    x, y = (signed(a), signed(b)) if signed_op else (unsigned(a), unsigned(b))
    return as_type(((x.astype(np.int64) + y.astype(np.int64) + plus) >> 1).astype(x.dtype), a.dtype)


def _sad(a: np.ndarray, b: np.ndarray, c: np.ndarray, signed_op: bool) -> np.ndarray:
    x, y = (signed(a), signed(b)) if signed_op else (unsigned(a), unsigned(b))
    d = np.abs(x.astype(np.int64) - y.astype(np.int64)) + unsigned(c).astype(np.int64)
    return as_type((d & 0xFFFFFFFF).astype(np.uint32), a.dtype)


def _byte_perm(x: np.ndarray, y: np.ndarray, sel: np.ndarray) -> np.ndarray:
    both = (unsigned(y).astype(np.uint64) << np.uint64(32)) | unsigned(x).astype(np.uint64)
    sl = unsigned(sel).astype(np.uint64)
    out = np.zeros(np.broadcast_shapes(x.shape, y.shape, sel.shape), np.uint64)
    for i in range(4):
        n = (sl >> np.uint64(4 * i)) & np.uint64(7)
        out |= ((both >> (n * np.uint64(8))) & np.uint64(255)) << np.uint64(8 * i)
    return as_type(out.astype(np.uint32), x.dtype)


# -- dispatch ----------------------------------------------------------------------------------------------

def extern(symbol: str, args: list[np.ndarray], arg_types: list[Any], ret: Any) -> np.ndarray:
    """The result (in ``ret``'s storage dtype) of libdevice variant ``symbol`` on ``args``."""
    codes = symbol.split("_")
    n = len(args)
    name = "_".join(codes[:-n])
    kinds = codes[-n:]
    out_dt = storage(ret)
    a0 = args[0]
    signed_op = kinds[0] in ("i32", "i64")
    if name in _F64:
        wide = [x.astype(np.float64) if x.dtype.kind == "f" else x for x in args]
        return np.asarray(_F64[name](*wide)).astype(out_dt)
    if name in _NATIVE:
        return np.asarray(_NATIVE[name](*args)).astype(out_dt)
    if name in ("jn", "yn"):
        fn = _c(name, ctypes.c_int, ctypes.c_double)
        return fn(signed(args[0]).astype(np.int64), args[1].astype(np.float64)).astype(out_dt)
    if name in ("ldexp", "scalbn"):
        return np.ldexp(a0.astype(np.float64), signed(args[1]).astype(np.int64)).astype(out_dt)
    head, _, mode = name.rpartition("_")
    if mode in ("rz", "rd", "ru") and head in ("add", "sub", "mul", "div", "rcp", "sqrt", "fma"):
        return _directed_op(head, mode, list(args), out_dt)
    if mode in ("rn", "rz", "rd", "ru") and "2" in head:
        src, dst = head.split("2")
        if src in ("float", "double"):
            if dst == "float":
                return _double_to_float(a0.astype(np.float64), mode)
            target = {"int": SIGNED[4], "uint": UNSIGNED[4], "ll": SIGNED[8], "ull": UNSIGNED[8]}[dst]
            return as_type(_to_int(a0.astype(np.float64), mode, target), out_dt)
        value = signed(a0) if src in ("int", "ll") else unsigned(a0)
        return _int_to_float(value, mode, out_dt)
    if name in ("float_as_int", "float_as_uint", "int_as_float", "uint_as_float", "double_as_longlong",
                "longlong_as_double"):
        return a0.view(out_dt) if a0.dtype.itemsize == out_dt.itemsize else a0.astype(out_dt)
    if name == "double2hiint":
        return (a0.astype(np.float64).view(np.uint64) >> np.uint64(32)).astype(np.uint32).view(np.int32)
    if name == "double2loint":
        return a0.astype(np.float64).view(np.uint64).astype(np.uint32).view(np.int32)
    if name == "hiloint2double":
        bits = (unsigned(args[0]).astype(np.uint64) << np.uint64(32)) | unsigned(args[1]).astype(np.uint64)
        return bits.view(np.float64)
    if name in ("llrint", "llround"):
        rounded = np.rint(a0) if name == "llrint" else _round_away(a0)
        return _f2i(rounded, SIGNED[8])
    if name == "signbit":
        return np.signbit(a0).astype(np.int32)
    if name == "ilogb":
        return _ilogb(a0.astype(np.float64))
    if name == "ffs":
        return _ffs(a0)
    if name in ("clz", "popc"):
        bits = a0.dtype.itemsize * 8
        u = unsigned(a0).astype(np.uint64)
        if name == "popc":
            return np.array([bin(int(v)).count("1") for v in u.reshape(-1)], np.int32).reshape(u.shape)
        return np.array([bits - int(v).bit_length() for v in u.reshape(-1)], np.int32).reshape(u.shape)
    if name == "brev":
        return _brev(a0)
    if name == "mulhi":
        return _mulhi(args[0], args[1], signed_op)
    if name == "mul24":
        return _mul24(args[0], args[1], signed_op)
    if name in ("hadd", "rhadd"):
        return _hadd(args[0], args[1], signed_op, 1 if name == "rhadd" else 0)
    if name == "sad":
        return _sad(args[0], args[1], args[2], signed_op)
    if name == "byte_perm":
        return _byte_perm(args[0], args[1], args[2])
    raise NotImplementedError(f"the interpreter has no implementation of libdevice's {symbol}; it is needed by "
                              "this kernel")
