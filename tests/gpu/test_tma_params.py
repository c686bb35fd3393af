"""Host ``TensorDescriptor`` tensor maps encoded by the launcher and passed as ``__grid_constant__`` parameters
(tritium_nvidia/tensor_maps.py) on the H200: each launch carries its own maps, so two launches of one kernel
with different descriptors may run at once: on two streams (the launcher no longer orders them) and as two
parallel branches of one captured CUDA graph (which no launcher could order: with maps built on the device in
a module global, the branches raced). The encoded bytes are cached by the descriptor's fields. The numerical
coverage of the TMA path (every swizzle, OOB boxes, bf16/fp8/tf32, stores, persistent re-entry) is
test_descriptor_tma.py's, whose kernels take host descriptors and so go through these parameters; here each
of them is checked to have done so. NVIDIA sm_90 only."""
from __future__ import annotations

import os
import sys

import pytest

import tritium as triton
import tritium.language as tl
from tritium.tools.tensor_descriptor import TensorDescriptor

pytestmark = pytest.mark.gpu


@triton.jit
def _mm(a_desc, b_desc, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(a_desc.load([pid_m * BM, k]), b_desc.load([pid_n * BN, k]).T, acc)
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def _setup(cuda):
    torch = pytest.importorskip("torch")
    from tritium.runtime.driver import driver
    cap = int(driver.active.get_current_target().arch)
    if not 90 <= cap < 100:
        pytest.skip(f"tensor maps are used on sm_90 only; this GPU is sm_{cap}")
    return torch


# fewer programs than the H200 has multiprocessors (8 x 6 = 48 per launch) and a long K loop: two launches
# run side by side for most of their time
M, N, K, BM, BN, BK = 1024, 768, 8192, 128, 128, 64
META = dict(BM=BM, BN=BN, BK=BK, num_warps=8, num_stages=3)


def _inputs(torch, n):
    g = torch.Generator(device="cuda").manual_seed(11)
    out = []
    for _ in range(n):
        a = torch.randn((M, K), device="cuda", generator=g).half()
        b = torch.randn((N, K), device="cuda", generator=g).half()
        out.append((TensorDescriptor.from_tensor(a, [BM, BK]), TensorDescriptor.from_tensor(b, [BN, BK]),
                    a.double() @ b.double().T))
    return out


def _check(torch, outs, inputs):
    for out, (_, _, want) in zip(outs, inputs):
        torch.testing.assert_close(out.double(), want, rtol=2e-3, atol=5e-2)


def test_host_maps_are_parameters_and_streams_are_not_ordered(cuda):
    torch = _setup(cuda)
    inputs = _inputs(torch, 2)
    outs = [torch.full((M, N), float("nan"), device="cuda") for _ in inputs]
    grid = (M // BM, N // BN)
    streams = [torch.cuda.Stream(), torch.cuda.Stream()]
    k = _mm[grid](inputs[0][0], inputs[0][1], outs[0], M, N, K, **META)
    md = k.metadata_dict
    assert len(md["tensor_map_params"]) == 2 and not md["tensor_map_globals"]
    assert "tensormap.replace" not in k.asm["ptx"] and not k.launcher.orders_streams
    torch.cuda.synchronize()
    for _ in range(3):
        for out in outs:
            out.fill_(float("nan"))
        torch.cuda.synchronize()
        for stream, (a, b, _), out in zip(streams, inputs, outs):
            with torch.cuda.stream(stream):
                _mm[grid](a, b, out, M, N, K, **META)
        torch.cuda.synchronize()
        _check(torch, outs, inputs)


@triton.jit
def _mm_own(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, [N, K], [K, 1], [BN, BK])
    _mm(a_desc, b_desc, c_ptr, M, N, K, BM, BN, BK)


def _launch(kind, grid, a, b, out):
    if kind == "host":
        return _mm[grid](a, b, out, M, N, K, **META)
    return _mm_own[grid](a.base, b.base, out, M, N, K, **META)


@pytest.mark.parametrize("kind", ["host", "own"])
def test_two_branches_of_one_cuda_graph(cuda, kind):
    """Two launches with different descriptors as parallel branches of a captured graph, replayed several times,
    host descriptors and a kernel's own descriptors of its arguments. With the maps built on the device
    (TRITIUM_NVIDIA_TMA_HOST_MAPS=0) both branches rewrite one module global while the other reads it through
    its copies, and no launcher can order a graph's branches."""
    torch = _setup(cuda)
    inputs = _inputs(torch, 2)
    outs = [torch.full((M, N), float("nan"), device="cuda") for _ in inputs]
    grid = (M // BM, N // BN)
    for (a, b, _), out in zip(inputs, outs):      # compile and load outside the capture
        k = _launch(kind, grid, a, b, out)
    torch.cuda.synchronize()
    _check(torch, outs, inputs)
    from tritium_nvidia.knobs import nvidia
    assert bool(k.metadata_dict.get("tensor_map_params")) == nvidia.tma_host_maps
    graph = torch.cuda.CUDAGraph()
    branches = [torch.cuda.Stream(), torch.cuda.Stream()]
    with torch.cuda.graph(graph):
        main = torch.cuda.current_stream()
        for s in branches:
            s.wait_stream(main)
        for s, (a, b, _), out in zip(branches, inputs, outs):
            with torch.cuda.stream(s):
                _launch(kind, grid, a, b, out)
        for s in branches:
            main.wait_stream(s)
    for _ in range(5):
        for out in outs:
            out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        _check(torch, outs, inputs)


def test_encoded_maps_are_cached_by_fields(cuda):
    torch = _setup(cuda)
    (a, b, want), = _inputs(torch, 1)
    out = torch.empty((M, N), device="cuda")
    grid = (M // BM, N // BN)
    k = _mm[grid](a, b, out, M, N, K, **META)
    caches = k.launcher.arguments.maps.caches
    key_a, key_b = (a.base.data_ptr(), M, K, K), (b.base.data_ptr(), N, K, K)
    assert key_a in caches[0] and key_b in caches[1]
    sizes = [len(c) for c in caches]
    # a new descriptor object over the same tensor: the same fields, no new encoding
    _mm[grid](TensorDescriptor.from_tensor(a.base, [BM, BK]), b, out, M, N, K, **META)
    assert [len(c) for c in caches] == sizes
    # another tensor for A: a map for A's parameter only
    a2 = a.base.clone()
    _mm[grid](TensorDescriptor.from_tensor(a2, [BM, BK]), b, out, M, N, K, **META)
    assert (a2.data_ptr(), M, K, K) in caches[0] and len(caches[1]) == sizes[1]
    torch.cuda.synchronize()
    torch.testing.assert_close(out.double(), want, rtol=2e-3, atol=5e-2)


@pytest.mark.parametrize("test", ["every_swizzle", "outside_rows", "other_types", "persistent"])
def test_tma_tests_take_host_maps(cuda, test):
    """test_descriptor_tma.py's kernels (host descriptors) compile to parameter maps, none built on the device."""
    torch = _setup(cuda)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import test_descriptor_tma as t
    from hopper import example08
    if test == "persistent":
        ex = example08()
        a = torch.randn((520, 1008), device="cuda").half()
        b = torch.randn((712, 1008), device="cuda").half()
        c = torch.empty((520, 712), device="cuda", dtype=torch.float16)
        BMp, BNp, BKp, warps, stages = ex.CONFIGS["float16"]
        descs = [TensorDescriptor(x, list(x.shape), list(x.stride()), blk) for x, blk in
                 ((a, [BMp, BKp]), (b, [BNp, BKp]), (c, [BMp, BNp]))]
        k = ex.matmul_persistent[(5, )](*descs, 520, 712, 1008, BLOCK_M=BMp, BLOCK_N=BNp, BLOCK_K=BKp, GROUP_M=8,
                                        NUM_SMS=5, WARP_SPECIALIZE=False, num_warps=warps, num_stages=stages)
        n_maps = 3          # A and B loaded, C stored: all three through parameters
    else:
        shape = {"every_swizzle": (200, 136, 23 * 32 + 16, 64, 64, 32, 3, 4, 0),
                 "outside_rows": (192, 128, 256, 64, 128, 64, 3, 4, -40),
                 "other_types": (160, 144, 9 * 32 + 16, 128, 128, 32, 3, 8, 0)}[test]
        dtype = torch.float32 if test == "other_types" else torch.float16
        k, got, want = t._run_mm(torch, dtype, *shape)
        torch.testing.assert_close(got, want, rtol=5e-2, atol=1.0)
        n_maps = 2
    assert len(k.metadata_dict["tensor_map_params"]) == n_maps and not k.metadata_dict["tensor_map_globals"]
    assert "tensormap" not in k.asm["ptx"]
