"""``tl.extra.libdevice``: the CUDA libdevice function set, as portable operations.

Each function accepts exactly the argument types libdevice has a variant for (listed below; Python numbers
are converted first) and returns that variant's type. Functions with an upstream MLIR ``math`` equivalent
become that op (so every backend's math lowering applies); the others become ``tt.extern_elementwise``
with ``libname="libdevice"`` and ``symbol="<function>_<argument types>"`` (``mulhi_u32_u32``,
``float2int_rd_f32``...), which a backend maps to its own library.
"""
from __future__ import annotations

from typing import Any

from .. import core
from ..core import CompileTimeError, _unwrap, builtin

# name: argument types > result type; ... (one entry per variant)
_SIGNATURES = """
    clz: i32 > i32; i64 > i32
    popc: i32 > i32; i64 > i32
    byte_perm: i32 i32 i32 > i32
    mulhi: i32 i32 > i32; u32 u32 > u32; i64 i64 > i64; u64 u64 > u64
    mul24: i32 i32 > i32; u32 u32 > u32
    brev: i32 > i32; i64 > i64
    sad: i32 i32 u32 > i32; u32 u32 u32 > u32
    abs: i32 > i32; i64 > i64; f32 > f32; f64 > f64
    floor: f32 > f32; f64 > f64
    rcp64h: f64 > f64
    rsqrt: f32 > f32; f64 > f64
    ceil: f64 > f64; f32 > f32
    trunc: f64 > f64; f32 > f32
    exp2: f32 > f32; f64 > f64
    saturatef: f32 > f32
    fma_rn: f32 f32 f32 > f32; f64 f64 f64 > f64
    fma_rz: f32 f32 f32 > f32; f64 f64 f64 > f64
    fma_rd: f32 f32 f32 > f32; f64 f64 f64 > f64
    fma_ru: f32 f32 f32 > f32; f64 f64 f64 > f64
    fast_dividef: f32 f32 > f32
    div_rn: f32 f32 > f32; f64 f64 > f64
    div_rz: f32 f32 > f32; f64 f64 > f64
    div_rd: f32 f32 > f32; f64 f64 > f64
    div_ru: f32 f32 > f32; f64 f64 > f64
    rcp_rn: f32 > f32; f64 > f64
    rcp_rz: f32 > f32; f64 > f64
    rcp_rd: f32 > f32; f64 > f64
    rcp_ru: f32 > f32; f64 > f64
    sqrt_rn: f32 > f32; f64 > f64
    sqrt_rz: f32 > f32; f64 > f64
    sqrt_rd: f32 > f32; f64 > f64
    sqrt_ru: f32 > f32; f64 > f64
    sqrt: f32 > f32; f64 > f64
    add_rn: f64 f64 > f64; f32 f32 > f32
    add_rz: f64 f64 > f64; f32 f32 > f32
    add_rd: f64 f64 > f64; f32 f32 > f32
    add_ru: f64 f64 > f64; f32 f32 > f32
    mul_rn: f64 f64 > f64; f32 f32 > f32
    mul_rz: f64 f64 > f64; f32 f32 > f32
    mul_rd: f64 f64 > f64; f32 f32 > f32
    mul_ru: f64 f64 > f64; f32 f32 > f32
    double2float_rn: f64 > f32
    double2float_rz: f64 > f32
    double2float_rd: f64 > f32
    double2float_ru: f64 > f32
    double2int_rn: f64 > i32
    double2int_rz: f64 > i32
    double2int_rd: f64 > i32
    double2int_ru: f64 > i32
    double2uint_rn: f64 > i32
    double2uint_rz: f64 > i32
    double2uint_rd: f64 > i32
    double2uint_ru: f64 > i32
    int2double_rn: i32 > f64
    uint2double_rn: u32 > f64
    float2int_rn: f32 > i32
    float2int_rz: f32 > i32
    float2int_rd: f32 > i32
    float2int_ru: f32 > i32
    float2uint_rn: f32 > i32
    float2uint_rz: f32 > i32
    float2uint_rd: f32 > i32
    float2uint_ru: f32 > i32
    int2float_rn: i32 > f32
    int2float_rz: i32 > f32
    int2float_rd: i32 > f32
    int2float_ru: i32 > f32
    uint2float_rn: u32 > f32
    uint2float_rz: u32 > f32
    uint2float_rd: u32 > f32
    uint2float_ru: u32 > f32
    hiloint2double: i32 i32 > f64
    double2loint: f64 > i32
    double2hiint: f64 > i32
    float2ll_rn: f32 > i64
    float2ll_rz: f32 > i64
    float2ll_rd: f32 > i64
    float2ll_ru: f32 > i64
    float2ull_rn: f32 > i64
    float2ull_rz: f32 > i64
    float2ull_rd: f32 > i64
    float2ull_ru: f32 > i64
    double2ll_rn: f64 > i64
    double2ll_rz: f64 > i64
    double2ll_rd: f64 > i64
    double2ll_ru: f64 > i64
    double2ull_rn: f64 > i64
    double2ull_rz: f64 > i64
    double2ull_rd: f64 > i64
    double2ull_ru: f64 > i64
    ll2float_rn: i64 > f32
    ll2float_rz: i64 > f32
    ll2float_rd: i64 > f32
    ll2float_ru: i64 > f32
    ull2float_rn: u64 > f32
    ull2float_rz: u64 > f32
    ull2float_rd: u64 > f32
    ull2float_ru: u64 > f32
    ll2double_rn: i64 > f64
    ll2double_rz: i64 > f64
    ll2double_rd: i64 > f64
    ll2double_ru: i64 > f64
    ull2double_rn: u64 > f64
    ull2double_rz: u64 > f64
    ull2double_rd: u64 > f64
    ull2double_ru: u64 > f64
    int_as_float: i32 > f32
    float_as_int: f32 > i32
    uint_as_float: u32 > f32
    float_as_uint: f32 > i32
    longlong_as_double: i64 > f64
    double_as_longlong: f64 > i64
    fast_sinf: f32 > f32
    fast_cosf: f32 > f32
    fast_log2f: f32 > f32
    fast_logf: f32 > f32
    fast_expf: f32 > f32
    fast_tanf: f32 > f32
    fast_exp10f: f32 > f32
    fast_log10f: f32 > f32
    fast_powf: f32 f32 > f32
    hadd: i32 i32 > i32; u32 u32 > u32
    rhadd: i32 i32 > i32; u32 u32 > u32
    sub_rn: f32 f32 > f32; f64 f64 > f64
    sub_rz: f32 f32 > f32; f64 f64 > f64
    sub_rd: f32 f32 > f32; f64 f64 > f64
    sub_ru: f32 f32 > f32; f64 f64 > f64
    rsqrt_rn: f32 > f32
    ffs: i32 > i32; i64 > i32
    rint: f32 > f32; f64 > f64
    llrint: f32 > i64; f64 > i64
    nearbyint: f32 > f32; f64 > f64
    isnan: f32 > i1; f64 > i1
    signbit: f32 > i32; f64 > i32
    copysign: f32 f32 > f32; f64 f64 > f64
    finitef: f32 > i1
    isinf: f32 > i1; f64 > i1
    nextafter: f32 f32 > f32; f64 f64 > f64
    sin: f32 > f32; f64 > f64
    cos: f32 > f32; f64 > f64
    sinpi: f32 > f32; f64 > f64
    cospi: f32 > f32; f64 > f64
    tan: f32 > f32; f64 > f64
    log2: f32 > f32; f64 > f64
    exp: f32 > f32; f64 > f64
    exp10: f32 > f32; f64 > f64
    cosh: f32 > f32; f64 > f64
    sinh: f32 > f32; f64 > f64
    tanh: f32 > f32; f64 > f64
    atan2: f32 f32 > f32; f64 f64 > f64
    atan: f32 > f32; f64 > f64
    asin: f32 > f32; f64 > f64
    acos: f32 > f32; f64 > f64
    log: f32 > f32; f64 > f64
    log10: f32 > f32; f64 > f64
    log1p: f32 > f32; f64 > f64
    acosh: f32 > f32; f64 > f64
    asinh: f32 > f32; f64 > f64
    atanh: f32 > f32; f64 > f64
    expm1: f32 > f32; f64 > f64
    hypot: f32 f32 > f32; f64 f64 > f64
    rhypot: f32 f32 > f32; f64 f64 > f64
    norm3d: f32 f32 f32 > f32; f64 f64 f64 > f64
    rnorm3d: f32 f32 f32 > f32; f64 f64 f64 > f64
    norm4d: f32 f32 f32 f32 > f32; f64 f64 f64 f64 > f64
    rnorm4d: f32 f32 f32 f32 > f32; f64 f64 f64 f64 > f64
    cbrt: f32 > f32; f64 > f64
    rcbrt: f32 > f32; f64 > f64
    j0: f32 > f32; f64 > f64
    j1: f32 > f32; f64 > f64
    y0: f32 > f32; f64 > f64
    y1: f32 > f32; f64 > f64
    yn: i32 f32 > f32; i32 f64 > f64
    jn: i32 f32 > f32; i32 f64 > f64
    cyl_bessel_i0: f32 > f32; f64 > f64
    cyl_bessel_i1: f32 > f32; f64 > f64
    erf: f32 > f32; f64 > f64
    erfinv: f32 > f32; f64 > f64
    erfc: f32 > f32; f64 > f64
    erfcx: f32 > f32; f64 > f64
    erfcinv: f32 > f32; f64 > f64
    normcdfinv: f32 > f32; f64 > f64
    normcdf: f32 > f32; f64 > f64
    lgamma: f32 > f32; f64 > f64
    ldexp: f32 i32 > f32; f64 i32 > f64
    scalbn: f32 i32 > f32; f64 i32 > f64
    fmod: f32 f32 > f32; f64 f64 > f64
    remainder: f32 f32 > f32; f64 f64 > f64
    fma: f32 f32 f32 > f32; f64 f64 f64 > f64
    pow: f32 i32 > f32; f64 i32 > f64; f32 f32 > f32; f64 f64 > f64
    tgamma: f32 > f32; f64 > f64
    round: f32 > f32; f64 > f64
    llround: f32 > i64; f64 > i64
    fdim: f32 f32 > f32; f64 f64 > f64
    ilogb: f32 > i32; f64 > i32
    logb: f32 > f32; f64 > f64
    isfinited: f64 > i1
"""

