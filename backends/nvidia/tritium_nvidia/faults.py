"""What a failed or faulting NVIDIA launch raises, and the record of recent launches its message names."""
from __future__ import annotations

import collections
from typing import Optional

from tritium.compiler.errors import OutOfResources as _CoreOutOfResources

#: names of the kernels launched since the last synchronization (newest last), the last 16
_last_launched: collections.deque[str] = collections.deque(maxlen=16)
_recent = _last_launched.append


class OutOfResources(_CoreOutOfResources, RuntimeError):
    """A kernel needs more shared memory or registers per program than the device has. A subclass of core's
    ``tritium.OutOfResources``, so the autotuner skips such configs and users catch it as in Triton."""

    def __init__(self, message: str) -> None:
        Exception.__init__(self, message)
        self.required = self.limit = None
        self.name = "GPU resources"

    def __reduce__(self):
        return (type(self), (str(self), ))


class KernelFault(RuntimeError):
    """A kernel made an illegal memory access (or another fault that ends the CUDA context)."""


class KernelAssertionError(AssertionError):
    """A ``tl.device_assert`` failed on the GPU."""


def grid_error(kernel: str, grid: tuple, exc: BaseException) -> ValueError:
    """A grid the launch call could not convert to the driver's integers."""
    return ValueError(f"kernel `{kernel}`: grid {grid} must be integers, x < 2**31 and y, z <= 65535 programs "
                      f"({exc})")


def fault_message(err_name: str, kernel: Optional[str], when: str) -> str:
    culprit = f"kernel `{kernel}`" if kernel else "a kernel"
    recent = ", ".join(f"`{k}`" for k in list(_last_launched)[-4:]) or "none recorded"
    return (f"{culprit} faulted ({err_name}: an out-of-bounds or misaligned memory access, or another device "
            f"exception), detected {when}; kernels launched since the last synchronization: {recent}. The CUDA "
            "context cannot be used after this: restart the process. To find the access, run the kernel in the "
            "interpreter (TRITON_INTERPRET=1), which checks every load and store against the arrays' bounds, "
            "or set CUDA_LAUNCH_BLOCKING=1 so that the first faulting launch raises.")


_FAULTS = ("CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_MISALIGNED_ADDRESS", "CUDA_ERROR_ILLEGAL_INSTRUCTION",
           "CUDA_ERROR_LAUNCH_FAILED", "CUDA_ERROR_HARDWARE_STACK_ERROR", "CUDA_ERROR_INVALID_PC",
           "CUDA_ERROR_ASSERT", "CUDA_ERROR_LAUNCH_TIMEOUT")
