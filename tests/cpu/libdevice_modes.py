"""What the libdevice accuracy tests share: a launch in a given mode (an ISA level of the CPU backend, or the
interpreter, which is the fuzzer's oracle and must meet the same bounds) and the float64 ulp error against
mpmath's reference values."""
from __future__ import annotations

import math

import numpy as np
from tritium import knobs
from tritium_cpu import isa


def launch(mode: str, kernel, grid: tuple, *args) -> None:
    """``kernel[grid](*args)`` compiled for the ISA level ``mode``, or in the interpreter for "interpreter"."""
    if mode == "interpreter":
        with knobs.runtime.scope():
            knobs.runtime.interpret = False
            kernel.interpret = True
            try:
                kernel[grid](*args)
            finally:
                kernel.interpret = False
    else:
        with isa.compiling_for(mode):
            kernel[grid](*args)


def ulps64(got: np.ndarray, want) -> np.ndarray:
    """Each float64 result's error in units of the last place of the exact value (mpmath numbers); a zero or
    non-finite reference must be met exactly."""
    import mpmath
    out = []
    for g, r in zip(got, want):
        if r == 0 or not mpmath.isfinite(r):
            out.append(0.0 if float(g) == float(r) else math.inf)
            continue
        e = max(int(mpmath.floor(mpmath.log(abs(r), 2))), -1022)
        out.append(float(abs(mpmath.mpf(float(g)) - r) / mpmath.mpf(2) ** (e - 52)))
    return np.array(out)
