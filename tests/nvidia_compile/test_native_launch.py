"""The NVIDIA launcher's native launch call, on a host without a GPU (tests/gpu/test_native_launch.py runs it
against the driver): which call is chosen and why, and that CudaLauncher hands cuLaunchKernel's arguments in
order. This host has no libcuda, so cuLaunchKernel's place is taken by a C function of the same signature,
JIT-compiled here, that records what it receives and returns a chosen CUresult."""
from __future__ import annotations

import ctypes
import os
import sys
import types

import pytest

pytest.importorskip("tritium_nvidia", reason="the NVIDIA backend is not installed")
pytest.importorskip("cuda.bindings", reason="cuda-bindings is not installed")
from tritium_nvidia import cuda, driver, launch_call  # noqa: E402
from tritium_nvidia.knobs import nvidia as nv_knobs  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # this folder's helpers
import launch_stand_in  # noqa: E402

_received = (ctypes.c_uint64 * 11)()
_result = ctypes.c_int32(0)


@pytest.fixture(scope="module")
def stand_in() -> int:
    return launch_stand_in.build(_received, result=_result)


@pytest.fixture
def fresh_choice(monkeypatch):
    """The launch call as before the process's first launch; restored afterwards."""
    monkeypatch.setattr(launch_call, "launch", launch_call.choose)
    monkeypatch.setattr(launch_call, "is_native", False)
    monkeypatch.setattr(launch_call, "packed", (None, None))
    monkeypatch.setattr(launch_call, "NATIVE_AFTER", 0)  # chosen at the first launch, not the process's 100th
    with nv_knobs.scope():
        nv_knobs.launch_debug = False  # whatever TRITIUM_NVIDIA_LAUNCH_DEBUG the run has: each test says
        yield


def test_knob_off_keeps_cuda_bindings(fresh_choice, capsys):
    nv_knobs.native_launch = False
    nv_knobs.launch_debug = True
    call, native = launch_call.make_call()
    assert not native and callable(call)
    assert "cuda-bindings' cuLaunchKernel (TRITIUM_NVIDIA_NATIVE_LAUNCH=0)" in capsys.readouterr().err


def test_build_failure_falls_back_and_says_why(fresh_choice, monkeypatch, capsys):
    def cannot(*args):
        raise cuda.CudaError("cannot find cuLaunchKernel's address (no driver here)")
    monkeypatch.setattr(cuda, "launch_kernel_address", cannot)
    call, native = launch_call.make_call()
    assert not native
    assert capsys.readouterr().err == ""  # silent unless asked
    nv_knobs.launch_debug = True
    call, native = launch_call.make_call()
    assert not native
    assert "the native call cannot be built: CudaError: cannot find cuLaunchKernel's address" in capsys.readouterr().err


def _launcher() -> driver.CudaLauncher:
    kernel = types.SimpleNamespace(
        name="k", src=types.SimpleNamespace(signature={"x": "*fp32", "n": "i32"}, constants={}),
        metadata_dict={"arg_types": ["ptr addrspace(1)", "i32"], "num_warps": 4, "shared": 49152})
    return driver.CudaLauncher(kernel, None)  # type: ignore[arg-type]


def test_launcher_passes_the_driver_its_arguments_in_order(fresh_choice, monkeypatch, stand_in, capsys):
    monkeypatch.setattr(cuda, "launch_kernel_address", lambda: (stand_in, "a stand-in"))
    monkeypatch.setattr(driver, "_torch_c", types.SimpleNamespace(_cuda_getDevice=lambda: 1,
                                                                    _cuda_getCurrentRawStream=lambda d: 0x7F00_AB00))
    nv_knobs.launch_debug = True
    launcher = _launcher()
    launcher.functions[1] = 0x5555_0000_1230   # what load() would have stored: a CUfunction, int() of it the handle
    _result.value = 0
    launcher((70000, 3, 2), (0xDEAD_BEEF_0000, -7))
    assert launch_call.is_native
    assert "native builtin calling cuLaunchKernel (its address from a stand-in)" in capsys.readouterr().err
    assert list(_received) == [0x5555_0000_1230, 70000, 3, 2, 128, 1, 1, 49152, 0x7F00_AB00,
                               launcher.params_addr, 0]
    params = ctypes.cast(launcher.params_addr, ctypes.POINTER(ctypes.c_void_p))
    assert ctypes.c_uint64.from_address(params[0]).value == 0xDEAD_BEEF_0000
    assert ctypes.c_int32.from_address(params[1]).value == -7


def test_native_failure_is_checked_through_cuda_bindings(fresh_choice, monkeypatch, stand_in, capsys):
    """A launch the native call reports failed goes again through cuda-bindings: if that succeeds, the native
    call is dropped for the process and the launch counts as made; if it fails too, its error is reported."""
    monkeypatch.setattr(cuda, "launch_kernel_address", lambda: (stand_in, "a stand-in"))
    monkeypatch.setattr(driver, "_torch_c", types.SimpleNamespace(_cuda_getDevice=lambda: 0,
                                                                    _cuda_getCurrentRawStream=lambda d: 0))
    again = []
    outcome = {"err": 0}

    def bindings():
        def call(*args):
            again.append(args)
            return outcome["err"]
        return call
    monkeypatch.setattr(launch_call, "bindings_launch", bindings)
    reported = []
    monkeypatch.setattr(driver.CudaLauncher, "_launch_error", lambda self, err, grid: reported.append(err))
    launcher = _launcher()
    launcher.functions[0] = 0x1000
    _result.value = 400
    outcome["err"] = 400
    launcher((1, 1, 1), (0x10, 1))
    assert reported == [400] and len(again) == 1 and launch_call.is_native  # both say so: the launch failed
    nv_knobs.launch_debug = True
    outcome["err"] = 0
    launcher((1, 1, 1), (0x10, 1))
    assert reported == [400] and len(again) == 2 and not launch_call.is_native
    assert again[-1][0] == 0x1000 and again[-1][-2] == launcher.params_addr
    assert "returned 400 where cuda-bindings' succeeded" in capsys.readouterr().err
    _result.value = 0


def test_grid_the_driver_cannot_take_names_the_kernel(fresh_choice, monkeypatch, stand_in):
    monkeypatch.setattr(cuda, "launch_kernel_address", lambda: (stand_in, "a stand-in"))
    monkeypatch.setattr(driver, "_torch_c", types.SimpleNamespace(_cuda_getDevice=lambda: 0,
                                                                    _cuda_getCurrentRawStream=lambda d: 0))
    launcher = _launcher()
    launcher.functions[0] = 0x1000
    _received[1] = 12345
    with pytest.raises(ValueError, match=r"kernel `k`: grid \(4294967296, 1, 1\) must be integers"):
        launcher((1 << 32, 1, 1), (0x10, 1))
    assert _received[1] == 12345  # refused before the call


def test_address_comes_from_cuda_bindings_or_the_driver():
    """With a driver: cuda-bindings' own pointer (or the driver's answer). Without one (this host): an error
    that says what each place answered, which the launcher prints under TRITIUM_NVIDIA_LAUNCH_DEBUG."""
    try:
        address, source = cuda.launch_kernel_address()
    except cuda.CudaError as exc:
        assert "cannot find cuLaunchKernel's address" in str(exc)
        assert "cuda.bindings._internal.driver" in str(exc) and "cuGetProcAddress" in str(exc)
    else:
        assert address > 0 and ("function table" in source or source == "cuGetProcAddress")
