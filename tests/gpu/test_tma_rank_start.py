"""Descriptor stores at a start that may be negative: a bulk tensor store with a negative box coordinate is an
illegal instruction on sm_90 (Triton 3.6's kernels fault there too), so such a store checks its start when the
program runs and copies the block out element by element when a coordinate is negative (descriptor_store.py,
descriptor_fallback.py). With every rank's TMA (the default) and without it (TRITIUM_NVIDIA_TMA_RANKS=0: 2-D
stores only), 2-D blocks shifted partly before the tensor's first row and column, and partly past its end.
Runs on the GPU emulator and on an NVIDIA GPU."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium.tools.tensor_descriptor import TensorDescriptor

M, N, BM, BN = 24, 64, 8, 32


@triton.jit
def _shift_own(x_ptr, y_ptr, m, n, stride, om, on, BM: tl.constexpr, BN: tl.constexpr):
    pm, pn = tl.program_id(0) * BM, tl.program_id(1) * BN
    v = tl.load(x_ptr + (pm + tl.arange(0, BM))[:, None] * stride + pn + tl.arange(0, BN)[None, :])
    tl.make_tensor_descriptor(y_ptr, [m, n], [stride, 1], [BM, BN]).store([om + pm, on + pn], v)


@triton.jit
def _shift_host(x_ptr, y_desc, stride, om, on, BM: tl.constexpr, BN: tl.constexpr):
    pm, pn = tl.program_id(0) * BM, tl.program_id(1) * BN
    v = tl.load(x_ptr + (pm + tl.arange(0, BM))[:, None] * stride + pn + tl.arange(0, BN)[None, :])
    y_desc.store([om + pm, on + pn], v)


def _want(x, om, on, sentinel):
    want = np.full_like(x, sentinel)
    for r in range(M):
        for c in range(N):
            if 0 <= r + om < M and 0 <= c + on < N:
                want[r + om, c + on] = x[r, c]
    return want


@pytest.mark.parametrize("every_rank", [True, False], ids=["every-rank", "2d-only"])
@pytest.mark.parametrize("mode", ["own", "host"])
@pytest.mark.parametrize("name", ["float32", "float16"])
@pytest.mark.parametrize("om,on", [(-8, 0), (0, -32), (-3, -32), (5, 32), (-16, 16)])
def test_store_at_a_start_that_may_be_negative(dev, every_rank, mode, name, om, on):
    from tritium_nvidia.knobs import nvidia
    dtype = np.dtype(name)
    rng = np.random.default_rng(abs(om) * 100 + abs(on))
    x = rng.integers(-20, 20, (M, N)).astype(dtype)
    y = np.full((M, N), np.nan, dtype)
    dx, dy = dev.put(x), dev.put(y)
    grid = (M // BM, N // BN)
    with nvidia.scope():
        nvidia.tma_ranks = every_rank
        if mode == "host":
            k = _shift_host[grid](dx, TensorDescriptor(dy, [M, N], [N, 1], [BM, BN]), N, om, on, BM=BM, BN=BN)
        else:
            k = _shift_own[grid](dx, dy, M, N, N, om, on, BM=BM, BN=BN)
    got = dev.get(dy)
    if dev.name == "cuda":
        from tritium.runtime.driver import driver
        if 90 <= int(driver.active.get_current_target().arch) < 100:
            # the copy engine's store where the start is inside the tensor, the checked loop elsewhere
            assert "cp.async.bulk.tensor.2d.global.shared::cta" in k.asm["ptx"]
    np.testing.assert_array_equal(got, _want(x, om, on, np.nan))
