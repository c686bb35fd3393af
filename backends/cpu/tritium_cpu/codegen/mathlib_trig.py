"""float32 sin/cos of large arguments (|x| >= 2^21): Payne-Hanek reduction in integer arithmetic, for
:mod:`.mathlib`'s ``tritium_sinf``/``tritium_cosf``, whose own float32 Cody-Waite reduction is exact enough only
below 2^21.

x = m * 2^e with m the 24-bit significand. Bits of 2/pi worth 4 or more contribute multiples of 4 to
m * 2^e * 2/pi (m is an integer) and are skipped; the 96 bits below them, picked by e, times m give x * 2/pi mod 4
as a 2-bit quadrant and a 62-bit fraction. Rounded to the nearest quadrant, the fraction f (|f| <= 1/2) times pi/2
is the reduced argument, converted to double and fed to Taylor polynomials in double; the result is rounded to
float32 once (measured <= 0.5 ulp past 2^21, see mathlib.py's table).

Precision: the reduced argument is never smaller than about 2^-29.2 (radians) for a float32 x >= 1: the float32
closest to a multiple of pi/2 is 16367173 * 2^72, within 2^-29.86 quadrants of one; the worst case published for
single precision (J.-M. Muller, "Elementary Functions: Algorithms and Implementation", chapter "Range reduction",
table of worst cases), found again by tests/cpu/test_trig_full_range.py's search over every binade. So the 62-bit
fraction keeps at least 32 significant bits of every reduced argument, 8 more than float32 needs.

The slow path runs only for the lanes that need it. ``tritium_sinf``/``tritium_cosf`` call one scalar function,
``tritium_sincosf_big(x, needed, cos)``, unconditionally, with their test 2^21 <= |x| < inf as ``needed``, and
select its result where the test holds; the function returns at once where it does not, and it is ``noinline``
(inlined, the vectorizers would compute its integer arithmetic for every element). The call carries a
``vector-function-abi-variant`` attribute naming vector variants, so a vectorized loop, and a row the SLP
vectorizer packs, call one variant per vector instead, which tests the lanes' ``needed`` at once and returns when
none is set, else calls the scalar function for those lanes. No branch surrounds the call: the SLP vectorizer
cannot pack code across branches. The common |x| < 2^21 path stays vectorized and pays that call and test (a few
percent on a sin+cos loop on the development host).
"""
from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

# 2/pi to K bits after the binary point (G = floor(2/pi * 2^K)). The window for the largest exponent starts
# K + 88 - 254 - 32 >= 0 bits up; windows reaching above bit K read zeros (2/pi < 1), which is right.
K = 320
THRESHOLD_BITS = 0x4A000000     # 2^21 as float32 bits: from here on the slow path
INF_BITS = 0x7F800000
VFS = (4, 8, 16)                # vector widths with variants (other widths: per-lane scalar calls)


