"""8-bit float formats <-> f32 in portable integer IR (targets may substitute hardware conversions through
:meth:`TargetHooks.math`). Rounding to 8 bits is to nearest even (or toward zero), saturating to the
largest finite value like the GPU's ``satfinite`` conversions; NaN stays NaN."""
from __future__ import annotations

from ..irtext import Function, const

# name -> (exponent bits, mantissa bits, bias, NaN encoding rule)
FORMATS = {
    "fp8e4nv": (4, 3, 7, "ieee_no_inf"),     # E4M3FN: no infinities, S.1111.111 is NaN
    "fp8e5": (5, 2, 15, "ieee"),             # E5M2: like half
    "fp8e4b8": (4, 3, 8, "fnuz"),            # E4M3FNUZ: 0x80 is NaN, no -0
    "fp8e5b16": (5, 2, 16, "fnuz"),          # E5M2FNUZ
    "fp8e4b15": (4, 3, 15, "none"),          # E4M3 with bias 15, no special values
}


def _max_finite(fmt: str) -> float:
    e, m, bias, kind = FORMATS[fmt]
    top = (1 << e) - 1
    if kind == "ieee":
        top -= 1
        mant = (1 << m) - 1
    elif kind == "ieee_no_inf":
        mant = (1 << m) - 2
    else:
        mant = (1 << m) - 1
    return (1 + mant / (1 << m)) * 2.0 ** (top - bias)


def to_f32(fn: Function, fmt: str, x: str) -> str:
    e, m, bias, kind = FORMATS[fmt]
    xi = fn.inst(f"zext i8 {x} to i32")
    sign = fn.inst(f"and i32 {xi}, 128")
    sign = fn.inst(f"shl i32 {sign}, 24")
    exp = fn.inst(f"lshr i32 {xi}, {m}")
    exp = fn.inst(f"and i32 {exp}, {(1 << e) - 1}")
    man = fn.inst(f"and i32 {xi}, {(1 << m) - 1}")
    # normal numbers: rebias the exponent, widen the mantissa
    e32 = fn.inst(f"add i32 {exp}, {127 - bias}")
    e32 = fn.inst(f"shl i32 {e32}, 23")
    m32 = fn.inst(f"shl i32 {man}, {23 - m}")
    bits = fn.inst(f"or i32 {e32}, {m32}")
    normal = fn.inst(f"bitcast i32 {bits} to float")
    # subnormal numbers (and zero): mantissa * 2^(1 - bias - m)
    mf = fn.inst(f"uitofp i32 {man} to float")
    sub = fn.inst(f"fmul float {mf}, {const('float', 2.0 ** (1 - bias - m))}")
    is_sub = fn.inst(f"icmp eq i32 {exp}, 0")
    mag = fn.inst(f"select i1 {is_sub}, float {sub}, float {normal}")
    mbits = fn.inst(f"bitcast float {mag} to i32")
    out = fn.inst(f"or i32 {mbits}, {sign}")
    val = fn.inst(f"bitcast i32 {out} to float")
    nan = const("float", float("nan"))
    if kind == "ieee":
        top = fn.inst(f"icmp eq i32 {exp}, {(1 << e) - 1}")
        zero_m = fn.inst(f"icmp eq i32 {man}, 0")
        inf = fn.inst(f"select i1 {fn.inst(f'icmp ne i32 {sign}, 0')}, float {const('float', float('-inf'))}, "
                      f"float {const('float', float('inf'))}")
        special = fn.inst(f"select i1 {zero_m}, float {inf}, float {nan}")
        return fn.inst(f"select i1 {top}, float {special}, float {val}")
    if kind == "ieee_no_inf":
        low = fn.inst(f"and i32 {xi}, 127")
        isnan = fn.inst(f"icmp eq i32 {low}, 127")
        return fn.inst(f"select i1 {isnan}, float {nan}, float {val}")
    if kind == "fnuz":
        isnan = fn.inst(f"icmp eq i32 {xi}, 128")
        return fn.inst(f"select i1 {isnan}, float {nan}, float {val}")
    return val


