"""float32 math functions (the ones the CPU backend computes with its own float32 code rather than libm in
double) within CUDA's documented single-precision maximum ulp errors over their whole domains: log-spaced
magnitudes from the smallest subnormal to the largest finite, both signs, at every ISA level. References are
numpy's float64 functions (their error is ~2^-29 float32 ulp, negligible here); results that round into the
subnormals are judged with the subnormal spacing."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium.language.extra import libdevice
from tritium_cpu import isa

LEVELS = isa.levels_to_check()


def _erf64(x: np.ndarray) -> np.ndarray:
    import math
    return np.array([math.erf(v) for v in x.tolist()])

# function -> (float64 reference, CUDA's documented bound in ulp)
_BOUNDS = {"exp": (np.exp, 2), "exp2": (np.exp2, 2), "log": (np.log, 1), "log2": (np.log2, 1),
           "sin": (np.sin, 2), "cos": (np.cos, 2), "tanh": (np.tanh, 2), "rsqrt": (lambda x: 1 / np.sqrt(x), 2),
           "erf": (lambda x: _erf64(x), 2)}


@triton.jit
def _all(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    tl.store(out_ptr + offs, tl.exp(x), mask=mask)
    tl.store(out_ptr + n + offs, tl.exp2(x), mask=mask)
    tl.store(out_ptr + 2 * n + offs, tl.log(x), mask=mask)
    tl.store(out_ptr + 3 * n + offs, tl.log2(x), mask=mask)
    tl.store(out_ptr + 4 * n + offs, tl.sin(x), mask=mask)
    tl.store(out_ptr + 5 * n + offs, tl.cos(x), mask=mask)
    tl.store(out_ptr + 6 * n + offs, libdevice.tanh(x), mask=mask)
    tl.store(out_ptr + 7 * n + offs, tl.rsqrt(x), mask=mask)
    tl.store(out_ptr + 8 * n + offs, tl.erf(x), mask=mask)


def _inputs() -> np.ndarray:
    rng = np.random.default_rng(3)
    fi = np.finfo(np.float32)
    lo, hi = np.log(float(fi.smallest_subnormal)), np.log(float(fi.max))
    mags = np.exp(np.concatenate([np.linspace(lo, hi, 6000), rng.uniform(lo, hi, 6000)]))
    # and dense around the points where the reductions switch or the results over/underflow
    near = np.concatenate([np.linspace(-104, 89, 4000), np.linspace(-151, 129, 2000), np.linspace(0.5, 2, 2000),
                           np.linspace(-10, 10, 2000)])
    x = np.concatenate([mags, -mags, near]).astype(np.float32)
    return np.unique(x[np.isfinite(x)])


def _ulp_error(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    both_special = (np.isnan(got) & np.isnan(want)) | (np.isinf(want) & (got == want))
    want32 = want.astype(np.float32)
    with np.errstate(all="ignore"):
        e = np.floor(np.log2(np.abs(want)))
        ulp = np.exp2(np.maximum(e, -126) - 23)
        err = np.abs(got.astype(np.float64) - want) / ulp
    # a true result beyond the largest float32 is right as inf or as the largest finite value
    overflow = np.isinf(want32) & np.isfinite(want) & (np.abs(got) >= np.finfo(np.float32).max)
    err[both_special | (want == 0) & (got == 0) | overflow] = 0
    return np.where(np.isnan(err), np.inf, err)


@pytest.mark.parametrize("lvl", LEVELS)
def test_float32_math_whole_domain(lvl):
    x = _inputs()
    out = np.empty((len(_BOUNDS), x.size), np.float32)
    with isa.compiling_for(lvl):
        _all[(triton.cdiv(x.size, 1024), )](x, out, x.size, 1024)
    bad = []
    with np.errstate(all="ignore"):
        for k, (name, (ref, bound)) in enumerate(_BOUNDS.items()):
            err = _ulp_error(out[k], ref(x.astype(np.float64)))
            i = int(np.argmax(err))
            if err[i] > bound:
                bad.append(f"{name}({x[i]!r}) = {out[k][i]!r}: {err[i]:.3g} ulp (CUDA: {bound})")
    assert not bad, "; ".join(bad)
