"""TMA multicast in split clusters (``num_ctas`` 2 and 4; gpu/lower/multicast.py) on an NVIDIA GPU of sm_90 or
newer: each CTA copies its rows of A's block and multicasts them to the whole cluster. Results against numpy in
float64, with edge tiles (M and N not multiples of the blocks), K not a multiple of BLOCK_K, a persistent kernel
(examples/08: the pipelined loop runs once per tile, so stages are refilled across tiles), two pipelined loops in
one kernel, and the knob off; stages handed back through a cluster barrier or through mbarriers. Each test also
checks that the path it means to run was taken (the PTX multicasts). The copy engine is not emulated: without such a GPU these tests skip (tests/nvidia_compile/test_multicast_ptx.py
checks the PTX everywhere)."""
from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl


@pytest.fixture
def hopper(cuda):
    import torch
    if torch.cuda.get_device_capability()[0] < 9:
        pytest.skip("thread-block clusters and TMA multicast need an sm_90 or newer GPU")
    return cuda


def _put(a):
    import torch
    return torch.from_numpy(a.copy()).to("cuda")


def _get(t):
    import torch
    torch.cuda.synchronize()
    return t.float().cpu().numpy().astype(np.float64) if t.dtype == torch.bfloat16 else t.cpu().numpy()


def _data(rng, shape, dt):
    import torch
    x = rng.standard_normal(shape).astype(np.float32)
    t = torch.from_numpy(x).to("cuda").to(getattr(torch, dt))
    return t, t.float().cpu().numpy().astype(np.float64)


