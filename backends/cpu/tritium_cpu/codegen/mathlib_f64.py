"""float64 functions for :mod:`.mathlib` (and, through :func:`text_definition`, for :mod:`.mathlib_extra`).

Most call libm. ``tanh`` and ``cosh`` are written out instead: glibc's were up to 2.0 and 1.3 ulp off, over
CUDA's documented 1 ulp. Both are branch-free (they vectorize, unlike a libm call) and carry e^a as a
double-double (:func:`_exp_dd`: ~2^-58 relative), so that only the last step rounds (worst of 200k random
arguments at every ISA level: tanh 0.54, cosh 0.53 ulp).
"""
from __future__ import annotations

import math

from .mathlib_ir import _FUNCS, _Builder, _define, _Fn, _hex, _render, _V

# ----------------------------------------------------------------------------------------------------
# float64: libm. LLVM intrinsics where they exist (LLVM lowers them to the libm call and the text needs no
# declaration); erf has none.
# ----------------------------------------------------------------------------------------------------

def _libm64(name: str, intrinsic: str = "", symbol: str = "") -> None:
    # written exactly as mathlib_extra writes its declarations, so that a module combining both libraries
    # can drop duplicate lines (LLVM rejects a function declared twice)
    externs = (f"declare double @{symbol}(double) nounwind",) if symbol else ()

    @_define(f"tritium_{name}", "double", ("double",), externs=externs)
    def body(b: _Builder, x: _V) -> _V:
        if intrinsic:
            return b.intrinsic(intrinsic, x)
        return b.call_extern(symbol, "double", x)


for _n in ("exp", "exp2", "log", "log2", "sin", "cos"):
    _libm64(_n, intrinsic=_n)
_libm64("erf", symbol="erf")

# The C functions the library's code may end up calling, for whoever loads the object
C_SYMBOLS = frozenset({"exp", "exp2", "log", "log2", "sin", "cos", "erf"})



# ----------------------------------------------------------------------------------------------------
# e^x as 2^k (1 + hi + lo)
# ----------------------------------------------------------------------------------------------------

_INV_LN2 = float.fromhex("0x1.71547652b82fep+0")
# ln2 = _LN2_HI + _LN2_LO to ~107 bits
_LN2_HI, _LN2_LO = _hex("0x1.62e42fefa39efp-1", "0x1.abc9e3b39803fp-56")
# e^r - 1 - r - r^2/2 = r^3 (1/3! + r/4! + ...): Taylor to 1/15!, whose remainder is below 2^-56 of the sum for
# |r| <= 0.35
_EXPM1_TAIL = tuple(1.0 / math.factorial(n) for n in range(3, 16))


def _two_sum(b: _Builder, x: _V, y: _V) -> tuple[_V, _V]:
    """(s, err) with s = x + y rounded and s + err = x + y exactly, whatever the magnitudes (Knuth)."""
    s = b.fadd(x, y)
    xp = b.fsub(s, y)
    yp = b.fsub(s, xp)
    return s, b.fadd(b.fsub(x, xp), b.fsub(y, yp))


def _fast_two_sum(b: _Builder, x: _V, y: _V) -> tuple[_V, _V]:
    """TwoSum for |x| >= |y| (or x = 0) in three operations (Dekker)."""
    s = b.fadd(x, y)
    return s, b.fsub(y, b.fsub(s, x))


def _pow2(b: _Builder, k: _V) -> _V:
    """2^k for an i64 k in [-1022, 1023]."""
    return b.bitcast(b.shl(b.add(k, 1023), 52), "double")


def _exp_dd(b: _Builder, x: _V) -> tuple[_V, _V, _V]:
    """(k, hi, lo): e^x = 2^k (1 + hi + lo), k an i64, |hi| <= 0.42, the sum accurate to ~2^-58, for |x| <= 745.
    x = k ln2 + r; the first step of the reduction is exact (an fma; |r| < 1/2 and r is a multiple of 2^-54 of
    x's), the second keeps its rounding errors (TwoSum, fma), so r = rh + rl to ~2^-100. e^r - 1 is r + r^2/2
    (exact through an fma) plus a small tail whose rounding costs ~2^-59."""
    kf = b.rint(b.fmul(x, _INV_LN2))
    nk = b.fneg(kf)
    a = b.fma(nk, _LN2_HI, x)
    p = b.fmul(kf, _LN2_LO)
    p_err = b.fma(kf, _LN2_LO, b.fneg(p))
    rh, r_err = _two_sum(b, a, b.fneg(p))
    rl = b.fsub(r_err, p_err)
    q = b.fmul(rh, rh)
    q_err = b.fma(rh, rh, b.fneg(q))
    tail = b.fmul(b.fmul(q, rh), b.horner(rh, _EXPM1_TAIL))
    hi, err = _fast_two_sum(b, rh, b.fmul(q, 0.5))
    # e^(rh + rl) - e^rh ~ rl (1 + rh)
    lo = b.fadd(err, b.fadd(b.fmul(q_err, 0.5), b.fadd(tail, b.fma(rl, rh, rl))))
    # renormalized (|lo| <= ulp(hi) / 2): the callers' divisions correct a first quotient of the high parts by
    # one remainder step, which is only as good as that quotient (tail alone is up to 2^-7 of hi)
    hi, lo = _fast_two_sum(b, hi, lo)
    return b.fptosi(kf, "i64"), hi, lo


