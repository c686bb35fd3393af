"""8-bit float formats <-> f32 in portable integer IR (targets may substitute hardware conversions through
:meth:`TargetHooks.math`). Rounding to 8 bits is to nearest even (or toward zero), saturating to the
largest finite value like the GPU's ``satfinite`` conversions; NaN stays NaN."""
from __future__ import annotations

from ...llvmir.fp8 import FORMATS
from ...llvmir.text import Function
from ...llvmir.types import SUFFIX, const


def to_f32(fn: Function, fmt: str, x: str) -> str:
    f = FORMATS[fmt]
    e, m, bias, kind = f.ebits, f.mbits, f.bias, f.kind
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
    if kind == "fn":
        low = fn.inst(f"and i32 {xi}, 127")
        isnan = fn.inst(f"icmp eq i32 {low}, 127")
        return fn.inst(f"select i1 {isnan}, float {nan}, float {val}")
    if kind == "fnuz":
        isnan = fn.inst(f"icmp eq i32 {xi}, 128")
        return fn.inst(f"select i1 {isnan}, float {nan}, float {val}")
    return val


def from_f32(fn: Function, fmt: str, x: str, rtz: bool = False) -> str:
    f = FORMATS[fmt]
    m, bias, kind = f.mbits, f.bias, f.kind
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
    big = fn.inst(f"fcmp oge float {a}, {const('float', f.max_finite)}")
    mag = fn.inst(f"select i1 {big}, i32 {f.max_code}, i32 {mag}")
    if rtz and kind == "ieee":   # toward zero an infinity stays one, as Triton's cvt.rz.f16 then the top byte
        isinf = fn.inst(f"fcmp oeq float {a}, {const('float', float('inf'))}")
        mag = fn.inst(f"select i1 {isinf}, i32 {((1 << f.ebits) - 1) << m}, i32 {mag}")
    out = fn.inst(f"or i32 {mag}, {sign}")
    if kind == "fnuz":
        zero = fn.inst(f"icmp eq i32 {mag}, 0")
        out = fn.inst(f"select i1 {zero}, i32 0, i32 {out}")
    isnan = fn.inst(f"fcmp uno float {x}, {x}")
    out = fn.inst(f"select i1 {isnan}, i32 {f.nan_code}, i32 {out}")
    return fn.inst(f"trunc i32 {out} to i8")


def trunc_rtz(fn: Function, x: str, t: str, rty: str) -> str:
    """Float narrowing rounding toward zero: round to nearest, then step back when that went past ``x``."""
    it = {"half": "i16", "bfloat": "i16", "float": "i32"}[rty]
    h = fn.inst(f"fptrunc {t} {x} to {rty}")
    back = fn.inst(f"fpext {rty} {h} to {t}")
    ab = fn.inst(f"call {t} @llvm.fabs.{SUFFIX[t]}({t} {back})")
    ax = fn.inst(f"call {t} @llvm.fabs.{SUFFIX[t]}({t} {x})")
    over = fn.inst(f"fcmp ogt {t} {ab}, {ax}")
    hb = fn.inst(f"bitcast {rty} {h} to {it}")
    dec = fn.inst(f"sub {it} {hb}, 1")
    fixed = fn.inst(f"select i1 {over}, {it} {dec}, {it} {hb}")
    return fn.inst(f"bitcast {it} {fixed} to {rty}")


INTRINSICS = {
    "llvm.trunc.f32": "declare float @llvm.trunc.f32(float)",
    "llvm.roundeven.f32": "declare float @llvm.roundeven.f32(float)",
    "llvm.fabs.f32": "declare float @llvm.fabs.f32(float)",
    "llvm.fabs.f64": "declare double @llvm.fabs.f64(double)",
}