@triton.jit
def _desc_matmul(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(a_desc.load([pid_m * BM, k]), b_desc.load([k, pid_n * BN]), acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(c_desc.dtype))


def _multicast(k) -> bool:
    return "multicast::cluster" in k.asm["ptx"]


RELEASE = ["cluster_barrier", "mbarrier"]


@pytest.mark.parametrize("release", RELEASE)
@pytest.mark.parametrize("ctas", [2, 4])
@pytest.mark.parametrize("dt,blocks,shape", [("float16", (128, 256, 64), (320, 640, 200)),
                                             ("bfloat16", (128, 128, 64), (256, 384, 136)),
                                             ("float16", (64, 256, 64), (200, 520, 72))])
def test_tiled_descriptor_matmul(hopper, ctas, dt, blocks, shape, release):
    import torch
    from tritium.tools.tensor_descriptor import TensorDescriptor
    from tritium_nvidia.knobs import nvidia
    (BM, BN, BK), (M, N, K) = blocks, shape
    rng = np.random.default_rng(ctas + M)
    a, a64 = _data(rng, (M, K), dt)
    b, b64 = _data(rng, (K, N), dt)
    c = torch.full((M, N), float("nan"), device="cuda", dtype=a.dtype)
    descs = (TensorDescriptor.from_tensor(a, [BM, BK]), TensorDescriptor.from_tensor(b, [BK, BN]),
             TensorDescriptor.from_tensor(c, [BM, BN]))
    with nvidia.scope():
        nvidia.multicast_release = release
        k = _desc_matmul[(triton.cdiv(M, BM), triton.cdiv(N, BN))](*descs, K, BM, BN, BK, num_ctas=ctas,
                                                                 num_warps=8, num_stages=3)
    assert "tritium.cluster_split" in k.asm["ttgir"] and _multicast(k)
    np.testing.assert_allclose(_get(c).astype(np.float64), a64 @ b64, rtol=2e-2, atol=6e-2)


def test_knob_off_gives_the_same_result(hopper):
    import torch
    from tritium.tools.tensor_descriptor import TensorDescriptor
    from tritium_nvidia.knobs import nvidia
    M, N, K, BM, BN, BK = 256, 512, 192, 128, 256, 64
    rng = np.random.default_rng(3)
    a, _ = _data(rng, (M, K), "float16")
    b, _ = _data(rng, (K, N), "float16")
    out = []
    for on in (True, False):
        c = torch.zeros((M, N), device="cuda", dtype=torch.float16)
        descs = (TensorDescriptor.from_tensor(a, [BM, BK]), TensorDescriptor.from_tensor(b, [BK, BN]),
                 TensorDescriptor.from_tensor(c, [BM, BN]))
        with nvidia.scope():
            nvidia.multicast = on
            k = _desc_matmul[(M // BM, N // BN)](*descs, K, BM, BN, BK, num_ctas=2, num_warps=8, num_stages=3)
        assert _multicast(k) == on
        out.append(_get(c))
    # the same products summed in the same order: bit for bit
    np.testing.assert_array_equal(out[0], out[1])


def _example08():
    path = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "08-persistent-matmul-descriptors.py")
    spec = importlib.util.spec_from_file_location("ex08_multicast", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("release", RELEASE)
@pytest.mark.parametrize("ctas", [2, 4])
@pytest.mark.parametrize("blocks", [(128, 256, 64), (128, 128, 64)])
def test_persistent_descriptor_matmul(hopper, ctas, blocks, release):
    """More tiles than programs: each program's loop is re-entered per tile, its stages refilled by every CTA."""
    import torch
    from tritium.tools.tensor_descriptor import TensorDescriptor
    from tritium_nvidia.knobs import nvidia
    ex = _example08()
    M, N, K = 1000, 1200, 328
    BM, BN, BK = blocks
    rng = np.random.default_rng(ctas)
    a, a64 = _data(rng, (M, K), "float16")
    b, b64 = _data(rng, (N, K), "float16")
    c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
    descs = (TensorDescriptor.from_tensor(a, [BM, BK]), TensorDescriptor.from_tensor(b, [BN, BK]),
             TensorDescriptor.from_tensor(c, [BM, BN]))
    with nvidia.scope():
        nvidia.multicast_release = release
        k = ex.matmul_persistent[(7, )](*descs, M, N, K, BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=8, NUM_SMS=7,
                                        WARP_SPECIALIZE=False, num_warps=8, num_stages=3, num_ctas=ctas)
    assert "tritium.cluster_split" in k.asm["ttgir"] and _multicast(k)
    np.testing.assert_allclose(_get(c).astype(np.float64), a64 @ b64.T, rtol=2e-2, atol=6e-2)


@triton.jit
def _two_loops(a_desc, b_desc, a2_desc, b2_desc, c_desc, K, K2, BM: tl.constexpr, BN: tl.constexpr,
               BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(a_desc.load([pid_m * BM, k]), b_desc.load([k, pid_n * BN]), acc)
    for k in range(0, K2, BK):
        acc = tl.dot(a2_desc.load([pid_m * BM, k]), b2_desc.load([k, pid_n * BN]), acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(tl.float16))


@pytest.mark.parametrize("release", RELEASE)
@pytest.mark.parametrize("ctas", [2, 4])
def test_two_pipelined_loops(hopper, ctas, release):
    """The second loop's stages take the first's bytes: no CTA may start copying into them (in every CTA) before
    all are done with the first loop."""
    import torch
    from tritium.tools.tensor_descriptor import TensorDescriptor
    M, N, K, K2, BM, BN, BK = 256, 512, 320, 136, 128, 256, 64
    rng = np.random.default_rng(11)
    a, a64 = _data(rng, (M, K), "float16")
    b, b64 = _data(rng, (K, N), "float16")
    a2, a264 = _data(rng, (M, K2), "float16")
    b2, b264 = _data(rng, (K2, N), "float16")
    c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
    descs = [TensorDescriptor.from_tensor(t, blk) for t, blk in ((a, [BM, BK]), (b, [BK, BN]), (a2, [BM, BK]),
                                                                 (b2, [BK, BN]), (c, [BM, BN]))]
    from tritium_nvidia.knobs import nvidia
    with nvidia.scope():
        nvidia.multicast_release = release
        k = _two_loops[(M // BM, N // BN)](*descs, K, K2, BM, BN, BK, num_ctas=ctas, num_warps=8, num_stages=4)
    assert _multicast(k)
    np.testing.assert_allclose(_get(c).astype(np.float64), a64 @ b64 + a264 @ b264, rtol=2e-2, atol=8e-2)