def _arctan_inv(n: int, one: int) -> int:
    """arctan(1/n) * one, in integers (series, truncated terms)."""
    total, term, k, sign = 0, one // n, 1, 1
    n2 = n * n
    while term:
        total += sign * (term // k)
        term //= n2
        k += 2
        sign = -sign
    return total


@lru_cache(maxsize=None)
def two_over_pi_bits(bits: int = K) -> int:
    """floor(2/pi * 2^bits), exactly: pi from Machin's formula to 64 bits more, and the quotient checked to be
    the same at both ends of pi's error interval."""
    guard = bits + 64
    one = 1 << guard
    pi = 4 * (4 * _arctan_inv(5, one) - _arctan_inv(239, one))     # pi * 2^guard
    # each series term is off by less than 3 units (its truncations), and there are fewer than guard / 4 terms
    # for arctan(1/5): pi is within 16 * 3 * guard / 4 + 4 * 3 * guard / 4 < 64 * guard units
    lo, hi = pi - 64 * guard, pi + 64 * guard
    g_hi = (2 << (guard + bits)) // lo
    g_lo = (2 << (guard + bits)) // hi
    assert g_lo == g_hi, "2/pi's last bit is undecided: more guard bits needed"
    return g_lo


def pio2_scale() -> float:
    """pi/2 * 2^-62, rounded to double (turns the 62-bit fraction into radians)."""
    g = two_over_pi_bits(200)
    # pi/2 = 1 / (2/pi); 2^-62 / (g * 2^-200) rounded to double is within one double ulp of the true scale
    return float(Fraction(1 << 200, g) / (1 << 62))


def _taylor(first: int, count: int) -> tuple[float, ...]:
    """Coefficients (-1)^j / (first + 2j)! for j < count, as doubles."""
    out, fact = [], 1
    for n in range(1, first + 2 * count):
        fact *= n
        if n >= first and (n - first) % 2 == 0:
            out.append(float(Fraction((-1) ** ((n - first) // 2), fact)))
    return tuple(out)


# sin(r) = r + r^3 * S(r^2) and cos(r) = 1 - r^2/2 + r^4 * C(r^2) on |r| <= pi/4, Taylor series in double: the
# first omitted terms (r^17/17!, r^18/18!) are below 2^-53 relative, far below float32's rounding
_SIN_D = tuple(-c for c in _taylor(3, 7))     # -1/3!, +1/5!, ...
_COS_D = _taylor(4, 7)                         # +1/4!, -1/6!, ...


def _poly(b, z, coefs: tuple[float, ...]):
    """Horner's scheme without fma: at the x86-64 baseline (no FMA) llvm.fma would become a call to libm's
    fma, and double precision leaves room enough for the extra roundings."""
    acc = b.const(z.ty, coefs[-1])
    for c in reversed(coefs[:-1]):
        acc = b.fadd(b.fmul(acc, z), c)
    return acc


def _chunks() -> list[tuple[int, int]]:
    """(w, bits 32w..32w+127 of G) for every w that a float32 >= 2^21 (biased exponent 148 to 254) selects."""
    g = two_over_pi_bits()
    words = range((K + 88 - 32 - 254) >> 5, ((K + 88 - 32 - 148) >> 5) + 1)
    return [(w, (g >> (32 * w)) & ((1 << 128) - 1)) for w in words]


def sincos_big(b, a, offset: int):
    """sin(a) (offset 0) or cos(a) (offset 1) for a float32 2^21 <= a < inf, rounded to float32.
    ``b`` is :mod:`.mathlib`'s builder."""
    bits = b.bitcast(a, "i32")
    e = b.lshr(bits, 23)                                    # biased exponent: a = m * 2^(e - 150)
    m = b.or_(b.and_(bits, 0x7FFFFF), 0x800000)
    # the window of G = 2/pi * 2^K that, times m, gives (a * 2/pi mod 4) * 2^62 in its bits 32..95
    shift = b.sub(K + 88 - 32, e)
    # G >> shift, from the 128-bit chunk holding those bits: at most 5 chunks occur (a select chain is cheaper
    # to compile than a variable shift of a 320-bit integer), then a shift by less than 32
    word = b.lshr(shift, 5)
    chunks = _chunks()
    g = b.const("i128", chunks[-1][1])
    for w, c in chunks[:-1]:
        g = b.select(b.icmp("eq", word, w), b.const("i128", c), g)
    window = b.and_(b.lshr(g, b.zext(b.and_(shift, 31), "i128")), (1 << 96) - 1)
    y = b.trunc(b.lshr(b.mul(window, b.zext(m, "i128")), 32), "i64")
    # quadrant and fraction, rounded to the nearest quadrant: |fraction| <= 1/2
    q = b.trunc(b.lshr(y, 62), "i32")
    f = b.and_(y, (1 << 62) - 1)
    up = b.icmp("uge", f, 1 << 61)
    q = b.add(q, b.zext(up, "i32"))
    f = b.select(up, b.sub(f, 1 << 62), f)
    r = b.fmul(b.sitofp(f, "double"), pio2_scale())
    z = b.fmul(r, r)
    sin = b.fadd(r, b.fmul(b.fmul(r, z), _poly(b, z, _SIN_D)))
    cos = b.fadd(b.fsub(1.0, b.fmul(z, 0.5)), b.fmul(b.fmul(z, z), _poly(b, z, _COS_D)))
    q = b.add(q, offset)
    v = b.select(b.icmp("ne", b.and_(q, 1), 0), cos, sin)
    v = b.select(b.icmp("ne", b.and_(q, 2), 0), b.fneg(v), v)
    return b.fptrunc(v, "float")


def variant_name(scalar: str, vf: int) -> str:
    return f"{scalar}_v{vf}"


def variants_attribute(scalar: str) -> str:
    """The call-site attribute that tells the vectorizers about the vector variants."""
    names = ",".join(f"_ZGV_LLVM_N{vf}vvv_{scalar}({variant_name(scalar, vf)})" for vf in VFS)
    return f'"vector-function-abi-variant"="{names}"'


def variants_ir(scalar: str) -> str:
    """The vector variants of ``float scalar(float x, i1 needed, i32 cos)`` (0 unless ``needed``; cos: 0 for sin,
    1 for cos, a vector argument too so that the SLP vectorizer finds the variant): each returns at once when
    no lane is needed (before its prologue: LLVM shrink-wraps it), otherwise calls ``scalar`` on each needed lane,
    found bit by bit (a loop the optimizer cannot unroll: the variants stay quick to compile)."""
    out = []
    for vf in VFS:
        vt, it, mt = f"<{vf} x float>", f"<{vf} x i32>", f"<{vf} x i1>"
        name = variant_name(scalar, vf)
        attrs = "noinline nounwind willreturn nofree nosync memory(none)"
        out.append(f"""define internal {vt} @{name}({vt} %x, {mt} %m, {it} %c) {attrs} {{
entry:
  %any = call i1 @llvm.vector.reduce.or.v{vf}i1({mt} %m)
  br i1 %any, label %work, label %none
none:
  ret {vt} zeroinitializer
work:
  %mask = bitcast {mt} %m to i{vf}
  {f"%bits.0 = zext i{vf} %mask to i64" if vf < 64 else "%bits.0 = or i64 %mask, 0"}
  br label %lane
lane:
  %bits = phi i64 [%bits.0, %work], [%bits.next, %lane]
  %acc = phi {vt} [zeroinitializer, %work], [%acc.next, %lane]
  %i.64 = call i64 @llvm.cttz.i64(i64 %bits, i1 true)
  %i = trunc i64 %i.64 to i32
  %xi = extractelement {vt} %x, i32 %i
  %ci = extractelement {it} %c, i32 %i
  %yi = call float @{scalar}(float %xi, i1 true, i32 %ci)
  %acc.next = insertelement {vt} %acc, float %yi, i32 %i
  %bits.less = sub i64 %bits, 1
  %bits.next = and i64 %bits, %bits.less
  %more = icmp ne i64 %bits.next, 0
  br i1 %more, label %lane, label %done
done:
  ret {vt} %acc.next
}}""")
    return "\n\n".join(out)


def keep_alive(names: list[str]) -> str:
    """``llvm.used`` keeps the variants (referenced only from an attribute string) until the vectorizer runs;
    ``llvm.compiler.used`` is softfloat's, and a module may hold only one definition of each."""
    refs = ", ".join(f"ptr @{n}" for n in names)
    return f'@llvm.used = appending global [{len(names)} x ptr] [{refs}], section "llvm.metadata"'