def from_f32(fn: Function, fmt: str, x: str, rtz: bool = False) -> str:
    e, m, bias, kind = FORMATS[fmt]
    bits = fn.inst(f"bitcast float {x} to i32")
    sign = fn.inst(f"lshr i32 {bits}, 24")
    sign = fn.inst(f"and i32 {sign}, 128")
    absbits = fn.inst(f"and i32 {bits}, 2147483647")
    a = fn.inst(f"bitcast i32 {absbits} to float")
    # normal range: round the f32 mantissa to m bits, then rebias
    drop = 23 - m
    if rtz:
        r = absbits
    else:
        lsb = fn.inst(f"lshr i32 {absbits}, {drop}")
        lsb = fn.inst(f"and i32 {lsb}, 1")
        r = fn.inst(f"add i32 {absbits}, {(1 << (drop - 1)) - 1}")
        r = fn.inst(f"add i32 {r}, {lsb}")
    r = fn.inst(f"lshr i32 {r}, {drop}")
    r = fn.inst(f"sub i32 {r}, {(127 - bias) << m}")
    # subnormal range: a / 2^(1 - bias - m), rounded to an integer
    scaled = fn.inst(f"fmul float {a}, {const('float', 2.0 ** (bias + m - 1))}")
    mod = "@llvm.trunc.f32" if rtz else "@llvm.roundeven.f32"
    rounded = fn.inst(f"call float {mod}(float {scaled})")
    subv = fn.inst(f"fptoui float {rounded} to i32")
    min_normal = 2.0 ** (1 - bias)
    is_sub = fn.inst(f"fcmp olt float {a}, {const('float', min_normal)}")
    mag = fn.inst(f"select i1 {is_sub}, i32 {subv}, i32 {r}")
    # saturate to the largest finite value
    maxf = _max_finite(fmt)
    maxbits = _encode_max(fmt)
    big = fn.inst(f"fcmp oge float {a}, {const('float', maxf)}")
    mag = fn.inst(f"select i1 {big}, i32 {maxbits}, i32 {mag}")
    out = fn.inst(f"or i32 {mag}, {sign}")
    if kind == "fnuz":
        zero = fn.inst(f"icmp eq i32 {mag}, 0")
        out = fn.inst(f"select i1 {zero}, i32 0, i32 {out}")
    isnan = fn.inst(f"fcmp uno float {x}, {x}")
    nanbits = {"ieee": 0x7F, "ieee_no_inf": 0x7F, "fnuz": 0x80, "none": 0x7F}[kind]
    out = fn.inst(f"select i1 {isnan}, i32 {nanbits}, i32 {out}")
    return fn.inst(f"trunc i32 {out} to i8")


def _encode_max(fmt: str) -> int:
    e, m, bias, kind = FORMATS[fmt]
    top = (1 << e) - 1
    if kind == "ieee":
        return ((top - 1) << m) | ((1 << m) - 1)
    if kind == "ieee_no_inf":
        return (top << m) | ((1 << m) - 2)
    return (top << m) | ((1 << m) - 1)


def trunc_rtz(fn: Function, x: str, t: str, rty: str) -> str:
    """Float narrowing rounding toward zero: round to nearest, then step back when that went past ``x``."""
    it = {"half": "i16", "bfloat": "i16", "float": "i32"}[rty]
    h = fn.inst(f"fptrunc {t} {x} to {rty}")
    back = fn.inst(f"fpext {rty} {h} to {t}")
    ab = fn.inst(f"call {t} @llvm.fabs.{_sfx(t)}({t} {back})")
    ax = fn.inst(f"call {t} @llvm.fabs.{_sfx(t)}({t} {x})")
    over = fn.inst(f"fcmp ogt {t} {ab}, {ax}")
    hb = fn.inst(f"bitcast {rty} {h} to {it}")
    dec = fn.inst(f"sub {it} {hb}, 1")
    fixed = fn.inst(f"select i1 {over}, {it} {dec}, {it} {hb}")
    return fn.inst(f"bitcast {it} {fixed} to {rty}")


def _sfx(t: str) -> str:
    return {"float": "f32", "double": "f64", "half": "f16", "bfloat": "bf16"}[t]


INTRINSICS = {
    "llvm.trunc.f32": "declare float @llvm.trunc.f32(float)",
    "llvm.roundeven.f32": "declare float @llvm.roundeven.f32(float)",
    "llvm.fabs.f32": "declare float @llvm.fabs.f32(float)",
    "llvm.fabs.f64": "declare double @llvm.fabs.f64(double)",
}


_TABLES: dict[str, list[float]] = {}


def decode_table(fmt: str) -> list[float]:
    """The value of every code of an 8-bit format (NaN where the code is NaN)."""
    got = _TABLES.get(fmt)
    if got is None:
        e, m, bias, kind = FORMATS[fmt]
        got = []
        for code in range(256):
            s = -1.0 if code & 0x80 else 1.0
            ex = (code >> m) & ((1 << e) - 1)
            mant = code & ((1 << m) - 1)
            if kind == "fnuz" and code == 0x80:
                got.append(float("nan"))
                continue
            if kind == "ieee_no_inf" and code & 0x7F == 0x7F:
                got.append(float("nan"))
                continue
            if kind == "ieee" and ex == (1 << e) - 1:
                got.append(s * float("inf") if mant == 0 else float("nan"))
                continue
            v = mant * 2.0 ** (1 - bias - m) if ex == 0 else (1 + mant / (1 << m)) * 2.0 ** (ex - bias)
            got.append(s * v)
        _TABLES[fmt] = got
    return got


def encode(value: float, fmt: str) -> int:
    """The code of the 8-bit value nearest to ``value`` (ties to an even code), saturating like from_f32."""
    table = decode_table(fmt)
    if value != value:
        return from_nan(fmt)
    best, best_err = 0, None
    for code, v in enumerate(table):
        if v != v or v in (float("inf"), float("-inf")):
            continue
        err = abs(v - value)
        if best_err is None or err < best_err or (err == best_err and code % 2 == 0 and best % 2 == 1):
            best, best_err = code, err
    if value == 0 and str(value).startswith("-") and FORMATS[fmt][3] != "fnuz":
        return 0x80
    return best


def from_nan(fmt: str) -> int:
    return 0x80 if FORMATS[fmt][3] == "fnuz" else 0x7F
