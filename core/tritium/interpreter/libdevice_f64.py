"""float64 ``tanh``, ``cosh`` and ``rsqrt`` in the interpreter, within the 1 ulp CUDA documents (and the CPU
backend meets: ``tritium_cpu.codegen.mathlib_f64``, ``tritium.llvmir.scalar``).

numpy's float64 tanh is up to 1.14 ulp off, glibc's cosh 1.33 near overflow, and 1 / sqrt(x) rounds twice (1.33
ulp). Where long double is x87 extended (64-bit significand, as on x86-64 Linux) or wider, each is computed there
and rounded once: <= 0.5 + 2^-10 ulp, vectorized, and no overflow on the way (cosh(710.47) is finite in extended
range). Where long double is just double (MSVC, Apple silicon), the same double-double algorithms as the CPU
backend's run in numpy instead, with Dekker's exact products standing in for fma.
"""
from __future__ import annotations

import math

import numpy as np

_F64 = np.dtype(np.float64)
_WIDE = np.finfo(np.longdouble).nmant >= 63


def _via_long_double(fn, fallback):
    def run(x: np.ndarray) -> np.ndarray:
        if x.dtype != _F64:
            return fn(x)
        with np.errstate(all="ignore"):
            if _WIDE:
                return fn(x.astype(np.longdouble)).astype(np.float64)
            return fallback(x)
    return run


# -- double-double helpers (numpy has no fma) ----------------------------------------------------------------

_SPLIT = 134217729.0      # 2^27 + 1: Veltkamp's splitting constant


def _split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    t = _SPLIT * a
    hi = t - (t - a)
    return hi, a - hi


def _two_prod(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(p, err) with p = a * b rounded and p + err = a * b exactly (Dekker; the operands here are far from
    overflow)."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s = a + b
    ap = s - b
    return s, (a - ap) + (b - (s - ap))


def _fast_two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s = a + b
    return s, b - (s - a)


_INV_LN2 = float.fromhex("0x1.71547652b82fep+0")
_LN2_HI, _LN2_LO = float.fromhex("0x1.62e42fefa39efp-1"), float.fromhex("0x1.abc9e3b39803fp-56")
_EXPM1_TAIL = [1.0 / math.factorial(n) for n in range(3, 16)]


def _exp_dd(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(k, hi, lo) with e^x = 2^k (1 + hi + lo) to ~2^-58, as the CPU backend's mathlib_f64._exp_dd."""
    k = np.rint(x * _INV_LN2)
    p1, p1_err = _two_prod(k, np.full_like(x, _LN2_HI))
    a = (x - p1) - p1_err                     # exact, as the backend's fma
    rh, r_err = _two_sum(a, -k * _LN2_LO)
    q, q_err = _two_prod(rh, rh)
    poly = np.full_like(x, _EXPM1_TAIL[-1])
    for c in reversed(_EXPM1_TAIL[:-1]):
        poly = poly * rh + c
    hi, err = _fast_two_sum(rh, q * 0.5)
    lo = err + (q_err * 0.5 + (q * rh * poly + (r_err + r_err * rh)))
    hi, lo = _fast_two_sum(hi, lo)
    return k, hi, lo


def _div_dd(n_hi, n_lo, d_hi, d_lo):
    q = n_hi / d_hi
    p, p_err = _two_prod(q, d_hi)
    return q + ((((n_hi - p) - p_err) + n_lo) - q * d_lo) / d_hi


def _tanh_dd(x: np.ndarray) -> np.ndarray:
    a = np.minimum(np.abs(x), 19.5)
    k, hi, lo = _exp_dd(a + a)
    s = np.ldexp(1.0, k.astype(np.int64))
    c, c_err = _two_sum(s, -1.0)
    n_hi, n_err = _two_sum(c, s * hi)
    d, d_err = _two_sum(s, 1.0)
    d_hi, dd_err = _two_sum(d, s * hi)
    y = _div_dd(n_hi, n_err + (c_err + s * lo), d_hi, dd_err + (d_err + s * lo))
    return np.where(np.isnan(x), x, np.copysign(y, x))


def _cosh_dd(x: np.ndarray) -> np.ndarray:
    a = np.minimum(np.abs(x), 711.0)
    k, hi, lo = _exp_dd(a)
    u_hi, u_err = _fast_two_sum(np.ones_like(x), hi)
    u_lo = u_err + lo
    v_hi = 1.0 / u_hi
    p, p_err = _two_prod(v_hi, u_hi)
    v_lo = (((1.0 - p) - p_err) - v_hi * u_lo) / u_hi
    ki = k.astype(np.int64)
    sc = np.ldexp(1.0, -2 * ki)
    w_hi, w_err = _fast_two_sum(u_hi, v_hi * sc)
    y = np.ldexp(w_hi + (w_err + (u_lo + v_lo * sc)), ki - 1)
    return np.where(np.isnan(x), x, y)


def _recip_sqrt(x: np.ndarray) -> np.ndarray:
    return np.asarray(1, x.dtype) / np.sqrt(x)


def _rsqrt_dd(x: np.ndarray) -> np.ndarray:
    # one Newton step on the exact residual 1 - x y^2, as the CPU backend (x y first: nothing overflows)
    y = _recip_sqrt(x)
    ok = (x > 0) & (x < np.inf)
    xs = np.where(ok, x, 1.0)
    # Dekker's products need |x| < 2^996 and no subnormal parts: scale by an even power of two outside 2^+-900
    sc = np.where(xs > 2.0 ** 900, 2.0 ** -200, np.where(xs < 2.0 ** -900, 2.0 ** 200, 1.0))
    xs = xs * sc
    ys = _recip_sqrt(xs)
    t, t_err = _two_prod(xs, ys)
    u, u_err = _two_prod(t, ys)
    e = ((1.0 - u) - u_err) - t_err * ys
    r = ys + 0.5 * ys * e
    return np.where(ok, r * np.sqrt(sc), y)


tanh = _via_long_double(np.tanh, _tanh_dd)
cosh = _via_long_double(np.cosh, _cosh_dd)
#: 1 / sqrt(x); float32 as compiled (two roundings, within rsqrtf's 2 ulp)
rsqrt = _via_long_double(_recip_sqrt, _rsqrt_dd)