# libdevice functions that are exactly an upstream math op on float arguments
_MATH_FLOAT = {
    "floor": "math.floor", "ceil": "math.ceil", "trunc": "math.trunc", "round": "math.round", "rint": "math.roundeven",
    "nearbyint": "math.roundeven", "sqrt": "math.sqrt", "rsqrt": "math.rsqrt", "exp": "math.exp", "exp2": "math.exp2",
    "expm1": "math.expm1", "log": "math.log", "log2": "math.log2", "log10": "math.log10", "log1p": "math.log1p",
    "sin": "math.sin", "cos": "math.cos", "tan": "math.tan", "sinh": "math.sinh", "cosh": "math.cosh",
    "tanh": "math.tanh", "asin": "math.asin", "acos": "math.acos", "atan": "math.atan", "asinh": "math.asinh",
    "acosh": "math.acosh", "atanh": "math.atanh", "erf": "math.erf", "erfc": "math.erfc", "cbrt": "math.cbrt",
    "atan2": "math.atan2", "copysign": "math.copysign", "fma": "math.fma", "abs": "math.absf",
    "isnan": "math.isnan", "isinf": "math.isinf", "finitef": "math.isfinite", "isfinited": "math.isfinite",
    "fast_sinf": "math.sin", "fast_cosf": "math.cos", "fast_log2f": "math.log2", "fast_logf": "math.log",
    "fast_expf": "math.exp", "fast_tanf": "math.tan", "fast_log10f": "math.log10", "fast_dividef": "arith.divf",
    "sqrt_rn": "tt.precise_sqrt", "div_rn": "tt.precise_divf", "add_rn": "arith.addf", "sub_rn": "arith.subf",
    "mul_rn": "arith.mulf", "fma_rn": "math.fma", "fast_powf": "math.powf",
}
# the correctly rounded basic operations, never fused into an fma with their neighbours (__nv_fmul_rn and its
# kin are separate mul.rn/add.rn instructions, which compensated algorithms rely on)
_ROUNDED_ALONE = {"add_rn", "sub_rn", "mul_rn"}
# ... and on integer arguments
_MATH_INT = {"abs": "math.absi", "popc": "math.ctpop", "clz": "math.ctlz", "brev": "llvm.bitreverse"}

