"""float32 exp, exp2, log, log2, erf, tanh and rsqrt for :mod:`.mathlib`: branch-free IR that LLVM's vectorizers
turn into full-width vector code (accuracy table in :mod:`.mathlib`)."""
from __future__ import annotations

from .mathlib_ir import _Builder, _define, _hex, _V

# ----------------------------------------------------------------------------------------------------
# float32 exp and exp2
#
# x = k*ln2 + r with |r| <= ln2/2, exp(x) = 2^k * exp(r), and 2^x = 2^k * exp((x - k) * ln2). The
# polynomials in this file are minimax fits (Remez, relative error) made for it; this one's error is
# 2^-28, far below float32's rounding.
# ----------------------------------------------------------------------------------------------------

_LOG2E = float.fromhex("0x1.715476p+0")
# ln2 = _LN2_HI + _LN2_LO to ~48 bits; with an fma, x - k*_LN2_HI is exact for the k's that occur
_LN2_HI, _LN2_LO = _hex("0x1.62e430p-1", "-0x1.05c610p-29")
# exp(r) = 1 + r + r^2 * P(r) on [-0.347, 0.347]
_EXP_P = _hex("0x1.fffffcp-2", "0x1.555490p-3", "0x1.5558fcp-5", "0x1.123b8ap-7", "0x1.6a2178p-10")
_NAN32 = float("nan")
_ROUND_MAGIC = float.fromhex("0x1.8p23")
_ROUND_MAGIC_BITS = 0x4B400000


def _scale_by_pow2(b: _Builder, p: _V, k: _V) -> _V:
    """p * 2^k for a float k in [-151, 129] (an integer)."""
    return _scale_by_pow2_int(b, p, b.fptosi(k, "i32"))


def _scale_by_pow2_int(b: _Builder, p: _V, ki: _V) -> _V:
    """p * 2^ki for an i32 ki in [-151, 129]: in two factors, because 2^ki itself may be a denormal or
    overflow while the product is representable. p*2^k1 is exact, so the final multiply rounds once, and
    results that are denormal come out correctly rounded."""
    k1 = b.ashr(ki, 1)
    k2 = b.sub(ki, k1)
    s1 = b.bitcast(b.shl(b.add(k1, 127), 23), "float")
    s2 = b.bitcast(b.shl(b.add(k2, 127), 23), "float")
    return b.fmul(b.fmul(p, s1), s2)


def _exp_small(b: _Builder, hi: _V, lo: _V) -> _V:
    """exp(hi + lo) for |hi| <= ln2/2 and |lo| tiny next to it (hi + lo is r split in two floats)."""
    r = b.fadd(hi, lo)
    t = b.fma(b.horner(r, _EXP_P), b.fmul(r, r), lo)      # exp(r) - 1 - hi, small
    # 1 + hi is the big step; Fast2Sum recovers its rounding error exactly, so the result rounds just once
    # more when the small terms are added (~0.55 ulp in all, instead of ~1 ulp for 1 + (hi + t))
    s = b.fadd(hi, 1.0)
    err = b.fadd(b.fsub(1.0, s), hi)
    return b.fadd(s, b.fadd(t, err))


@_define("tritium_expf", "float", ("float",))
def _expf(b: _Builder, x: _V) -> _V:
    # Clamp so that k stays in range of the scaling (which then overflows or underflows by itself). The
    # compares fail for nan, which so passes through unchanged (and each select is a single x86 max/min);
    # every later step carries nan along, so no final nan check is needed (it cost two vector ops).
    xc = b.select(b.fcmp("olt", x, -104.0), -104.0, x)
    xc = b.select(b.fcmp("ogt", xc, 89.0), 89.0, xc)
    # k = rint(x*log2e) by adding 1.5*2^23: the sum's low mantissa bits are then k itself, so the integer
    # comes from a bitcast instead of rint + fptosi (fptosi of nan would be poison; this is never poison)
    j = b.fma(xc, _LOG2E, _ROUND_MAGIC)
    k = b.fsub(j, _ROUND_MAGIC)
    ki = b.sub(b.bitcast(j, "i32"), _ROUND_MAGIC_BITS)
    nk = b.fneg(k)
    hi = b.fma(nk, _LN2_HI, xc)       # exact: the fma does not round, and the difference fits
    lo = b.fmul(nk, _LN2_LO)
    return _scale_by_pow2_int(b, _exp_small(b, hi, lo), ki)