def _tanh64(b: _Builder, x: _V) -> _V:
    """tanh(|a|) = m / (m + 2) with m = e^2a - 1 = 2^k (1 + hi + lo) - 1, numerator and denominator as double-
    doubles; the quotient's first approximation is corrected by its exact remainder, so the result rounds once
    (and tiny arguments come out exact: m = 2a, the quotient a). From 19.5 on, tanh rounds to 1."""
    a = b.fabs(x)
    ac = b.select(b.fcmp("olt", a, 19.5), a, 19.5)       # nan, inf -> 19.5; nan is put back below
    k, hi, lo = _exp_dd(b, b.fadd(ac, ac))
    s = _pow2(b, k)
    shi, slo = b.fmul(s, hi), b.fmul(s, lo)              # exact
    c, c_err = _two_sum(b, s, -1.0)
    n_hi, n_err = _two_sum(b, c, shi)
    n_lo = b.fadd(n_err, b.fadd(c_err, slo))
    d, d_err = _two_sum(b, s, 1.0)
    d_hi, dd_err = _two_sum(b, d, shi)
    d_lo = b.fadd(dd_err, b.fadd(d_err, slo))
    q = b.fdiv(n_hi, d_hi)
    rem = b.fsub(b.fadd(b.fma(b.fneg(q), d_hi, n_hi), n_lo), b.fmul(q, d_lo))
    y = b.fadd(q, b.fdiv(rem, d_hi))
    y = b.copysign(y, x)
    return b.select(b.fcmp("uno", x, x), x, y)


def _cosh64(b: _Builder, x: _V) -> _V:
    """cosh(a) = 2^(k-1) (u + 2^-2k / u) with u = 1 + hi + lo = e^a / 2^k, both terms as double-doubles (no
    cancellation: they are positive); the sum rounds once and the scaling, in two exact factors (2^(k-1) alone
    overflows at k = 1025), rounds only on overflow."""
    a = b.fabs(x)
    ac = b.select(b.fcmp("olt", a, 711.0), a, 711.0)     # cosh(711) is inf already
    k, hi, lo = _exp_dd(b, ac)
    u_hi, u_err = _fast_two_sum(b, b.const("double", 1.0), hi)
    u_lo = b.fadd(u_err, lo)
    v_hi = b.fdiv(1.0, u_hi)
    v_lo = b.fdiv(b.fsub(b.fma(b.fneg(v_hi), u_hi, 1.0), b.fmul(v_hi, u_lo)), u_hi)
    # 2^-2k, 0 where it would not be a normal double (the term is then far below the result's ulp)
    small = b.icmp("sle", k, 511)
    sc = b.select(small, _pow2(b, b.sub(b.const("i64", 0), b.add(k, k))), 0.0)
    w_hi, w_err = _fast_two_sum(b, u_hi, b.fmul(v_hi, sc))
    w = b.fadd(w_hi, b.fadd(w_err, b.fadd(u_lo, b.fmul(v_lo, sc))))
    k1 = b.ashr(b.sub(k, 1), 1)
    k2 = b.sub(b.sub(k, 1), k1)
    y = b.fmul(b.fmul(w, _pow2(b, k1)), _pow2(b, k2))
    return b.select(b.fcmp("uno", x, x), x, y)


_define("tritium_tanh", "double", ("double",))(_tanh64)
_define("tritium_cosh", "double", ("double",))(_cosh64)


def text_definition(name: str, body) -> str:
    """IR text of ``body`` (one of this module's double -> double bodies) defined as ``name``, for a registry
    of IR text such as :mod:`.mathlib_defs`'. The body must call nothing but intrinsics."""
    text, calls = _render(_Fn(name, "double", ("double",), body))
    assert not calls and name not in _FUNCS, (name, calls)
    return text


TANH = _tanh64
COSH = _cosh64
