"""Kernels launched through the native cuLaunchKernel builtin (tritium_nvidia.driver, tritium.llvmir.native_call)
and through cuda-bindings' wrapper give the same results, on the current and on side streams, from several
threads, and the launch errors still name the kernel. NVIDIA GPUs only."""
from __future__ import annotations

import threading

import pytest

import tritium as triton
import tritium.language as tl

pytestmark = pytest.mark.gpu


@triton.jit
def _fill(out_ptr, value, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, value + offs, mask=offs < n)


@pytest.fixture(params=[True, False], ids=["native", "cuda-bindings"])
def launch_path(request, cuda, monkeypatch):
    from tritium_nvidia import launch_call
    from tritium_nvidia.knobs import nvidia as nv_knobs
    monkeypatch.setattr(launch_call, "launch", launch_call.choose)  # chosen again at the next launch
    monkeypatch.setattr(launch_call, "is_native", False)
    monkeypatch.setattr(launch_call, "packed", (None, None))
    monkeypatch.setattr(launch_call, "NATIVE_AFTER", 0)
    with nv_knobs.scope():
        nv_knobs.native_launch = request.param
        yield request.param
    assert launch_call.is_native == request.param, "the launch call is not the one asked for"


def test_results_on_streams_and_threads(launch_path):
    torch = pytest.importorskip("torch")
    n = 5000
    out = torch.full((n, ), -1, device="cuda", dtype=torch.int32)
    _fill[(triton.cdiv(n, 1024), )](out, 7, n, BLOCK=1024)
    torch.testing.assert_close(out.cpu(), torch.arange(n, dtype=torch.int32) + 7)
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        _fill[(triton.cdiv(n, 1024), )](out, 11, n, BLOCK=1024)
    side.synchronize()
    torch.testing.assert_close(out.cpu(), torch.arange(n, dtype=torch.int32) + 11)

    outs = [torch.full((n, ), -1, device="cuda", dtype=torch.int32) for _ in range(4)]
    errors = []

    def work(i: int) -> None:
        try:
            for k in range(200):
                _fill[(triton.cdiv(n, 1024), )](outs[i], i * 1000 + k, n, BLOCK=1024)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i, )) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    torch.cuda.synchronize()
    assert not errors
    for i, o in enumerate(outs):
        torch.testing.assert_close(o.cpu(), torch.arange(n, dtype=torch.int32) + i * 1000 + 199)


def test_driver_refusal_names_the_kernel(launch_path):
    """cuLaunchKernel refuses 2048 threads per program (every device allows 1024): the error comes back
    through the launch call chosen and names the kernel, and the next launch works."""
    torch = pytest.importorskip("torch")
    from tritium_nvidia import driver
    out = torch.zeros(16, device="cuda", dtype=torch.int32)
    kernel = _fill.warmup(out, 7, 16, BLOCK=16, grid=(1, ))
    launcher = kernel.launcher
    launcher((1, 1, 1), (out.data_ptr(), 3, 16))   # loads the module (its checks would refuse 2048 first)
    launcher.block = 2048  # over every device's limit of 1024 threads: the driver refuses the launch
    with pytest.raises((ValueError, driver.OutOfResources, RuntimeError), match="`_fill`"):
        launcher((1, 1, 1), (out.data_ptr(), 7, 16))
    launcher.block = kernel.metadata_dict["num_warps"] * 32
    launcher((1, 1, 1), (out.data_ptr(), 5, 16))
    torch.cuda.synchronize()
    torch.testing.assert_close(out.cpu(), torch.arange(16, dtype=torch.int32) + 5)


def test_build_failure_keeps_launching(cuda, monkeypatch):
    torch = pytest.importorskip("torch")
    from tritium_nvidia import cuda as cu_mod
    from tritium_nvidia import launch_call

    def cannot():
        raise cu_mod.CudaError("no address (the test)")
    monkeypatch.setattr(launch_call, "launch", launch_call.choose)
    monkeypatch.setattr(launch_call, "is_native", False)
    monkeypatch.setattr(launch_call, "packed", (None, None))
    monkeypatch.setattr(launch_call, "NATIVE_AFTER", 0)
    monkeypatch.setattr(cu_mod, "launch_kernel_address", cannot)
    out = torch.zeros(100, device="cuda", dtype=torch.int32)
    _fill[(1, )](out, 3, 100, BLOCK=128)
    torch.cuda.synchronize()
    assert not launch_call.is_native
    torch.testing.assert_close(out.cpu(), torch.arange(100, dtype=torch.int32) + 3)
