"""float8 <-> float32 conversions and the round-toward-zero narrowings, for :mod:`.mathlib` (the formats and their
conventions are tabulated there)."""
from __future__ import annotations

from tritium.llvmir.fp8 import FORMATS, Fp8Format

from .mathlib_ir import _Builder, _define, _V

# ----------------------------------------------------------------------------------------------------
# float8 <-> float32
#
# All formats share one pattern: sign, E exponent bits, M mantissa bits, a bias, and a convention for
# the top encodings. Conversions work on the bits as integers; the only float arithmetic is for denormals,
# where a power-of-two multiply (exact) plus rint or truncation does the rounding.
# ----------------------------------------------------------------------------------------------------

_FP8 = FORMATS     # tritium.llvmir.fp8: each format described once
_QNAN32_BITS = 0x7FC00000
_INF32_BITS = 0x7F800000


def _fp8_to_f32(b: _Builder, fmt: Fp8Format, v: _V) -> _V:
    u = b.zext(v, "i32")
    sign = b.shl(b.and_(u, 0x80), 24)
    mag = b.and_(u, 0x7F)
    exp = b.lshr(mag, fmt.mbits)
    # normal: move the fields into place and rebias the exponent
    normal = b.add(b.shl(mag, 23 - fmt.mbits), (127 - fmt.bias) << 23)
    # denormal (exponent field 0): mantissa * 2^(1 - bias - M), exact in float32
    den = b.fmul(b.sitofp(b.and_(mag, (1 << fmt.mbits) - 1), "float"), 2.0 ** (1 - fmt.bias - fmt.mbits))
    bits = b.select(b.icmp("eq", exp, 0), b.bitcast(den, "i32"), normal)
    if fmt.kind == "fn":
        bits = b.select(b.icmp("eq", mag, 0x7F), _QNAN32_BITS, bits)
    elif fmt.kind == "ieee":
        top = b.icmp("eq", exp, (1 << fmt.ebits) - 1)
        mant_zero = b.icmp("eq", b.and_(mag, (1 << fmt.mbits) - 1), 0)
        bits = b.select(top, b.select(mant_zero, b.const("i32", _INF32_BITS), _QNAN32_BITS), bits)
    elif fmt.kind == "fnuz":
        # 0x80 is the nan; with the sign or-ed in below it becomes 0xffc00000, still a nan
        bits = b.select(b.icmp("eq", u, 0x80), _QNAN32_BITS, bits)
    return b.bitcast(b.or_(bits, sign), "float")


def _f32_to_fp8(b: _Builder, fmt: Fp8Format, x: _V, rtz: bool) -> _V:
    xb = b.bitcast(x, "i32")
    sign = b.and_(b.lshr(xb, 24), 0x80)
    a = b.and_(xb, 0x7FFFFFFF)
    shift = 23 - fmt.mbits
    # Normal results: rebias the exponent, then round the mantissa on the integer bits; a carry out of the
    # mantissa correctly bumps the exponent (and may overflow past max_code, handled below).
    t = b.sub(a, (127 - fmt.bias) << 23)
    if not rtz:
        # round half to even: add just under half an ulp, plus one more if the kept lsb is odd
        odd = b.and_(b.lshr(t, shift), 1)
        t = b.add(b.add(t, (1 << (shift - 1)) - 1), odd)
    normal = b.lshr(t, shift)
    # Denormal results: |x| * 2^(bias - 1 + M) is exact and its integer part is the code (2^M means
    # rounding reached the smallest normal, whose code is indeed 2^M). Inputs outside this range are
    # replaced by 0 before fptosi, which would turn large values into poison.
    min_normal_bits = (127 + 1 - fmt.bias) << 23
    is_den = b.icmp("ult", a, min_normal_bits)
    ad = b.select(is_den, b.bitcast(a, "float"), 0.0)
    scaled = b.fmul(ad, 2.0 ** (fmt.bias - 1 + fmt.mbits))
    if not rtz:
        scaled = b.rint(scaled)
    code = b.select(is_den, b.fptosi(scaled, "i32"), normal)

    is_nan = b.icmp("ugt", a, _INF32_BITS)
    is_inf = b.icmp("eq", a, _INF32_BITS)
    nan_code = {"fn": 0x7F, "ieee": 0x7F, "fnuz": 0x80, "finite": fmt.max_code}[fmt.kind]
    # Past the largest finite value, round-to-nearest saturates, infinities included, as Triton's conversions
    # (satfinite) and the GPU lowering do; the fnuz formats give their nan 0x80, as torch. Truncation never
    # leaves the finite range, so there only inf itself becomes inf (or nan, or the saturated value).
    inf_code = {"fn": fmt.max_code, "ieee": 0x7F & ~((1 << fmt.mbits) - 1), "fnuz": 0x80,
                "finite": fmt.max_code}[fmt.kind]
    over = b.icmp("ugt", code, fmt.max_code)              # inf and nan included
    code = b.select(over, fmt.max_code if rtz or fmt.kind == "ieee" else inf_code, code)
    if rtz:
        code = b.select(is_inf, inf_code, code)
    code = b.select(is_nan, nan_code, code)
    if fmt.kind == "fnuz":
        # the nan 0x80 carries no sign of its own, and there is no -0
        no_sign = b.or_(b.icmp("eq", code, 0), b.icmp("eq", code, 0x80))
        sign = b.select(no_sign, 0, sign)
    return b.trunc(b.or_(code, sign), "i8")