@_define("tritium_exp2f", "float", ("float",))
def _exp2f(b: _Builder, x: _V) -> _V:
    xc = b.select(b.fcmp("olt", x, 129.0), x, 129.0)
    xc = b.select(b.fcmp("ogt", xc, -151.0), xc, -151.0)
    k = b.rint(xc)
    r = b.fsub(xc, k)            # exact
    # 2^r = exp(r*ln2), with r*ln2 carried as hi + lo (the fma yields the product's rounding error)
    hi = b.fmul(r, _LN2_HI)
    lo = b.fma(r, _LN2_LO, b.fma(r, _LN2_HI, b.fneg(hi)))
    y = _scale_by_pow2(b, _exp_small(b, hi, lo), k)
    return b.select(b.fcmp("uno", x, x), x, y)


# ----------------------------------------------------------------------------------------------------
# float32 log and log2
#
# x = 2^e * m with m in [sqrt(1/2), sqrt(2)), f = m - 1 (exact), log(1+f) = f - f^2/2 + f^3 * P(f).
# Adding up e*ln2 + f - f^2/2 + ... naively costs up to half an ulp per addition, so the two big terms
# are carried with their exact rounding errors (Fast2Sum, fma) and only the final sum rounds; that gives
# ~0.6 ulp while staying in float32 (float64 would halve the vector width of the whole loop).
# These error-free transformations rely on LLVM not contracting fmul+fadd into fma behind our back, which
# it does not do for instructions without the `contract` flag.
# ----------------------------------------------------------------------------------------------------

_LOG_P = _hex("0x1.555554p-2", "-0x1.000226p-2", "0x1.99a008p-3", "-0x1.547244p-3", "0x1.22da1ap-3",
              "-0x1.0d8546p-3", "0x1.055b84p-3", "-0x1.38b5a6p-4")
# ln2 with 16 significant bits, so that e * _LN2_HI16 is exact for every exponent, and the rest
_LN2_HI16, _LN2_LO16 = 45426 / 65536, float.fromhex("0x1.7f7d1cp-20")
_LOG2E_HI, _LOG2E_LO = _hex("0x1.715476p+0", "0x1.4ae0c0p-26")
_SQRT_HALF_BITS = 0x3F3504F3


def _log_parts(b: _Builder, x: _V) -> tuple[_V, _V, _V]:
    """(e, s, t) with x = 2^e * m and log(m) = s + t, |t| tiny next to |s|, for a positive finite x."""
    # denormals are scaled into the normal range first so the exponent field tells the whole story
    tiny = b.fcmp("olt", x, float.fromhex("0x1p-126"))
    xs = b.select(tiny, b.fmul(x, float.fromhex("0x1p23")), x)
    # Subtracting sqrt(1/2)'s bits makes the exponent field of the difference the e that puts m in
    # [sqrt(1/2), sqrt(2)) -- one integer subtraction instead of a compare-and-adjust.
    t = b.sub(b.bitcast(xs, "i32"), _SQRT_HALF_BITS)
    e = b.add(b.ashr(t, 23), b.select(tiny, b.const("i32", -23), 0))
    m = b.bitcast(b.add(b.and_(t, 0x7FFFFF), _SQRT_HALF_BITS), "float")
    f = b.fsub(m, 1.0)
    hf = b.fmul(f, 0.5)
    h = b.fmul(hf, f)                                   # f^2/2, rounded,
    h_err = b.fma(hf, f, b.fneg(h))                     # and what the rounding lost
    cubic = b.fmul(b.fmul(f, f), b.fmul(f, b.horner(f, _LOG_P)))
    s = b.fsub(f, h)
    s_err = b.fsub(b.fsub(f, s), h)                     # exact (Fast2Sum: |f| >= |h|)
    return b.sitofp(e, "float"), s, b.fadd(s_err, b.fsub(cubic, h_err))


def _log_specials(b: _Builder, x: _V, y: _V) -> _V:
    y = b.select(b.fcmp("oeq", x, float("inf")), x, y)
    y = b.select(b.fcmp("oeq", x, 0.0), float("-inf"), y)
    return b.select(b.fcmp("ult", x, 0.0), _NAN32, y)   # negative or nan


