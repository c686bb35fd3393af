"""``x / s`` with ``s`` uniform over the tile is one reciprocal and a multiply per element (codegen/basic.py). Where
1/s is not a normal float (|s| < 2**-126 or > 2**126) that lost the answer: FlagGems' per_token_group_quant_fp8 on
a CPU (its "fp8" falls back to float32) divides by absmax / FLT_MAX, a denormal, and got FLT_MAX (1/s = inf) for
every element where the interpreter and a GPU's div.full.f32 (2 ulp over the full range) give y / s."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl


@triton.jit
def _div_by_scalar(x_ptr, o_ptr, s, N: tl.constexpr):
    r = tl.arange(0, N)
    tl.store(o_ptr + r, tl.load(x_ptr + r) / s)


@pytest.mark.parametrize("s", [2.204052e-39, 1e-45, 1.1e-38, 3e38, 1e38, 0.0, -0.0, np.inf, 3.0])
def test_divisor_outside_the_reciprocal_range(s):
    x = np.array([0.5, -0.25, 0.125, 0.75, 1e-30, 3e38, 0.0, -7.0], np.float32)
    out = np.zeros_like(x)
    _div_by_scalar[(1, )](x, out, s, x.size)
    with np.errstate(all="ignore"):
        want = (x.astype(np.float64) / np.float64(np.float32(s))).astype(np.float32)
    # within 2 ulp of the correctly rounded quotient, as div.full.f32 (denormal results included)
    err = np.abs(out.astype(np.float64) - want.astype(np.float64))
    close = (out == want) | (np.isnan(out) & np.isnan(want)) | (err <= 2 * np.spacing(np.abs(want)))
    assert close.all(), (s, out[~close], want[~close])
