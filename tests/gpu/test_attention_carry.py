"""The attention forward of examples/07 with the loop's P @ V left running into the next iteration
(TRITIUM_NVIDIA_CARRY_DOTS, gpu/lower/carry_dot.py) against float64 numpy, over the configurations the shape of
its code depends on: 4 and 8 warps (one or two warpgroups), BLOCK_N 32/64/128, 2 to 4 stages, causal (two loops,
the diagonal one run once when BLOCK_M == BLOCK_N) and not, and a loop of one iteration. On the emulator the
knob changes nothing (its dots are not asynchronous): there it checks the configurations themselves."""
from __future__ import annotations

import importlib.util
import math
import os

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_spec = importlib.util.spec_from_file_location("ex07_carry_gpu", os.path.join(ROOT, "examples", "07-fused-attention.py"))
EX = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(EX)


def _reference(q, k, v, scale, causal):
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    s = q @ np.swapaxes(k, -1, -2) * scale
    if causal:
        n = q.shape[-2]
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


@pytest.mark.parametrize("BM,BN,warps,stages,D,N", [(128, 64, 4, 3, 64, 256), (64, 32, 4, 2, 64, 256),
                                                    (128, 128, 8, 3, 128, 256), (128, 64, 4, 4, 64, 128),
                                                    (64, 64, 4, 3, 32, 64)])
@pytest.mark.parametrize("causal", [False, True])
def test_forward_with_pv_carried(dev, BM, BN, warps, stages, D, N, causal):
    from tritium_nvidia.knobs import nvidia
    Z, H = 1, 2
    scale = 1 / math.sqrt(D)
    rng = np.random.default_rng(BM + BN + D + N + causal)
    q, k, v = (rng.standard_normal((Z, H, N, D)).astype(np.float16) for _ in range(3))
    o = dev.put(np.full_like(q, np.nan))
    m = dev.put(np.full((Z, H, N), np.nan, np.float32))
    st = (H * N * D, N * D, D)
    with nvidia.scope():
        nvidia.carry_dots = True
        EX.attn_fwd[(N // BM, Z * H)](dev.put(q), dev.put(k), dev.put(v), scale, m, o, *st, H, N_CTX=N,
                                      HEAD_DIM=D, BLOCK_M=BM, BLOCK_N=BN, STAGE=3 if causal else 1,
                                      num_warps=warps, num_stages=stages)
    got = dev.get(o).astype(np.float64)
    ref = _reference(q, k, v, scale, causal)
    err = np.linalg.norm(got - ref) / np.linalg.norm(ref)
    assert err < 1e-2, f"relative error {err:.2e}"
