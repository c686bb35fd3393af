"""examples/03's pointer matmul at the configurations an autotuner picks among, on an NVIDIA GPU of sm_90 or newer,
against numpy in float64: 64-row tiles at 8 warps (two warpgroups splitting N, wgmma_split), B stored (K, N) and
as the transpose of an (N, K) matrix (its stage then K-major), edge tiles and K not a multiple of BLOCK_K, and
the fence after each cp.async wait on and off (TRITIUM_NVIDIA_CP_ASYNC_FENCE). Skipped without such a GPU
(tests/nvidia_compile/test_matmul_configs_ptx.py checks the PTX everywhere)."""
from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest


@pytest.fixture
def hopper(cuda):
    import torch
    if torch.cuda.get_device_capability()[0] < 9:
        pytest.skip("wgmma needs an sm_90 GPU")
    return cuda


def _ex03():
    path = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "03-matrix-multiplication.py")
    spec = importlib.util.spec_from_file_location("ex03_configs_gpu", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


CONFIGS = [(64, 128, 32, 8, 3), (64, 256, 32, 8, 3), (64, 128, 64, 8, 4), (64, 256, 64, 8, 3), (64, 64, 32, 8, 3),
           (128, 128, 64, 8, 3), (128, 128, 32, 4, 4), (64, 256, 32, 4, 4)]


@pytest.mark.parametrize("fence", [True, False])
@pytest.mark.parametrize("b_t", [False, True])
@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
@pytest.mark.parametrize("cfg", CONFIGS)
def test_pointer_matmul_configs(hopper, cfg, dt, b_t, fence):
    import torch
    from tritium_nvidia.knobs import nvidia
    BM, BN, BK, warps, stages = cfg
    M, N, K = 200, 328, 100 if not b_t else 104      # edge tiles along M and N; K not a multiple of BLOCK_K
    g = torch.Generator(device="cpu").manual_seed(sum(cfg) + b_t)
    tdt = getattr(torch, dt)
    a = torch.randn(M, K, generator=g).to(tdt).cuda()
    b = (torch.randn(N, K, generator=g).to(tdt).cuda().T if b_t else torch.randn(K, N, generator=g).to(tdt).cuda())
    c = torch.full((M, N), float("nan"), device="cuda", dtype=tdt)
    with nvidia.scope():
        nvidia.cp_async_fence = fence
        _ex03().matmul(a, b, c, BM, BN, BK, num_warps=warps, num_stages=stages)
    torch.cuda.synchronize()
    ref = a.double().cpu().numpy() @ b.double().cpu().numpy()
    np.testing.assert_allclose(c.double().cpu().numpy(), ref, rtol=2e-2, atol=8e-2 if dt == "bfloat16" else 3e-2)
