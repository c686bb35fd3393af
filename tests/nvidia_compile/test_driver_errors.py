"""The NVIDIA driver's errors are the ones core and users catch (needs neither a GPU nor ptxas)."""
from __future__ import annotations

import pickle

import tritium


def test_out_of_resources_is_cores():
    from tritium_nvidia.driver import OutOfResources
    err = OutOfResources("kernel `k` needs 300000 bytes of shared memory per program, but device 0 offers at most "
                         "232448: lower the meta-parameters that size its tiles (BM=256)")
    # the autotuner skips configs raising tritium.OutOfResources; Triton users catch it under that name
    assert isinstance(err, tritium.OutOfResources) and isinstance(err, RuntimeError)
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is OutOfResources and str(again) == str(err)


def test_grid_limits_are_cudas_without_a_device(monkeypatch):
    """Where the device cannot be asked, the driver still reports CUDA's limits (y and z are 65535), so a grid
    too tall is refused with the kernel's name before cuLaunchKernel sees it."""
    import pytest
    from tritium.runtime.grid import grid3
    from tritium_nvidia import cuda
    from tritium_nvidia.driver import CudaDriver

    def no_device(*args):
        raise cuda.CudaError("cuInit failed: CUDA_ERROR_NO_DEVICE", "CUDA_ERROR_NO_DEVICE")
    monkeypatch.setattr(cuda, "attribute", no_device)
    monkeypatch.setattr(cuda, "current_device", no_device)
    limits = CudaDriver().max_grid()
    assert limits == (2**31 - 1, 65535, 65535)
    with pytest.raises(ValueError, match=r"kernel `k` has 65536 programs on axis y.*\(65535\)"):
        grid3("k", (1, 65536), limits)
    assert grid3("k", (2**31 - 1, 65535, 65535), limits) == (2**31 - 1, 65535, 65535)


def test_grid_limits_come_from_the_device(monkeypatch):
    """The limits are the current device's MAX_GRID_DIM_X/Y/Z, asked once per device and capped at 2**31-1
    (program ids are signed 32-bit integers whatever the device allows)."""
    from tritium_nvidia import cuda
    from tritium_nvidia.driver import CudaDriver
    asked = []
    reported = {"MAX_GRID_DIM_X": 2**32, "MAX_GRID_DIM_Y": 1000, "MAX_GRID_DIM_Z": 64}

    def attribute(device, name):
        asked.append((device, name))
        return reported[name]
    monkeypatch.setattr(cuda, "attribute", attribute)
    monkeypatch.setattr(CudaDriver, "get_current_device", lambda self: 3)
    drv = CudaDriver()
    assert drv.max_grid() == (2**31 - 1, 1000, 64)
    assert drv.max_grid() == (2**31 - 1, 1000, 64)
    assert asked == [(3, "MAX_GRID_DIM_X"), (3, "MAX_GRID_DIM_Y"), (3, "MAX_GRID_DIM_Z")]