def _register_fp8(fmt: Fp8Format) -> None:
    _define(f"tritium_{fmt.name}_to_f32", "float", ("i8",))(lambda b, v: _fp8_to_f32(b, fmt, v))
    _define(f"tritium_f32_to_{fmt.name}", "i8", ("float",))(lambda b, x: _f32_to_fp8(b, fmt, x, False))
    _define(f"tritium_f32_to_{fmt.name}_rtz", "i8", ("float",))(lambda b, x: _f32_to_fp8(b, fmt, x, True))


for _f in _FP8.values():
    _register_fp8(_f)


# ----------------------------------------------------------------------------------------------------
# Round-toward-zero narrowing between the IEEE types (the hardware only rounds to nearest)
# ----------------------------------------------------------------------------------------------------

@_define("tritium_f32_to_f16_rtz", "half", ("float",))
def _f32_to_f16_rtz(b: _Builder, x: _V) -> _V:
    xb = b.bitcast(x, "i32")
    sign = b.and_(b.lshr(xb, 16), 0x8000)
    a = b.and_(xb, 0x7FFFFFFF)
    # normal halves: rebias and drop the low 13 mantissa bits
    normal = b.lshr(b.sub(a, (127 - 15) << 23), 13)
    # denormal halves (|x| < 2^-14): truncate |x| * 2^24, exact until the fptosi
    is_den = b.icmp("ult", a, (127 - 14) << 23)
    ad = b.select(is_den, b.bitcast(a, "float"), 0.0)
    h = b.select(is_den, b.fptosi(b.fmul(ad, 2.0 ** 24), "i32"), normal)
    h = b.select(b.icmp("ugt", h, 0x7BFF), 0x7BFF, h)     # finite overflow: largest finite half
    h = b.select(b.icmp("eq", a, _INF32_BITS), 0x7C00, h)
    h = b.select(b.icmp("ugt", a, _INF32_BITS), 0x7E00, h)
    return b.bitcast(b.trunc(b.or_(h, sign), "i16"), "half")


@_define("tritium_f32_to_bf16_rtz", "bfloat", ("float",))
def _f32_to_bf16_rtz(b: _Builder, x: _V) -> _V:
    # bfloat16 is float32's top half: truncation is round-toward-zero, denormals and overflow included.
    # Only a nan whose payload sits in the dropped bits needs its quiet bit set to stay a nan.
    xb = b.bitcast(x, "i32")
    hi = b.lshr(xb, 16)
    is_nan = b.icmp("ugt", b.and_(xb, 0x7FFFFFFF), _INF32_BITS)
    hi = b.select(is_nan, b.or_(hi, 0x40), hi)
    return b.bitcast(b.trunc(hi, "i16"), "bfloat")


@_define("tritium_f64_to_f32_rtz", "float", ("double",))
def _f64_to_f32_rtz(b: _Builder, x: _V) -> _V:
    # Round to nearest, then step one ulp toward zero where that went up in magnitude. Float magnitudes
    # are ordered like their bit patterns, so the step is an integer decrement; it also turns an overflow
    # to inf into the largest finite float and a denormal rounded up into the one below.
    y = b.fptrunc(x, "float")
    up = b.fcmp("ogt", b.fpext(b.fabs(y), "double"), b.fabs(x))
    yb = b.bitcast(y, "i32")
    return b.bitcast(b.select(up, b.sub(yb, 1), yb), "float")