_TYPES = {"i1": core.int1, "i16": core.int16, "i32": core.int32, "i64": core.int64, "u32": core.uint32,
          "u64": core.uint64, "f16": core.float16, "bf16": core.bfloat16, "f32": core.float32, "f64": core.float64}


def _parse() -> dict[str, list[tuple[tuple[Any, ...], Any]]]:
    out: dict[str, list[tuple[tuple[Any, ...], Any]]] = {}
    for line in _SIGNATURES.strip().splitlines():
        name, _, rest = line.strip().partition(": ")
        variants = []
        for v in rest.split("; "):
            args, _, ret = v.partition(" > ")
            variants.append((tuple(_TYPES[a] for a in args.split()), _TYPES[ret]))
        out[name] = variants
    return out


SIGNATURES = _parse()


def _dispatch(name: str, args: tuple, s: Any) -> Any:
    variants = SIGNATURES[name]
    vals = [s.to_tensor(_unwrap(a)) for a in args]
    if len(vals) != len(variants[0][0]):
        raise CompileTimeError(f"libdevice.{name} takes {len(variants[0][0])} argument(s), got {len(vals)}")
    types = tuple(v.dtype for v in vals)
    match = [ret for arg_types, ret in variants if arg_types == types]
    if not match:
        accepted = ", ".join("(" + ", ".join(str(t) for t in a) + ")" for a, _ in variants)
        raise CompileTimeError(f"libdevice.{name} has no variant for ({', '.join(str(t) for t in types)}); it "
                               f"accepts {accepted}: convert the arguments, e.g. x.to(tl.float32)")
    ret = match[0]
    if len(vals) > 1:
        vals = list(s.broadcast_tensors(*vals))
    op = (_MATH_FLOAT if types[0].is_floating() else _MATH_INT).get(name)
    if name == "pow":
        return s.libdevice_op("math.fpowi" if types[1].is_int() else "math.powf", vals, ret)
    if op in ("math.ctlz", "math.ctpop") and types[0] != ret:
        return s.cast(s.unary_math(op, vals[0], float_only=False), ret)
    if op is not None and not op.startswith("llvm.") and len(set(types)) == 1:
        return s.libdevice_op(op, vals, ret, rounded_alone=name in _ROUNDED_ALONE)
    return s.extern_elementwise("libdevice", "", vals, _variant(name, types), ret, True)


_CODES = {"int1": "i1", "int16": "i16", "int32": "i32", "int64": "i64", "uint32": "u32", "uint64": "u64",
          "fp16": "f16", "bf16": "bf16", "fp32": "f32", "fp64": "f64"}


def _variant(name: str, types: tuple) -> str:
    """The ``symbol`` of ``tt.extern_elementwise``: the function and its argument types, e.g. ``mulhi_u32_u32``
    (IR integer types carry no signedness, and some variants differ only in it)."""
    return name + "_" + "_".join(_CODES[t.name] for t in types)


def _make(name: str) -> Any:
    def fn(*args, _semantic=None):
        return _dispatch(name, args, _semantic)
    fn.__name__ = name
    variants = "; ".join("(" + ", ".join(str(t) for t in a) + ") -> " + str(r) for a, r in SIGNATURES[name])
    fn.__doc__ = f"libdevice {name}: {variants}"
    return builtin(fn)


for _name in SIGNATURES:
    globals()[_name] = _make(_name)
del _name

__all__ = sorted(SIGNATURES)
