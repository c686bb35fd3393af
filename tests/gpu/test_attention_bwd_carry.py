"""The fused-attention backward of examples/07 at the tutorial's block sizes (BLOCK_N1 = BLOCK_M2 = 128, 4 warps,
5 stages), head dims 64 and 128, causal and not, with the sm_90 options that change its loops' code:
TRITIUM_NVIDIA_CARRY_REGISTER_A (the dK and dQ dots, whose A is in registers, left running into the next
iteration, their A registers carried to its first wait) and TRITIUM_NVIDIA_PIN_DESCRIPTORS (the descriptors of
K, V, Q and dO, written to shared memory before their loops, computed in the loop instead of kept live in
registers). Against float64 numpy, on an NVIDIA GPU only: on the emulator the knobs change nothing (its dots are
not asynchronous, its descriptors not wgmma's), and tests/gpu/test_attention_bwd.py runs the same kernels there."""
from __future__ import annotations

import importlib.util
import math
import os

import numpy as np
import pytest

# examples/07's kernels and the float64 reference, as tests/gpu/test_attention_bwd.py loads and defines them (by
# path: the suite imports test files in importlib mode, where a sibling test module has no importable name)
_spec = importlib.util.spec_from_file_location("attention_bwd_for_carry",
                                               os.path.join(os.path.dirname(__file__), "test_attention_bwd.py"))
_bwd = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_bwd)
EX, _reference = _bwd.EX, _bwd._reference


class _Cuda:
    def put(self, a):
        import torch
        return torch.from_numpy(a.copy()).to("cuda")

    def get(self, t):
        return t.cpu().numpy()


@pytest.mark.parametrize("carry,pin", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("D", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_backward_tutorial_blocks(cuda, D, causal, carry, pin):
    from tritium_nvidia.knobs import nvidia
    dev = _Cuda()
    Z, H, N = 1, 2, 256
    scale = 1 / math.sqrt(D)
    rng = np.random.default_rng(D + 2 * causal + 4 * carry + 8 * pin)
    q, k, v, do = (rng.standard_normal((Z, H, N, D)).astype(np.float16) for _ in range(4))
    o = dev.put(np.full_like(q, np.nan))
    m = dev.put(np.full((Z, H, N), np.nan, np.float32))
    dq_, dk_, dv_ = (dev.put(np.full_like(q, np.nan)) for _ in range(3))
    dq, dk, dv, dd = dev.put(q), dev.put(k), dev.put(v), dev.put(do)
    st = (H * N * D, N * D, D)
    EX.attn_fwd[(N // 64, Z * H)](dq, dk, dv, scale, m, o, *st, H, N_CTX=N, HEAD_DIM=D, BLOCK_M=64, BLOCK_N=32,
                                  STAGE=3 if causal else 1, num_warps=4, num_stages=3)
    delta = dev.put(np.full((Z, H, N), np.nan, np.float32))
    EX.attn_bwd_preprocess[(N // 128, Z * H)](o, dd, delta, N, BLOCK_M=128, HEAD_DIM=D)
    k_scaled = dev.put((k.astype(np.float32) * np.float32(scale * 1.4426950408889634)).astype(np.float16))
    bwd = dict(EX.BWD)
    with nvidia.scope():
        nvidia.carry_register_a = int(carry)
        nvidia.pin_descriptors = pin
        EX.attn_bwd[(N // bwd["BLOCK_N1"], 1, Z * H)](dq, k_scaled, dv, scale, dd, dq_, dk_, dv_, m, delta, *st, H,
                                                      N, HEAD_DIM=D, CAUSAL=causal, **bwd)
    want = _reference(q, k, v, do, scale, causal)
    for name, got, ref in zip(("O", "dQ", "dK", "dV"), (o, dq_, dk_, dv_), want):
        got = dev.get(got).astype(np.float64)
        err = np.linalg.norm(got - ref) / np.linalg.norm(ref)
        assert err < 1e-2, f"{name}: relative error {err:.2e}"
