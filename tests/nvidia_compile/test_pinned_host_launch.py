"""Triton's test_pointer_arguments on a host without a GPU: on the NVIDIA driver a CPU tensor in page-locked memory
(``pin_memory()``) is a kernel argument at its host address (unified addressing), and a pageable one is refused
with an error that is a ValueError (as Triton's) and a TypeError (as tritium's was). Pinned and pageable tensors
key apart, so a kernel launched with a pinned tensor still refuses a pageable one on its cached launches.
cuLaunchKernel is the recording stand-in of test_cached_launch_host.py; pinned memory is faked
(``Tensor.is_pinned``), there being no CUDA here. tests/gpu/test_pinned_host.py runs the real thing."""
from __future__ import annotations

import ctypes
import os
import shutil
import sys

import pytest

pytest.importorskip("tritium_nvidia", reason="the NVIDIA backend is not installed")
pytest.importorskip("cuda.bindings", reason="cuda-bindings is not installed")
torch = pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")

import tritium  # noqa: E402
import tritium.language as tl  # noqa: E402
from tritium.errors import ArgumentDeviceError  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # this folder's helpers
import launch_stand_in  # noqa: E402

_received = (ctypes.c_uint64 * 11)()
_seen = (ctypes.c_uint64 * 1)()
_calls = ctypes.c_int64(0)


@tritium.jit
def _touch(x):
    tl.store(x, tl.load(x) + 1.0)


@pytest.fixture(scope="module")
def stand_in() -> int:
    return launch_stand_in.build(_received, calls=_calls, slots=_seen, slot_types=("i64", ))


@pytest.fixture
def host_driver(stand_in, monkeypatch, tmp_path):
    """The CudaDriver (its own accepts_device) for sm_90, launching into the stand-in; Tensor.is_pinned answers
    from a mark the test sets."""
    from tritium import plugins
    from tritium.runtime.driver import driver as active

    HostCudaDriver = launch_stand_in.host_cuda_driver(any_device=False)
    monkeypatch.setattr(torch.Tensor, "is_pinned", lambda self: getattr(self, "_test_pinned", False))
    monkeypatch.setenv("TRITIUM_HOME", str(tmp_path))
    launch_stand_in.route_launches(monkeypatch, stand_in, 0)
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(reg):
        active.set_active(HostCudaDriver())
        try:
            _touch.device_caches.clear()
            yield
        finally:
            active.reset_active()
            _touch.device_caches.clear()


def _pinned(n: int = 4):
    x = torch.zeros(n)
    x._test_pinned = True
    return x


def _loaded():
    (state, ) = _touch.device_caches.values()
    for entry in state.kernels.values():
        entry.kernel._launcher.functions[0] = 0x7000_0000_1230   # as if loaded on device 0


def test_pageable_cpu_tensor_is_a_value_error_and_a_type_error(host_driver):
    with pytest.raises(ValueError, match=r"argument `x` of kernel `_touch` lives on device 'cpu'.*pin it") as err:
        _touch[(1, )](torch.zeros(4))
    assert isinstance(err.value, TypeError) and isinstance(err.value, ArgumentDeviceError)


def test_pinned_cpu_tensor_is_launched_at_its_address(host_driver):
    x = _pinned()
    _touch.warmup(x, grid=(1, ))
    _loaded()
    for _ in range(3):    # the first launch, then the cached ones
        before = _calls.value
        y = _pinned()
        _touch[(1, )](y)
        assert _calls.value == before + 1 and _seen[0] == y.data_ptr()
    # the cached specialization is the pinned one: a pageable tensor still takes the full path, and is refused
    with pytest.raises(ValueError, match="lives on device 'cpu'"):
        _touch[(1, )](torch.zeros(4))
    (state, ) = _touch.device_caches.values()
    assert len(state.kernels) == 1 and "'cpu_pinned'" in repr(list(state.kernels))
