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


# -- what the fuzzer found ----------------------------------------------------------------------------------------
# Fuzzing gpu-emu:ctas2/ctas4 (seed 10, 665 kernels each, 157 of them split) found no wrong answer of the split;
# both mismatches were the oracle's (tests/interpreter/test_same_width_sign_casts.py). The shrunk kernel of the
# first, widened so that the split takes it, checks the emulator's split and the interpreter against numpy.
@triton.jit
def _int8_dot_of_uint8(x_ptr, y_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(x_ptr + rm[:, None] * BK + rk[None, :]).to(tl.int8)     # uint8 -> int8: no op
    b = tl.load(y_ptr + rk[:, None] * BN + rn[None, :])
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], tl.dot(a, b))


@pytest.mark.parametrize("ctas", [2, 4])
def test_int8_dot_of_uint8_split_and_interpreted(emulator, ctas):
    BM, BN, BK = 16, 64, 32
    rng = np.random.default_rng(10000311)
    x = rng.integers(0, 256, (BM, BK)).astype(np.uint8)
    y = rng.integers(-128, 128, (BK, BN)).astype(np.int8)
    want = (x.view(np.int8).astype(np.int64) @ y.astype(np.int64)).astype(np.int32)
    c = np.zeros((BM, BN), np.int32)
    k = _int8_dot_of_uint8[(1, )](x, y, c, BM, BN, BK, num_ctas=ctas)
    assert f"tritium.cluster_split = {ctas}" in k.asm["ttgir"]
    np.testing.assert_array_equal(c, want)
    ci = np.zeros((BM, BN), np.int32)
    with knobs.runtime.scope():
        knobs.runtime.interpret = True
        _int8_dot_of_uint8[(1, )](x, y, ci, BM, BN, BK)
    np.testing.assert_array_equal(ci, want)
