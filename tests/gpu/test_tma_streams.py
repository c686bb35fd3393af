"""A kernel whose tensor maps are built on the device keeps them in module globals that every launch rewrites
(tritium_nvidia/tma.py). Two launches with different descriptors on different streams would share them while
both run; the launcher orders a launch after the work queued on the kernel's previous stream. Each launch here
must compute its own product. NVIDIA sm_90 only (elsewhere descriptors do not use TMA)."""
from __future__ import annotations

import pytest

import tritium as triton
import tritium.language as tl

pytestmark = pytest.mark.gpu


@triton.jit
def _mm(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    # shapes computed in the kernel: maps built on the device (of plain arguments the launcher would encode
    # them: test_tma_params.py)
    a_desc = tl.make_tensor_descriptor(a_ptr, [tl.maximum(M, 1), K], [K, 1], [BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, [tl.maximum(N, 1), K], [K, 1], [BN, BK])
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(a_desc.load([pid_m * BM, k]), b_desc.load([pid_n * BN, k]).T, acc)
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def test_launches_on_two_streams_keep_their_descriptors(cuda):
    torch = pytest.importorskip("torch")
    from tritium.runtime.driver import driver
    cap = int(driver.active.get_current_target().arch)
    if not 90 <= cap < 100:
        pytest.skip(f"tensor maps are built on the device on sm_90 only; this GPU is sm_{cap}")
    M = N = 4096
    K = 1024
    g = torch.Generator(device="cuda").manual_seed(3)
    inputs = [(torch.randn((M, K), device="cuda", generator=g).half(),
               torch.randn((N, K), device="cuda", generator=g).half()) for _ in range(2)]
    outs = [torch.empty((M, N), device="cuda") for _ in range(2)]
    grid = (M // 128, N // 128)
    streams = [torch.cuda.Stream(), torch.cuda.Stream()]
    kernel = _mm[grid](*inputs[0], outs[0], M, N, K, BM=128, BN=128, BK=64, num_warps=8, num_stages=3)
    assert kernel.metadata_dict.get("tensor_map_globals"), "this kernel was meant to build its tensor maps"
    torch.cuda.synchronize()
    for _ in range(3):
        for out in outs:
            out.fill_(float("nan"))
        torch.cuda.synchronize()
        for stream, (a, b), out in zip(streams, inputs, outs):
            with torch.cuda.stream(stream):
                _mm[grid](a, b, out, M, N, K, BM=128, BN=128, BK=64, num_warps=8, num_stages=3)
        torch.cuda.synchronize()
        for (a, b), out in zip(inputs, outs):
            ref = a.float() @ b.float().T
            torch.testing.assert_close(out, ref, rtol=2e-3, atol=2e-2)
