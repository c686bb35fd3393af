"""How a backend's result is compared with the interpreter's: the one table of tolerances.

Every generated statement names a class from :data:`TABLE`; a stored result is compared under its class.

- ``exact``: bit for bit. Integer arithmetic (wrapping, as Triton's ``arith`` ops define it), comparisons,
  casts, bitcasts, shifts, ``tl.where``, min/max and their reductions, integer sums and dots, and every float
  operation IEEE 754 rounds exactly once (``+ - *``, ``div_rn``, ``sqrt_rn``, fp64 ``/``, ``fmod``, floor,
  ceil, conversions with their rounding mode). Two policies apply to floats: any NaN equals any NaN (Triton
  leaves NaN payloads unspecified; the generator never bitcasts a NaN to an integer), and -0.0 differs from
  0.0 (the sign of zero is exactly defined for these operations). Kernels are compiled with
  ``enable_fp_fusion=False``: Triton lets a backend contract ``a * b + c`` into one FMA, which changes the last
  bit, and the interpreter never contracts.
- ``zero_sign``: exact, except that -0.0 equals 0.0 (results whose zero sign depends on an order of
  evaluation Triton does not fix).
- ``fdiv``: float32 ``/`` (also float16/bfloat16, which divide in float32): Triton lowers it to a division
  that may be 2 ulp off (GPUs' fast full-range division); ``tl.div_rn`` is the exact one.
- ``ulp_*``: transcendental functions (``tl.exp``, ``log``, ``sin``...): within N units in the last place of
  the result type, counted on the ordered integer line of float bit patterns (so +-inf is one ulp past the
  largest finite value and -0.0/0.0 are 0 ulp apart). Triton maps them to fast approximations on GPUs.
  Both NaN or neither.
- ``sum``: float sums and cumulative sums, whose order of additions Triton leaves to the backend:
  ``|got - ref| <= 2 * (K + 1) * eps * S`` where K is the number of terms, eps the result type's machine
  epsilon and S the same reduction over ``|x|`` (computed by the kernel itself, the "scale"). A NaN scale
  (a NaN term) needs a NaN result; an infinite or near-overflow scale (an infinite term, or an order that
  may overflow) is not compared.
- ``prod``: float cumulative products: the same with S the product of ``|x|``, plus an absolute slack of
  K subnormal steps (a product that underflows loses its relative precision). A NaN or infinite S is not
  compared: an underflow to 0 met by an infinity gives NaN in one order and +-inf in another.
- ``dot_ieee``, ``dot_tf32``, ``dot_tf32x3``: float dots, like ``sum`` with K the reduction length plus
  an accumulator; tf32 rounds each input to 10 mantissa bits (relative 2^-11 per factor), tf32x3 keeps about
  fp32's precision.
- ``aux``: a scale itself: stored, never compared.

Zero signs Triton leaves open are made definite in the kernel instead of compared loosely: ``tl.maximum`` /
``tl.minimum`` with the default ``propagate_nan`` (LLVM's maxnum/minnum: either zero of a +0/-0 tie) and float
max/min reductions are followed by ``+ 0.0``, which turns -0.0 into 0.0 and leaves every other value alone, so
the result stays ``exact`` and may feed later operations.

Kept out of the generated kernels by choice (a documented limit, not Triton's semantics): integers wider than
16 bits converted straight to bfloat16 (a backend may round twice, through float32; the interpreter's README
lists it as a known difference). ``tl.sin``/``tl.cos`` take any argument, however large: Triton's result is the
math library's, right over the whole float range, and ``ulp_trig`` holds there.

Not compared at all, because Triton leaves them undefined, and therefore never generated: out-of-range
float-to-int casts, integer division or remainder by 0 and signed MIN / -1, shifts by the width or more,
argmax/argmin over NaN, NaN payloads, reads of masked-off lanes without ``other``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import types as T


@dataclass(frozen=True)
class Tol:
    kind: str              # "exact", "ulp", "bound", "skip"
    ulps: int = 0
    zero_sign: bool = True  # -0.0 and 0.0 differ
    rel: float = 0.0        # extra relative error per term (tf32 inputs)
    doc: str = ""


TABLE = {
    "exact": Tol("exact", doc="bit for bit; NaN == NaN; -0.0 != 0.0"),
    "zero_sign": Tol("exact", zero_sign=False, doc="bit for bit but -0.0 == 0.0"),
    "fdiv": Tol("ulp", 2, doc="fp32 '/': 2 ulp"),
    "ulp_exp": Tol("ulp", 4, doc="exp, exp2: 4 ulp"),
    "ulp_log": Tol("ulp", 4, doc="log, log2: 4 ulp"),
    "ulp_trig": Tol("ulp", 4, doc="sin, cos: 4 ulp"),
    "ulp_sqrt": Tol("ulp", 2, doc="tl.sqrt (approximate on GPUs): 2 ulp"),
    "ulp_rsqrt": Tol("ulp", 4, doc="rsqrt: 4 ulp"),
    "ulp_erf": Tol("ulp", 4, doc="erf: 4 ulp"),
    "sum": Tol("bound", doc="2 (K+1) eps S"),
    "prod": Tol("bound", doc="2 (K+1) eps S + K subnormal steps"),
    "dot_ieee": Tol("bound", doc="2 (K+1) eps S"),
    "dot_tf32": Tol("bound", rel=2.0 ** -10, doc="(2 (K+1) eps + 2^-10) S"),
    "dot_tf32x3": Tol("bound", rel=2.0 ** -20, doc="(2 (K+1) eps + 2^-20) S"),
    "aux": Tol("skip", doc="a scale: not compared"),
}


def _ordered(a: np.ndarray) -> np.ndarray:
    """Float bit patterns mapped onto a line where adjacent floats are adjacent integers (+0 and -0 both 0)."""
    bits = a.view({2: np.int16, 4: np.int32, 8: np.int64}[a.itemsize]).astype(np.int64)
    mag = bits & ((1 << (8 * a.itemsize - 1)) - 1)
    return np.where(bits < 0, -mag, mag)


def _eps(d: T.DType) -> float:
    return 2.0 ** -T.finfo(d)[3]


def mismatches(cls: str, d: T.DType, ref: np.ndarray, got: np.ndarray, scale: np.ndarray | None = None,
               k: int = 1) -> np.ndarray:
    """A boolean array: where ``got`` is not acceptable as ``ref`` under tolerance class ``cls``."""
    tol = TABLE[cls]
    if tol.kind == "skip":
        return np.zeros(ref.shape, bool)
    if not d.is_float:
        return ref != got
    raw_ref, raw_got = ref, got
    if d.name == "bfloat16":
        ref, got = T.bf16_to_f32(ref), T.bf16_to_f32(got)
        if scale is not None:
            scale = T.bf16_to_f32(scale)
    ref_nan, got_nan = np.isnan(ref), np.isnan(got)
    if tol.kind == "exact":
        same = ref.view(f"u{ref.itemsize}") == got.view(f"u{got.itemsize}")
        if not tol.zero_sign:
            same |= (ref == 0) & (got == 0)
        return ~(same | (ref_nan & got_nan))
    if tol.kind == "ulp":
        # on the result type's own grid (bfloat16: its 16-bit patterns)
        dist = np.abs(_ordered(raw_ref) - _ordered(raw_got))
        return np.where(ref_nan | got_nan, ref_nan != got_nan, dist > tol.ulps)
    # bound: error proportional to the magnitude of the terms
    s = np.abs(scale.astype(np.float64))
    mx, _, sub, _ = T.finfo(d)
    bound = (2 * (k + 1) * _eps(d) + 2 * tol.rel) * s
    if cls == "prod":
        bound = bound + k * sub
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(ref.astype(np.float64) - got.astype(np.float64))
        skip = ~np.isfinite(s) | (s > mx / 4)
        bad = diff > bound
    # a NaN scale means a NaN term for sums, but for products also 0 * inf after an underflow, which depends on
    # the order of multiplication: not compared
    nan_means_nan = np.isnan(s) & (cls != "prod")
    skip = skip | (np.isnan(s) & (cls == "prod"))
    bad = np.where(nan_means_nan, ~(ref_nan & got_nan), np.where(skip, False, bad | (ref_nan != got_nan)))
    return bad
