"""Elementwise math and float8 conversions written in LLVM IR, for kernels compiled for the CPU.

Kernels apply these functions inside loops that LLVM's loop vectorizer has to turn into AVX code. A call
to libm (``expf``) stops that, so every float32 function and every conversion here is written out in IR,
branch-free (``select`` instead of control flow; only intrinsics that have vector forms: ``llvm.fma``,
``llvm.rint``, ``llvm.fabs``, ``llvm.copysign``, ``llvm.sqrt``), with ``internal``
linkage and ``alwaysinline`` so that each call dissolves into the loop body before vectorization. The one
exception: sinf/cosf call a ``noinline`` function for |x| >= 2^21 (mathlib_trig.py), which has vector variants
(``vector-function-abi-variant``) that the vectorizers call instead, kept alive until then by ``llvm.used``.

The float64 functions call libm (through LLVM intrinsics where one exists, otherwise a declaration of
the libm symbol): they are not performance critical and libm is accurate. Their code therefore refers to
the external symbols in ``C_SYMBOLS``, which whoever loads the object has to resolve. Only ``erf`` is
declared in the text (``declare double @erf(double) nounwind``); a module that also declares it elsewhere
must keep just one of the two lines.

Public API::

    function_names()      every function the library can define
    library_ir(names)     IR text defining exactly those functions (and what they call)
    signature(name)       (return type, [argument types]) in LLVM syntax
    C_SYMBOLS             the libm functions that code may call

The text never declares intrinsics (LLVM declares a called intrinsic implicitly, and a second ``declare``
of one the embedding module already declares would be an error), uses no attribute groups (whose numbers
could clash), and names everything it defines ``tritium_*``.

Accuracy, measured against float64 references over every float32 input of the stated ranges (the tests
in tests/cpu/test_mathlib.py and, for sin/cos, tests/cpu/test_trig_full_range.py check samples of the same;
sin/cos past 2^21 were measured on 67M random inputs and every input in [2^21, 2^23) and [2^95, 2^97)):

=========================  ==============================================================================
expf, exp2f                <= 0.79 ulp; overflow to inf, underflow through the denormals to 0
logf, log2f                <= 0.68 / 0.80 ulp; denormal inputs; log(0) = -inf, log(x<0) = nan
sinf, cosf                 <= 0.93 ulp for |x| < 2^21; every finite |x| >= 2^21 within 0.5 + 2^-9 ulp (the
                           Payne-Hanek reduction of mathlib_trig.py, rounded once; 0.5 measured); inf, nan -> nan
erff                       absolute error <= 7.1e-8 (1.2 ulp)
tanhf                      <= 1.35 ulp (relative error <= 1.5e-7)
rsqrtf                     1/sqrt(x): sqrt and division each correctly rounded
=========================  ==============================================================================

The float32 code assumes the target has FMA (x86-64-v3 and later, any AArch64): without it llvm.fma
becomes a call to fmaf, which is still correct but no longer vectorizes.

Float8 formats (stored as i8), decoding exact and narrowing round-to-nearest-even, matching torch's
casts bit for bit where torch has the type:

=========  =====================  ====  ===================================================================
name       torch dtype            bias  specials
=========  =====================  ====  ===================================================================
fp8e4nv    float8_e4m3fn          7     no inf; 0x7f/0xff nan; max 448; overflow and inf saturate to
                                        +-448, nan -> 0x7f (sign kept)
fp8e5      float8_e5m2            15    IEEE-like: overflow -> inf, nan -> 0x7f (sign kept)
fp8e4b8    float8_e4m3fnuz        8     no inf, no -0; 0x80 nan; max 240; |x| >= 248, inf, nan -> 0x80
fp8e5b16   float8_e5m2fnuz        16    no inf, no -0; 0x80 nan; max 57344; |x| >= 61440, inf, nan -> 0x80
fp8e4b15   (Triton only)          15    all 256 encodings finite, max 1.875 (0x7f); narrowing saturates
                                        to +-1.875, nan -> +-1.875 (sign of the nan)
=========  =====================  ====  ===================================================================

fp8e4b15 is Triton's format for GPUs without fp8 hardware. Triton's NVIDIA decoder shifts the bits into
an fp16 and so also reads 0x7f as 1.875; its encoder clamps to 1.75 first and rounds half away from zero
after a round-toward-zero to fp16. We saturate at 1.875 and round to nearest even instead, so that every
encoding round-trips; Triton's own tests treat 0x7f/0xff as reserved and do not check either choice.

The ``_rtz`` narrowings (``fp_downcast_rounding="rtz"``) truncate. A finite value beyond the largest
finite one becomes that largest finite value (as IEEE round-toward-zero does), inf stays inf where the
format has one, becomes nan for the fnuz formats and saturates for e4m3fn and e4b15; nan stays nan.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from functools import partialmethod
from typing import Callable, Iterable, Union

from tritium.llvmir.fp8 import FORMATS, Fp8Format

from . import mathlib_trig as _trig

__all__ = ["C_SYMBOLS", "function_names", "library_ir", "signature"]


# ----------------------------------------------------------------------------------------------------
# A small SSA builder. Writing the functions through it (rather than as IR text) keeps the arithmetic
# readable and lets Python constants be mixed in: an int or float operand takes the type of the other one.
# ----------------------------------------------------------------------------------------------------

_SUFFIX = {"float": "f32", "double": "f64", "half": "f16", "bfloat": "bf16"}


@dataclass(frozen=True)
class _V:
    ref: str
    ty: str


Operand = Union[_V, int, float]


def _const(ty: str, v: Union[int, float]) -> str:
    if ty == "i1":
        return "true" if v else "false"
    if ty.startswith("i"):
        bits = int(ty[1:])
        iv = int(v) & ((1 << bits) - 1)      # bit patterns such as 0x80000000 are written as signed values
        return str(iv - (1 << bits) if iv >> (bits - 1) else iv)
    fv = float(v)
    if ty == "double":
        return "0x%016X" % struct.unpack("<Q", struct.pack("<d", fv))[0]
    if ty == "float":
        f32 = struct.unpack("<f", struct.pack("<f", fv))[0]
        # a constant that float32 cannot hold is a typo in a coefficient table, never intended
        assert f32 == fv or fv != fv, f"{fv!r} is not a float32 value"
        return "0x%016X" % struct.unpack("<Q", struct.pack("<d", f32))[0]
    raise ValueError(f"no constants of type {ty} are needed")


class _Builder:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.calls: set[str] = set()     # library functions this body calls
        self._n = 0
        self.block = "entry"              # the block being written (for phi operands)

    # -- plumbing ----------------------------------------------------------------------------------
    def _emit(self, ty: str, text: str) -> _V:
        name = f"%t{self._n}"
        self._n += 1
        self.lines.append(f"  {name} = {text}")
        return _V(name, ty)

    def _v(self, x: Operand, ty: str) -> _V:
        return x if isinstance(x, _V) else _V(_const(ty, x), ty)

    def _pair(self, a: Operand, b: Operand) -> tuple[_V, _V]:
        ty = a.ty if isinstance(a, _V) else b.ty
        a, b = self._v(a, ty), self._v(b, ty)
        assert a.ty == b.ty, (a, b)
        return a, b

    def _bin(self, op: str, a: Operand, b: Operand) -> _V:
        a, b = self._pair(a, b)
        return self._emit(a.ty, f"{op} {a.ty} {a.ref}, {b.ref}")

    def const(self, ty: str, v: Union[int, float]) -> _V:
        return _V(_const(ty, v), ty)

    # -- arithmetic --------------------------------------------------------------------------------
    fadd = partialmethod(_bin, "fadd")
    fsub = partialmethod(_bin, "fsub")
    fmul = partialmethod(_bin, "fmul")
    fdiv = partialmethod(_bin, "fdiv")
    add = partialmethod(_bin, "add")
    sub = partialmethod(_bin, "sub")
    mul = partialmethod(_bin, "mul")
    and_ = partialmethod(_bin, "and")
    or_ = partialmethod(_bin, "or")
    xor = partialmethod(_bin, "xor")
    shl = partialmethod(_bin, "shl")
    lshr = partialmethod(_bin, "lshr")
    ashr = partialmethod(_bin, "ashr")

    def fneg(self, a: _V) -> _V:
        return self._emit(a.ty, f"fneg {a.ty} {a.ref}")

    def intrinsic(self, name: str, *args: Operand) -> _V:
        ty = next(a.ty for a in args if isinstance(a, _V))
        vs = [self._v(a, ty) for a in args]
        arglist = ", ".join(f"{v.ty} {v.ref}" for v in vs)
        return self._emit(ty, f"call {ty} @llvm.{name}.{_SUFFIX[ty]}({arglist})")

    fma = partialmethod(intrinsic, "fma")
    rint = partialmethod(intrinsic, "rint")
    fabs = partialmethod(intrinsic, "fabs")
    sqrt = partialmethod(intrinsic, "sqrt")
    copysign = partialmethod(intrinsic, "copysign")

    def horner(self, x: _V, coefs: Iterable[float]) -> _V:
        """c0 + x*(c1 + x*(c2 + ...)), one fma per coefficient."""
        cs = list(coefs)
        acc = self.const(x.ty, cs[-1])
        for c in reversed(cs[:-1]):
            acc = self.fma(acc, x, c)
        return acc

    # -- comparisons and selection -----------------------------------------------------------------
    def fcmp(self, pred: str, a: Operand, b: Operand) -> _V:
        a, b = self._pair(a, b)
        return self._emit("i1", f"fcmp {pred} {a.ty} {a.ref}, {b.ref}")

    def icmp(self, pred: str, a: Operand, b: Operand) -> _V:
        a, b = self._pair(a, b)
        return self._emit("i1", f"icmp {pred} {a.ty} {a.ref}, {b.ref}")

    def select(self, c: _V, a: Operand, b: Operand) -> _V:
        a, b = self._pair(a, b)
        return self._emit(a.ty, f"select i1 {c.ref}, {a.ty} {a.ref}, {b.ty} {b.ref}")

    # -- conversions -------------------------------------------------------------------------------
    def cast(self, op: str, a: _V, ty: str) -> _V:
        return self._emit(ty, f"{op} {a.ty} {a.ref} to {ty}")

    bitcast = partialmethod(cast, "bitcast")
    fptosi = partialmethod(cast, "fptosi")
    sitofp = partialmethod(cast, "sitofp")
    fpext = partialmethod(cast, "fpext")
    fptrunc = partialmethod(cast, "fptrunc")
    zext = partialmethod(cast, "zext")
    trunc = partialmethod(cast, "trunc")

    # -- calls -------------------------------------------------------------------------------------
    def call(self, name: str, *args: _V, attrs: str = "") -> _V:
        """Call another function of this library (which is then emitted too); ``attrs``: call-site
        attributes."""
        self.calls.add(name)
        ret = _FUNCS[name].ret
        arglist = ", ".join(f"{a.ty} {a.ref}" for a in args)
        return self._emit(ret, f"call {ret} @{name}({arglist}){' ' + attrs if attrs else ''}")

    # -- control flow (the float32 functions stay branch-free; see mathlib_trig for the one exception) --
    def label(self, name: str) -> None:
        self.lines.append(f"{name}:")
        self.block = name

    def br(self, target: str) -> None:
        self.lines.append(f"  br label %{target}")

    def cond_br(self, c: _V, if_true: str, if_false: str) -> None:
        self.lines.append(f"  br i1 {c.ref}, label %{if_true}, label %{if_false}")

    def phi(self, *incoming: tuple[_V, str]) -> _V:
        ty = incoming[0][0].ty
        return self._emit(ty, f"phi {ty} " + ", ".join(f"[{v.ref}, %{blk}]" for v, blk in incoming))

    def call_extern(self, name: str, ret: str, *args: _V) -> _V:
        arglist = ", ".join(f"{a.ty} {a.ref}" for a in args)
        return self._emit(ret, f"call {ret} @{name}({arglist})")


# ----------------------------------------------------------------------------------------------------
# The registry
# ----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Fn:
    name: str
    ret: str
    args: tuple[str, ...]
    body: Callable[..., _V]
    externs: tuple[str, ...] = ()   # full `declare` lines of libm symbols it calls
    inline: bool = True
    # IR text emitted along with the function (its vector variants) and the names in it to keep alive
    extra: Callable[[], tuple[str, tuple[str, ...]]] | None = None

    @property
    def attrs(self) -> str:
        # a function calling out to libm must not promise memory(none): libm may set errno
        if self.externs:
            return "alwaysinline nounwind"
        return f"{'alwaysinline' if self.inline else 'noinline'} nounwind willreturn nofree nosync memory(none)"


_FUNCS: dict[str, _Fn] = {}


def _define(name: str, ret: str, args: tuple[str, ...], externs: tuple[str, ...] = (), inline: bool = True,
            extra: Callable[[], tuple[str, tuple[str, ...]]] | None = None):
    def register(body: Callable[..., _V]) -> Callable[..., _V]:
        assert name.startswith("tritium_") and name not in _FUNCS
        _FUNCS[name] = _Fn(name, ret, args, body, externs, inline, extra)
        return body
    return register


def _render(fn: _Fn) -> tuple[str, set[str]]:
    b = _Builder()
    params = [_V(f"%a{i}", t) for i, t in enumerate(fn.args)]
    result = fn.body(b, *params)
    assert result.ty == fn.ret, (fn.name, result.ty)
    header = ", ".join(f"{p.ty} {p.ref}" for p in params)
    text = "\n".join([f"define internal {fn.ret} @{fn.name}({header}) {fn.attrs} {{", "entry:", *b.lines,
                      f"  ret {fn.ret} {result.ref}", "}"])
    return text, b.calls


def function_names() -> list[str]:
    """Every function :func:`library_ir` can define."""
    return sorted(_FUNCS)


def signature(name: str) -> tuple[str, list[str]]:
    """``(return type, [argument types])`` of a library function, as LLVM spells the types."""
    fn = _FUNCS[name]
    return fn.ret, list(fn.args)


def library_ir(names: Iterable[str]) -> str:
    """LLVM IR text that defines the named functions and whatever they call, nothing else."""
    pending = list(dict.fromkeys(names))
    unknown = [n for n in pending if n not in _FUNCS]
    if unknown:
        raise KeyError(f"no math library function(s) {', '.join(unknown)}; "
                       f"known: {', '.join(function_names())}")
    done: dict[str, str] = {}
    externs: dict[str, None] = {}
    keep: list[str] = []
    while pending:
        name = pending.pop(0)
        if name in done:
            continue
        text, calls = _render(_FUNCS[name])
        if _FUNCS[name].extra:
            more, names = _FUNCS[name].extra()
            text += "\n\n" + more
            keep += names
        done[name] = text
        externs.update(dict.fromkeys(_FUNCS[name].externs))
        pending += sorted(c for c in calls if c not in done)
    used = [_trig.keep_alive(keep)] if keep else []
    return "\n\n".join([*externs, *used, *done.values()]) + ("\n" if done else "")


def _hex(*xs: str) -> tuple[float, ...]:
    return tuple(float.fromhex(x) for x in xs)


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


for _n in ("exp", "exp2", "log", "log2", "sin", "cos", "tanh"):
    _libm64(_n, intrinsic=_n)
_libm64("erf", symbol="erf")

# The C functions the library's code may end up calling, for whoever loads the object
C_SYMBOLS = frozenset({"exp", "exp2", "log", "log2", "sin", "cos", "tanh", "erf"})


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
    # Past the largest finite value, round-to-nearest does what torch does: inf where the format has one,
    # 0x80 (nan) for the fnuz formats, and saturation for e4m3fn (and e4b15). Truncation never leaves the
    # finite range, so there only inf itself becomes inf (or nan, or the saturated value).
    inf_code = {"fn": fmt.max_code, "ieee": 0x7F & ~((1 << fmt.mbits) - 1), "fnuz": 0x80,
                "finite": fmt.max_code}[fmt.kind]
    over = b.icmp("ugt", code, fmt.max_code)              # inf and nan included
    code = b.select(over, fmt.max_code if rtz else inf_code, code)
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
