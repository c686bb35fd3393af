"""Elementwise operations on :class:`~.values.V`, with LLVM's semantics on the host CPU (what the compiled
CPU backend produces): integers wrap, division by zero divides by 1 instead of trapping, float-to-int
conversions saturate, shifts by the bit width or more give 0 (or the sign for arithmetic right shifts),
and every result is rounded to its own type.

Integer arrays may carry either signedness (``tl.tensor`` reinterprets int32 as uint32 without touching
the handle); the op name decides, as it does in the IR.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ..language import core as tl
from . import floats, libdevice_f64
from .values import SIGNED, UNSIGNED, V, as_type, signed, storage, unsigned

# -- floats --------------------------------------------------------------------------------------------


def fround(a: np.ndarray, elt: tl.dtype) -> np.ndarray:
    """Round a float result computed in numpy to element type ``elt``."""
    name = elt.name
    if name == "bf16":
        return floats.round_bf16(a)
    if elt.is_fp8():
        return floats.f32_to_fp8(np.asarray(a, np.float32), name)
    dt = storage(elt)
    if a.dtype == dt:
        return a
    return floats.to_f16(a) if name == "fp16" else a.astype(dt)


def fvalue(a: np.ndarray, elt: tl.dtype) -> np.ndarray:
    """Float values to compute with (fp8 decoded; bfloat16 containers are float32 already)."""
    if elt.is_fp8():
        return floats.fp8_to_f32(a, elt.name).reshape(a.shape)
    return a


def _erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[np.float64])(x) if x.size else x.astype(np.float64)


def _wide(fn: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
    """Evaluate a transcendental function of float32 in float64 and round once: closer to correctly
    rounded than numpy's float32 kernels (the compiled backend's are within 1 ulp)."""
    def run(*xs: np.ndarray) -> np.ndarray:
        if xs[0].dtype == np.float64:
            return fn(*xs)
        return fn(*[x.astype(np.float64) for x in xs]).astype(xs[0].dtype)
    return run


def zero_order(r: np.ndarray, a: np.ndarray, b: np.ndarray, up: bool) -> np.ndarray:
    """``r`` (a max if ``up``, else a min, of ``a`` and ``b``) with IEEE 754-2019 zeros: -0 < +0."""
    zeros = (a == 0) & (b == 0)
    if not zeros.any():
        return r
    neg = (np.signbit(a) & np.signbit(b)) if up else (np.signbit(a) | np.signbit(b))
    return np.where(zeros, np.where(neg, -np.abs(r), np.abs(r)), r)


def _maximumnum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # tl.maximum/tl.max (arith.maxnumf) as compiled: IEEE maximumNumber, NaN ignored, -0 < +0
    return zero_order(np.fmax(floats.quiet_nans(a), floats.quiet_nans(b)), a, b, True)


def _minimumnum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return zero_order(np.fmin(floats.quiet_nans(a), floats.quiet_nans(b)), a, b, False)


def _minimum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # IEEE 754-2019 minimum: -0 < +0
    r = np.minimum(a, b)
    zeros = (a == 0) & (b == 0)
    return np.where(zeros, np.where(np.signbit(a) | np.signbit(b), -np.abs(r), np.abs(r)), r) if zeros.any() else r


def _maximum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    r = np.maximum(a, b)
    zeros = (a == 0) & (b == 0)
    return np.where(zeros, np.where(np.signbit(a) & np.signbit(b), -np.abs(r), np.abs(r)), r) if zeros.any() else r


_FBIN: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "arith.addf": np.add, "arith.subf": np.subtract, "arith.mulf": np.multiply, "arith.divf": np.true_divide,
    "tt.precise_divf": np.true_divide, "arith.remf": np.fmod, "math.powf": _wide(np.power),
    "math.atan2": _wide(np.arctan2), "math.copysign": np.copysign,
    "arith.minimumf": _minimum, "arith.maximumf": _maximum, "arith.minnumf": _minimumnum,
    "arith.maxnumf": _maximumnum,
}
_FUN: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "arith.negf": np.negative, "math.absf": np.abs, "math.floor": np.floor, "math.ceil": np.ceil,
    "math.sqrt": np.sqrt, "tt.precise_sqrt": np.sqrt, "math.exp": _wide(np.exp), "math.exp2": _wide(np.exp2),
    "math.log": _wide(np.log), "math.log2": _wide(np.log2), "math.sin": _wide(np.sin), "math.cos": _wide(np.cos),
    "math.tanh": _wide(libdevice_f64.tanh), "math.erf": _wide(_erf), "math.trunc": np.trunc,
    "math.round": lambda x: np.where(np.abs(x - np.trunc(x)) >= 0.5, np.trunc(x) + np.sign(x), np.trunc(x)),
    "math.rsqrt": libdevice_f64.rsqrt,
    "math.tan": _wide(np.tan), "math.sinh": _wide(np.sinh), "math.cosh": _wide(libdevice_f64.cosh),
    "math.asin": _wide(np.arcsin), "math.acos": _wide(np.arccos), "math.atan": _wide(np.arctan),
    "math.asinh": _wide(np.arcsinh), "math.acosh": _wide(np.arccosh), "math.atanh": _wide(np.arctanh),
    "math.erfc": _wide(np.vectorize(math.erfc, otypes=[np.float64])), "math.cbrt": _wide(np.cbrt),
    "math.log10": _wide(np.log10), "math.log1p": _wide(np.log1p), "math.expm1": _wide(np.expm1),
    "math.roundeven": np.rint,
}

# -- integers ------------------------------------------------------------------------------------------


def _same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return b if b.dtype == a.dtype else as_type(b, a.dtype)


def _bool_op(fn: Callable, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # i1 arithmetic wraps modulo 2, unlike numpy's logical bool arithmetic
    return (fn(a.astype(np.uint8), b.astype(np.uint8)) & 1).astype(np.bool_)


def _div(a: np.ndarray, b: np.ndarray, signed_op: bool, rem: bool) -> np.ndarray:
    if signed_op:
        a, b = signed(a), signed(b)
        bad = (b == 0) | ((a == np.iinfo(a.dtype).min) & (b == -1))
    else:
        a, b = unsigned(a), unsigned(b)
        bad = b == 0
    # x86 traps where GPUs return garbage; the CPU backend divides by 1 instead, and so do we
    safe = np.where(bad, np.asarray(1, b.dtype), b)
    q = a // safe
    if signed_op:
        # C division truncates toward zero, numpy's floors
        q = q + (((a % safe) != 0) & ((a < 0) != (safe < 0))).astype(q.dtype)
    return a - q * safe if rem else q


def _shift(a: np.ndarray, b: np.ndarray, kind: str) -> np.ndarray:
    bits = a.dtype.itemsize * 8
    amt = unsigned(_same(a, b)).astype(np.uint64)
    big = amt >= bits
    s = np.minimum(amt, bits - 1).astype(a.dtype)
    if kind == "shl":
        return np.where(big, np.asarray(0, a.dtype), np.left_shift(a, s))
    if kind == "shrui":
        ua = unsigned(a)
        return np.where(big, np.asarray(0, ua.dtype), np.right_shift(ua, s.astype(ua.dtype)))
    sa = signed(a)
    return np.right_shift(sa, np.where(big, bits - 1, s).astype(sa.dtype))


_IBIN: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "arith.addi": np.add, "arith.subi": np.subtract, "arith.muli": np.multiply,
    "arith.andi": np.bitwise_and, "arith.ori": np.bitwise_or, "arith.xori": np.bitwise_xor,
}
_ISPECIAL: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "arith.divsi": lambda a, b: _div(a, b, True, False), "arith.divui": lambda a, b: _div(a, b, False, False),
    "arith.remsi": lambda a, b: _div(a, b, True, True), "arith.remui": lambda a, b: _div(a, b, False, True),
    "arith.shli": lambda a, b: _shift(a, b, "shl"), "arith.shrsi": lambda a, b: _shift(a, b, "shrsi"),
    "arith.shrui": lambda a, b: _shift(a, b, "shrui"),
    "arith.maxsi": lambda a, b: np.maximum(signed(a), signed(_same(a, b))),
    "arith.minsi": lambda a, b: np.minimum(signed(a), signed(_same(a, b))),
    "arith.maxui": lambda a, b: np.maximum(unsigned(a), unsigned(_same(a, b))),
    "arith.minui": lambda a, b: np.minimum(unsigned(a), unsigned(_same(a, b))),
}


def binary(name: str, x: V, y: V, ty: Any) -> V:
    elt = ty.scalar
    a, b = x.a, y.a
    if name in _FBIN:
        return V(fround(_FBIN[name](fvalue(a, elt), fvalue(b, elt)), elt), ty)
    if name in _IBIN:
        if a.dtype == np.bool_:
            return V(_bool_op(_IBIN[name], a, b), ty)
        return V(_IBIN[name](a, _same(a, b)), ty)
    fn = _ISPECIAL.get(name)
    if fn is None:
        raise NotImplementedError(f"the interpreter does not implement {name}")
    if a.dtype == np.bool_:
        a, b = a.astype(np.uint8), b.astype(np.uint8)
        return V(fn(a, b).astype(np.bool_), ty)
    return V(fn(a, b), ty)


def unary(name: str, x: V, ty: Any) -> V:
    elt = ty.scalar
    if name in ("math.ctpop", "math.ctlz"):
        return math_op(name, [x], ty)
    if name == "math.absi":
        return V(np.abs(signed(x.a)), ty)
    fn = _FUN.get(name)
    if fn is None:
        raise NotImplementedError(f"the interpreter does not implement {name}")
    return V(fround(fn(fvalue(x.a, elt)), elt), ty)


def math_op(name: str, args: list[V], ty: Any) -> V:
    """The ``math``/``arith`` operations libdevice functions become (``Semantic.libdevice_op``)."""
    if name == "math.fma":
        return fma(*args, ty)
    if len(args) == 1 and (name in _FUN or name == "math.absi"):
        return unary(name, args[0], ty)
    if len(args) == 2 and name in _FBIN:
        return binary(name, args[0], args[1], ty)
    a = args[0].a
    if name in ("math.isnan", "math.isinf", "math.isfinite"):
        return V({"math.isnan": np.isnan, "math.isinf": np.isinf, "math.isfinite": np.isfinite}[name](a), ty)
    if name == "math.fpowi":
        # the exponent becomes the base's type first, as compiled (a large odd int32 may round to even)
        e = signed(args[1].a).astype(a.dtype).astype(np.float64)
        return V(fround(np.power(a.astype(np.float64), e), ty.scalar), ty)
    if name in ("math.ctpop", "math.ctlz"):
        bits = a.dtype.itemsize * 8
        u = unsigned(a).reshape(-1).tolist()
        vals = [bin(v).count("1") if name == "math.ctpop" else bits - int(v).bit_length() for v in u]
        return V(np.array(vals, dtype=np.int64).reshape(a.shape).astype(a.dtype), ty)
    raise NotImplementedError(f"the interpreter does not implement {name}")


def fma(x: V, y: V, z: V, ty: Any) -> V:
    elt = ty.scalar
    if elt.is_fp8():
        r = floats.fma(*(fvalue(v.a, elt) for v in (x, y, z)), "fp32")
        return V(fround(r, elt), ty)
    return V(floats.fma(x.a, y.a, z.a, elt.name), ty)


# -- comparisons ---------------------------------------------------------------------------------------

_ICMP = {"eq": np.equal, "ne": np.not_equal, "slt": np.less, "sle": np.less_equal, "sgt": np.greater,
         "sge": np.greater_equal, "ult": np.less, "ule": np.less_equal, "ugt": np.greater, "uge": np.greater_equal}


def cmpi(pred: str, x: V, y: V, ty: Any) -> V:
    a, b = x.a, _same(x.a, y.a)
    if a.dtype != np.bool_:
        if pred[0] == "u":
            a, b = unsigned(a), unsigned(b)
        elif pred[0] == "s":
            a, b = signed(a), signed(b)
    return V(_ICMP[pred](a, b), ty)


def cmpf(pred: str, x: V, y: V, ty: Any, elt: tl.dtype) -> V:
    a, b = fvalue(x.a, elt), fvalue(y.a, elt)
    if pred in ("false", "true"):
        return V(np.full(np.broadcast_shapes(a.shape, b.shape), pred == "true"), ty)
    unordered = np.isnan(a) | np.isnan(b)
    if pred == "ord":
        return V(~unordered, ty)
    if pred == "uno":
        return V(unordered, ty)
    base = {"eq": np.equal, "gt": np.greater, "ge": np.greater_equal, "lt": np.less, "le": np.less_equal,
            "ne": np.not_equal}[pred[1:]]
    r = base(a, b)
    # numpy's comparisons are false on nan except !=, which is true: fix up the ordered/unordered variants
    if pred[0] == "o":
        r = r & ~unordered if pred == "one" else r
    else:
        r = r | unordered
    return V(r, ty)


# -- casts ---------------------------------------------------------------------------------------------

def _f2i(a: np.ndarray, dt: np.dtype) -> np.ndarray:
    """Saturating float -> integer (llvm.fpto[su]i.sat): nan -> 0, out of range -> the nearest bound."""
    a = a.astype(np.float64) if a.dtype != np.float64 else a
    info = np.iinfo(dt)
    lo, hi = float(info.min), float(info.max)
    t = np.trunc(a)
    ok = (t >= lo) & (t < hi + 1.0) if info.bits < 64 else (t >= lo) & (t < 2.0 ** (info.bits - (info.min < 0)))
    r = np.where(ok, t, 0.0).astype(dt)
    r = np.where(t >= hi, np.asarray(info.max, dt), r)
    r = np.where(t <= lo, np.asarray(info.min, dt), r)
    return np.where(np.isnan(a), np.asarray(0, dt), r)


def _i2f(a: np.ndarray, dst: tl.dtype) -> np.ndarray:
    name = dst.name
    if name == "bf16":
        return floats.round_bf16(a.astype(np.float64))
    return a.astype(storage(dst))


def cast(name: str, x: V, ty: Any) -> V:
    dst = ty.scalar
    src = x.type.scalar if x.type is not None else None
    a = x.a
    if name in ("arith.truncf", "arith.extf"):
        if dst.name == "bf16":
            return V(floats.round_bf16(a), ty)
        if dst.name == "fp16":
            return V(floats.to_f16(a), ty)
        if a.dtype == np.float16:
            return V(floats.from_f16(a, storage(dst)), ty)
        return V(a.astype(storage(dst)), ty)
    if name == "arith.extsi":
        return V(signed(a).astype(storage(dst)), ty) if a.dtype != np.bool_ else V(-a.astype(storage(dst)), ty)
    if name == "arith.extui":
        return V((unsigned(a) if a.dtype != np.bool_ else a).astype(storage(dst)), ty)
    if name == "arith.trunci":
        if dst.is_bool():
            return V((a & 1).astype(np.bool_), ty)
        return V(a.astype(storage(dst)), ty)
    if name in ("arith.fptosi", "arith.fptoui"):
        dt = SIGNED if name == "arith.fptosi" else UNSIGNED
        r = _f2i(fvalue(a, src) if src is not None else a, dt[storage(dst).itemsize])
        return V(as_type(r, storage(dst)), ty)
    if name == "arith.sitofp":
        return V(_i2f(signed(a) if a.dtype != np.bool_ else -a.astype(np.int8), dst), ty)
    if name == "arith.uitofp":
        return V(_i2f(unsigned(a) if a.dtype != np.bool_ else a.astype(np.uint8), dst), ty)
    raise NotImplementedError(f"the interpreter does not implement the cast {name}")


def to_bits(a: np.ndarray, elt: tl.dtype) -> np.ndarray:
    """The encodings of ``elt`` values as unsigned integers of the same width."""
    if elt.name == "bf16":
        return floats.bf16_to_bits(a).reshape(a.shape)
    if elt.is_ptr():
        return a.view(np.uint64)
    if a.dtype == np.bool_:
        return a.astype(np.uint8)
    return a.view(UNSIGNED[a.dtype.itemsize])


def from_bits(bits: np.ndarray, elt: tl.dtype) -> np.ndarray:
    if elt.name == "bf16":
        return floats.bits_to_bf16(bits).reshape(bits.shape)
    if elt.is_ptr():
        return bits.view(np.int64)
    if elt.is_bool():
        return (bits & 1).astype(np.bool_)
    return bits.view(storage(elt))


def fp_to_fp(x: V, ty: Any, rounding: str) -> V:
    """tt.fp_to_fp: conversions to and from float8, and round-toward-zero narrowing, in the same steps
    as the CPU backend (through float32, and float64 -> float32 first rounded the requested way)."""
    src, dst = x.type.scalar, ty.scalar
    a = x.a
    rtz = rounding == "rtz"
    if src.is_fp8():
        a, src = floats.fp8_to_f32(a, src.name).reshape(a.shape), tl.float32
    if dst.is_fp8():
        if src.name == "fp64":
            a = floats.f64_to_f32_rtz(a) if rtz else a.astype(np.float32)
        elif src.name != "fp32" and src.name != "bf16":
            a = a.astype(np.float32)
        return V(floats.f32_to_fp8(a, dst.name, rtz).reshape(a.shape), ty)
    if src.name == dst.name:
        return V(a, ty)
    if rtz:
        if src.name == "fp64":
            a = floats.f64_to_f32_rtz(a)
            if dst.name == "fp32":
                return V(a, ty)
        if dst.name == "fp16":
            return V(floats.f32_to_f16_rtz(a).reshape(a.shape), ty)
        if dst.name == "bf16":
            return V(floats.f32_to_bf16_rtz(a).reshape(a.shape), ty)
    if dst.name == "bf16":
        return V(floats.round_bf16(a), ty)
    return V(a.astype(storage(dst)), ty)


def umulhi(x: V, y: V, ty: Any) -> V:
    a, b = unsigned(x.a), unsigned(_same(x.a, y.a))
    if a.dtype.itemsize == 4:
        r = ((a.astype(np.uint64) * b.astype(np.uint64)) >> np.uint64(32)).astype(np.uint32)
    else:
        m = np.uint64(0xFFFFFFFF)
        a_lo, a_hi, b_lo, b_hi = a & m, a >> np.uint64(32), b & m, b >> np.uint64(32)
        lo_lo = a_lo * b_lo
        mid1 = a_hi * b_lo + (lo_lo >> np.uint64(32))
        mid2 = a_lo * b_hi + (mid1 & m)
        r = a_hi * b_hi + (mid1 >> np.uint64(32)) + (mid2 >> np.uint64(32))
    return V(as_type(r, x.a.dtype), ty)