def _sum_big_first(b: _Builder, big: _V, s: _V, small: _V) -> _V:
    """big + s + small rounded about once, for |big| >= |s| or big = 0 (Fast2Sum of the first two)."""
    hi = b.fadd(big, s)
    err = b.fadd(b.fsub(big, hi), s)
    return b.fadd(hi, b.fadd(err, small))


@_define("tritium_logf", "float", ("float",))
def _logf(b: _Builder, x: _V) -> _V:
    e, s, t = _log_parts(b, x)
    # |e*ln2| >= ln2 > |s| whenever e != 0
    y = _sum_big_first(b, b.fmul(e, _LN2_HI16), s, b.fma(e, _LN2_LO16, t))
    return _log_specials(b, x, y)


@_define("tritium_log2f", "float", ("float",))
def _log2f(b: _Builder, x: _V) -> _V:
    e, s, t = _log_parts(b, x)
    # log2(m) = (s + t) * log2(e) as v + v_small, with the product's rounding error from an fma
    v = b.fmul(s, _LOG2E_HI)
    v_small = b.fadd(b.fma(s, _LOG2E_HI, b.fneg(v)), b.fma(s, _LOG2E_LO, b.fmul(t, _LOG2E)))
    # |e| >= 1 > |v| whenever e != 0
    return _log_specials(b, x, _sum_big_first(b, e, v, v_small))



# ----------------------------------------------------------------------------------------------------
# float32 erf and tanh: two approximations each, both evaluated, one selected
# ----------------------------------------------------------------------------------------------------

# erf(a) = a + a * P(a^2) for a < 0.875 (the leading 1 taken out of 2/sqrt(pi) keeps a exact in the sum)
_ERF_SMALL = _hex("0x1.06eba6p-3", "-0x1.81270ap-2", "0x1.ce2100p-4", "-0x1.b6f18ep-6", "0x1.49bcd8p-8",
                  "-0x1.44fe52p-11")
# erf(a) = 1 - exp(Q(a)) for 0.875 <= a < 3.9375: log(erfc) is smooth where erfc itself falls off too
# fast for a polynomial. From 3.9375 on, erf rounds to 1 in float32.
_ERF_BIG = _hex("0x1.567776p-13", "-0x1.212446p+0", "-0x1.4454cap-1", "-0x1.bb013ep-4", "0x1.9a3a92p-6",
                "-0x1.0f53ecp-8", "0x1.c0d8c8p-12", "-0x1.589630p-16")


@_define("tritium_erff", "float", ("float",))
def _erff(b: _Builder, x: _V) -> _V:
    a = b.fabs(x)
    small = b.fma(a, b.horner(b.fmul(a, a), _ERF_SMALL), a)
    big = b.fsub(1.0, b.call("tritium_expf", b.horner(a, _ERF_BIG)))
    y = b.select(b.fcmp("olt", a, 0.875), small, big)
    y = b.select(b.fcmp("oge", a, 3.9375), 1.0, y)     # nan compares false and stays nan
    return b.copysign(y, x)


# tanh(a) = a + a^3 * P(a^2) for a < 0.625
_TANH_P = _hex("-0x1.555554p-2", "0x1.11107ap-3", "-0x1.b9f006p-5", "0x1.63896cp-6", "-0x1.0bad74p-7",
               "0x1.17394cp-9")


@_define("tritium_tanhf", "float", ("float",))
def _tanhf(b: _Builder, x: _V) -> _V:
    a = b.fabs(x)
    z = b.fmul(a, a)
    small = b.fma(b.fmul(a, z), b.horner(z, _TANH_P), a)
    # Above 0.625, 1 - 2/(e^2a + 1) loses little to cancellation (the result is > 0.55), and for large a
    # e^2a = inf gives exactly 1 without a special case.
    e2a = b.call("tritium_expf", b.fadd(a, a))
    big = b.fsub(1.0, b.fdiv(2.0, b.fadd(e2a, 1.0)))
    y = b.select(b.fcmp("olt", a, 0.625), small, big)
    return b.copysign(y, x)


@_define("tritium_rsqrtf", "float", ("float",))
def _rsqrtf(b: _Builder, x: _V) -> _V:
    return b.fdiv(1.0, b.sqrt(x))

