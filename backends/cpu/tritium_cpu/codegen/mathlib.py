"""Elementwise math and float8 conversions written in LLVM IR, for kernels compiled for the CPU.

Kernels apply these functions inside loops that LLVM's loop vectorizer has to turn into AVX code. A call
to libm (``expf``) stops that, so every float32 function and every conversion here is written out in IR,
branch-free (``select`` instead of control flow; only intrinsics that have vector forms: ``llvm.fma``,
``llvm.rint``, ``llvm.fabs``, ``llvm.copysign``, ``llvm.sqrt``), with ``internal``
linkage and ``alwaysinline`` so that each call dissolves into the loop body before vectorization. The one
exception: sinf/cosf call a ``noinline`` function for |x| >= 2^21 (mathlib_trig.py), which has vector variants
(``vector-function-abi-variant``) that the vectorizers call instead, kept alive until then by ``llvm.used``.

The float64 functions call libm (through LLVM intrinsics where one exists, otherwise a declaration of
the libm symbol), except ``tanh`` (glibc's is 2 ulp off; CUDA documents 1), which :mod:`.mathlib_f64` writes
out branch-free, to 0.54 ulp measured, so that it also vectorizes. Their code therefore refers to
the external symbols in ``C_SYMBOLS``, which whoever loads the object has to resolve. Only ``erf`` is
declared in the text (``declare double @erf(double) nounwind``); a module that also declares it elsewhere
must keep just one of the two lines.

The functions live in modules by kind, each registering into :mod:`.mathlib_ir` (the SSA builder and the
registry): :mod:`.mathlib_f32` (exp, exp2, log, log2, erf, tanh, rsqrt), :mod:`.mathlib_sincos` (sin, cos; their
large-argument path in :mod:`.mathlib_trig`), :mod:`.mathlib_f64` (float64), :mod:`.mathlib_fp8` (float8 and
round-toward-zero conversions). This module renders them.

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

from typing import Iterable

# the modules that define the functions register them when imported
from . import mathlib_f32, mathlib_f64, mathlib_fp8, mathlib_sincos  # noqa: F401
from . import mathlib_trig as _trig
from .mathlib_f64 import C_SYMBOLS
from .mathlib_ir import _FUNCS, _render

__all__ = ["C_SYMBOLS", "function_names", "library_ir", "signature"]


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
