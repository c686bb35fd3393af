"""float64 ``tanh``, ``cosh`` and ``rsqrt`` in the interpreter, within the 1 ulp CUDA documents (and the CPU
backend meets: ``tritium_cpu.codegen.mathlib_f64``, ``tritium.llvmir.scalar``).

numpy's float64 tanh is up to 1.14 ulp off, glibc's cosh 1.33 near overflow, and 1 / sqrt(x) rounds twice (1.33
ulp). Where long double is x87 extended (64-bit significand, as on x86-64 Linux) or wider, each is computed there
and rounded once: <= 0.5 + 2^-10 ulp, vectorized, and no overflow on the way (cosh(710.47) is finite in extended
range). Where long double is just double (MSVC, Apple silicon), numpy's double functions remain.
"""
from __future__ import annotations

import numpy as np

_F64 = np.dtype(np.float64)
_WIDE = np.finfo(np.longdouble).nmant >= 63


def _via_long_double(fn):
    def run(x: np.ndarray) -> np.ndarray:
        if x.dtype != _F64 or not _WIDE:
            return fn(x)
        with np.errstate(all="ignore"):
            return fn(x.astype(np.longdouble)).astype(np.float64)
    return run


tanh = _via_long_double(np.tanh)
cosh = _via_long_double(np.cosh)


def _recip_sqrt(x: np.ndarray) -> np.ndarray:
    return np.asarray(1, x.dtype) / np.sqrt(x)


#: 1 / sqrt(x); float32 as compiled (two roundings, within rsqrtf's 2 ulp)
rsqrt = _via_long_double(_recip_sqrt)
