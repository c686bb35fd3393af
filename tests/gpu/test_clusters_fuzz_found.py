"""The cluster split (``num_ctas > 1``) under the differential fuzzer (the gpu-emu plugin file's ctas2/ctas4
variants, ``TRITIUM_EMULATOR_NUM_CTAS``): the knob those variants set, and the minimal reproducers of what the
fuzzer found, each on the GPU emulator against what one CTA computes."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium import knobs


@triton.jit
def _dot(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.dot(tl.load(a_ptr + rm[:, None] * BK + rk[None, :]), tl.load(b_ptr + rk[:, None] * BN + rn[None, :]))
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


@pytest.mark.parametrize("ctas", [2, 4])
def test_knob_gives_num_ctas_to_kernels_launched_without_one(emulator, ctas):
    BM, BN, BK = 32, 64, 16
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((BM, BK)).astype(np.float32), rng.standard_normal((BK, BN)).astype(np.float32)
    with knobs.compilation.scope():
        knobs.compilation.emulator_num_ctas = ctas
        c = np.zeros((BM, BN), np.float32)
        k = _dot[(1, )](a, b, c, BM, BN, BK)
        np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
        assert f"tritium.cluster_split = {ctas}" in k.asm["ttgir"]
        # a launch's own num_ctas wins
        k1 = _dot[(1, )](a, b, c, BM, BN, BK, num_ctas=1)
        assert "tritium.cluster_split" not in k1.asm["ttgir"]
    k0 = _dot[(1, )](a, b, c, BM, BN, BK)
    assert "tritium.cluster_split" not in k0.asm["ttgir"]
