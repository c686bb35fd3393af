"""float32 sin and cos for :mod:`.mathlib`: Cody-Waite reduction in float32 below 2^21, and from there the exact
(Payne-Hanek) reduction of :mod:`.mathlib_trig`, reached through a call with vector variants."""
from __future__ import annotations

from typing import Callable

from . import mathlib_trig as _trig
from .mathlib_ir import _Builder, _define, _hex, _V

# ----------------------------------------------------------------------------------------------------
# float32 sin and cos
#
# x = k*pi/2 + r with |r| <= ~pi/4 and pi/2 in three float32 parts (Cody-Waite). With fma the first step
# is exact, the second is done without loss, the third only adds a tiny correction c, and sin/cos(r + c)
# are evaluated as sin/cos(r) plus c times the derivative. That keeps the result within ~1 ulp for |x| up
# to 2^21 and stays in float32 for full vector width (float64 would halve it for the whole loop). From 2^21
# on, mathlib_trig's exact reduction takes over, through a call whose vector forms return at once when no lane
# needs it.
# ----------------------------------------------------------------------------------------------------

_TWO_OVER_PI = float.fromhex("0x1.45f306p-1")
_PIO2_1, _PIO2_2, _PIO2_3 = _hex("0x1.921fb6p+0", "-0x1.777a5cp-25", "-0x1.ee59dap-50")
# sin(r) = r + r^3 * S(r^2), cos(r) = 1 - r^2/2 + r^4 * C(r^2), fitted on |r| <= pi/4 + 0.1 because the
# float32 k may be off by one near odd multiples of pi/4 (for large x)
_SIN_S = _hex("-0x1.555556p-3", "0x1.111100p-7", "-0x1.a00904p-13", "0x1.6b7484p-19")
_COS_C = _hex("0x1.555556p-5", "-0x1.6c16aep-10", "0x1.a00b26p-16", "-0x1.2315e0p-22")


def _two_sum(b: _Builder, x: _V, y: _V) -> tuple[_V, _V]:
    """(s, err) with s = x + y rounded and s + err = x + y exactly, whatever the magnitudes (Knuth)."""
    s = b.fadd(x, y)
    xp = b.fsub(s, y)
    yp = b.fsub(s, xp)
    return s, b.fadd(b.fsub(x, xp), b.fsub(y, yp))


def _sincos_abs(b: _Builder, x: _V, quadrant_offset: int) -> _V:
    """sin(|x|) (offset 0) or cos(|x|) (offset 1)."""
    a = b.fabs(x)
    k = b.rint(b.fmul(a, _TWO_OVER_PI))
    nk = b.fneg(k)
    r1 = b.fma(nk, _PIO2_1, a)                  # exact: the result fits in a float
    # r1 - k*_PIO2_2 with nothing lost: the product split by an fma, the difference by TwoSum
    p = b.fmul(k, _PIO2_2)
    p_err = b.fma(k, _PIO2_2, b.fneg(p))
    r, r_err = _two_sum(b, r1, b.fneg(p))
    c = b.fma(nk, _PIO2_3, b.fsub(r_err, p_err))    # the reduced argument is r + c, |c| << |r|
    # (past 2^21 r loses its meaning; those x take the exact reduction below instead, so nothing here guards
    # against a huge r. x = inf or nan gives nan through r.)
    z = b.fmul(r, r)
    # sin(r + c) = sin(r) + c*cos(r), with cos(r) ~ 1 - z/2 plenty for a correction this small
    sin_tail = b.fma(b.fmul(r, z), b.horner(z, _SIN_S), b.fmul(c, b.fma(z, -0.5, 1.0)))
    sin = b.fadd(r, sin_tail)
    # cos(r + c) = cos(r) - c*sin(r); 1 - z/2 is the big step, done with its rounding error (and z's)
    # carried into the small terms
    hz = b.fmul(z, 0.5)
    hz_err = b.fmul(b.fma(r, r, b.fneg(z)), 0.5)
    w = b.fsub(1.0, hz)
    w_err = b.fsub(b.fsub(b.fsub(1.0, w), hz), hz_err)
    cos_tail = b.fma(b.fmul(z, z), b.horner(z, _COS_C), b.fmul(c, b.fneg(r)))
    cos = b.fadd(w, b.fadd(w_err, cos_tail))
    # Quadrant k mod 4: floats from 2^25 on are multiples of 4, so clamping k there keeps fptosi in range
    # (and nan, from x = inf, out of it) without changing the result.
    kc = b.select(b.fcmp("olt", k, 2.0 ** 25), k, 2.0 ** 25)
    q = b.add(b.fptosi(kc, "i32"), quadrant_offset)
    v = b.select(b.icmp("ne", b.and_(q, 1), 0), cos, sin)
    return b.select(b.icmp("ne", b.and_(q, 2), 0), b.fneg(v), v)


