"""The fused-attention backward of examples/07 (Triton's tutorial 06 shape: a preprocess kernel, then one
kernel doing dK/dV over query blocks and dQ over key blocks, causal and not) through the GPU lowering, on the
emulator (always) and an NVIDIA GPU, against float64 numpy. Its loops stage the dot operands and also the
row statistics (M, Delta: 1-D loads) through the software pipeline, and read the stages transposed
(``tl.trans(qT)``, ``tl.trans(do)``)."""
from __future__ import annotations

import importlib.util
import math
import os

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_spec = importlib.util.spec_from_file_location("ex07_attention", os.path.join(ROOT, "examples", "07-fused-attention.py"))
EX = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(EX)


def _reference(q, k, v, do, scale, causal):
    q, k, v, do = (x.astype(np.float64) for x in (q, k, v, do))
    s = q @ np.swapaxes(k, -1, -2) * scale
    if causal:
        n = q.shape[-2]
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    o = p @ v
    dv = np.swapaxes(p, -1, -2) @ do
    dp = do @ np.swapaxes(v, -1, -2)
    ds = p * (dp - (do * o).sum(-1, keepdims=True))
    return o, ds @ k * scale, np.swapaxes(ds, -1, -2) @ q * scale, dv


@pytest.mark.parametrize("causal", [False, True])
def test_attention_fwd_bwd(dev, causal):
    Z, H, N, D = 1, 2, 128, 32
    scale = 1 / math.sqrt(D)
    rng = np.random.default_rng(3 + causal)
    q, k, v, do = (rng.standard_normal((Z, H, N, D)).astype(np.float16) for _ in range(4))
    o = dev.put(np.full_like(q, np.nan))
    m = dev.put(np.full((Z, H, N), np.nan, np.float32))
    dq_, dk_, dv_ = (dev.put(np.full_like(q, np.nan)) for _ in range(3))
    dq, dk, dv, dd = dev.put(q), dev.put(k), dev.put(v), dev.put(do)
    st = (H * N * D, N * D, D)
    EX.attn_fwd[(N // 64, Z * H)](dq, dk, dv, scale, m, o, *st, H, N_CTX=N, HEAD_DIM=D, BLOCK_M=64, BLOCK_N=32,
                                  STAGE=3 if causal else 1, num_warps=4, num_stages=3)
    delta = dev.put(np.full((Z, H, N), np.nan, np.float32))
    EX.attn_bwd_preprocess[(N // 64, Z * H)](o, dd, delta, N, BLOCK_M=64, HEAD_DIM=D)
    k_scaled = dev.put((k.astype(np.float32) * np.float32(scale * 1.4426950408889634)).astype(np.float16))
    EX.attn_bwd[(N // 64, 1, Z * H)](dq, k_scaled, dv, scale, dd, dq_, dk_, dv_, m, delta, *st, H, N,
                                     BLOCK_M1=32, BLOCK_N1=64, BLOCK_M2=64, BLOCK_N2=32, BLK_SLICE_FACTOR=2,
                                     HEAD_DIM=D, CAUSAL=causal, num_warps=4, num_stages=3)
    want = _reference(q, k, v, do, scale, causal)
    for name, got, ref in zip(("O", "dQ", "dK", "dV"), (o, dq_, dk_, dv_), want):
        got = dev.get(got).astype(np.float64)
        err = np.linalg.norm(got - ref) / np.linalg.norm(ref)
        assert err < 1e-2, f"{name}: relative error {err:.2e}"