def _is_big(b: _Builder, x: _V) -> _V:
    """2^21 <= |x| < inf: the arguments the float32 reduction cannot take."""
    bits = b.and_(b.bitcast(x, "i32"), 0x7FFFFFFF)
    return b.icmp("ult", b.sub(bits, _trig.THRESHOLD_BITS), _trig.INF_BITS - _trig.THRESHOLD_BITS)


def _large_arguments(b: _Builder, x: _V, fast: _V, offset: int) -> _V:
    """``fast`` where |x| < 2^21 (or x is inf or nan), else sin(x) (offset 0) or cos(x) (offset 1) from
    mathlib_trig's exact reduction.
    The call is unconditional, with no branch around it, so that both vectorizers see a plain call with vector
    variants: the loop vectorizer's loops and the SLP vectorizer's straight-line code (the codegen writes some
    rows out lane by lane) both call one variant per vector, which tests the lanes and returns at once when
    none needs the slow path. Both sides are the complete (signed) result, so that little lives across the call
    (which clobbers every vector register)."""
    big = _is_big(b, x)
    slow = b.call(_BIG, x, big, b.const("i32", offset), attrs=_trig.variants_attribute(_BIG))
    return b.select(big, slow, fast)


def _big_variants(name: str) -> Callable[[], tuple[str, tuple[str, ...]]]:
    return lambda: (_trig.variants_ir(name), tuple(_trig.variant_name(name, vf) for vf in _trig.VFS))


_BIG = "tritium_sincosf_big"


@_define(_BIG, "float", ("float", "i1", "i32"), inline=False, extra=_big_variants(_BIG))
def _big(b: _Builder, x: _V, big: _V, cos: _V) -> _V:
    """sin(x) (cos = 0) or cos(x) (cos = 1) where ``big`` (the caller's _is_big(x)), else 0 at once: scalar
    code calls this for every element. One function for both, so that a kernel with both compiles it once."""
    b.cond_br(big, "big", "done")
    b.label("big")
    y = _trig.sincos_big(b, b.fabs(x), cos)
    # sin is odd, cos even
    sign = b.select(b.icmp("eq", cos, 0), b.and_(b.bitcast(x, "i32"), 0x80000000), 0)
    y = b.bitcast(b.xor(b.bitcast(y, "i32"), sign), "float")
    b.br("done")
    b.label("done")
    return b.phi((b.const("float", 0.0), "entry"), (y, "big"))


@_define("tritium_sinf", "float", ("float",))
def _sinf(b: _Builder, x: _V) -> _V:
    y = _sincos_abs(b, x, 0)
    # sin is odd: computing sin(|x|) and flipping the sign bit also gets sin(-0) = -0 right
    sign = b.and_(b.bitcast(x, "i32"), 0x80000000)
    return _large_arguments(b, x, b.bitcast(b.xor(b.bitcast(y, "i32"), sign), "float"), 0)


@_define("tritium_cosf", "float", ("float",))
def _cosf(b: _Builder, x: _V) -> _V:
    return _large_arguments(b, x, _sincos_abs(b, x, 1), 1)

