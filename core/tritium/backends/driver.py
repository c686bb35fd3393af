"""What a backend's driver must provide: finding devices and launching compiled kernels."""
from __future__ import annotations

from abc import ABCMeta, abstractmethod
from typing import Any, Callable

#: launch grids per axis (x, y, z); program ids are signed 32-bit integers on every backend
DEFAULT_MAX_GRID = (2**31 - 1, 2**31 - 1, 2**31 - 1)


class DeviceUtils:
    """What ``driver.active.utils`` offers. Triton's host code sizes persistent grids from
    ``utils.get_device_properties(device)``; a driver that can describe its device returns its own object from
    ``DriverBase.utils``."""

    def get_device_properties(self, device: Any = None) -> dict[str, Any]:
        """The properties of ``device`` (the current one when None), as a dict with at least these keys:

        - ``multiprocessor_count``: how many programs the device runs at the same time, at one per unit
        - ``max_shared_mem``: bytes of shared memory one program may use (``kernel.metadata.shared`` divides it)
        - ``max_num_regs``: 32-bit registers of one unit, shared by the threads of its programs
          (``kernel.n_regs * warpSize * num_warps`` divides it)
        - ``warpSize``: threads per warp

        Drivers may add more (e.g. ``max_threads_per_block``, clock rates, memory bus width)."""
        raise NotImplementedError("this driver does not report its device's properties "
                                  "(driver.active.utils.get_device_properties): size the launch grid by hand")


#: the location of a torch CPU tensor in page-locked memory, for drivers whose memory is not the host's
PINNED_HOST = "cpu_pinned"


def tells_pinned_apart(drv: Any) -> bool:
    """Whether launches on ``drv`` key a pinned CPU tensor (``PINNED_HOST``) apart from a pageable one ("cpu"):
    where its kernels reach pinned host memory and not the rest. Nowhere else does a launch pay for the test."""
    accepts = getattr(drv, "accepts_device", None)
    return accepts is not None and bool(accepts(PINNED_HOST)) and not accepts("cpu")


class DriverBase(metaclass=ABCMeta):
    """A runtime for one kind of device. Instances are created lazily, once per process."""

    @classmethod
    @abstractmethod
    def is_active(cls) -> bool:
        """True when this driver's device is present (must be cheap and must not raise)."""

    @abstractmethod
    def get_current_target(self) -> Any:
        """The GPUTarget of the current device."""

    @abstractmethod
    def get_current_device(self) -> Any:
        ...

    def set_current_device(self, device: Any) -> None:
        return None

    def get_current_stream(self, device: Any = None) -> Any:
        return 0

    def get_active_torch_device(self) -> Any:
        return None

    @abstractmethod
    def make_launcher(self, kernel: Any) -> Callable[..., None]:
        """Return ``launch(grid, args)`` for a CompiledKernel; built once per kernel, not per call. ``grid`` is
        three ints; ``args`` the run-time arguments in signature order, arrays as integer addresses."""

    #: the launch statements core writes into each kernel's cached-launch frame, for kernels whose launcher
    #: offers ``inline_constants`` (a tuple the statements read): see tritium.runtime.inline_launch. None: every
    #: cached launch calls the launcher.
    inline_launch: Any = None

    #: the torch device type of the memory this driver's kernels use; ``warmup``'s typed stand-ins take it,
    #: so that they specialize like real arrays
    device_type = "cpu"

    def accepts_device(self, device: str) -> bool:
        """Whether kernels of this driver can use memory of ``device`` (a torch device type, "cpu" for numpy
        arrays). Asked once per specialization. A driver whose kernels address page-locked host memory directly
        (unified addressing) and not the rest accepts ``PINNED_HOST`` and refuses "cpu": a torch CPU tensor
        (``pin_memory()``) is then asked about as one or the other (tells_pinned_apart)."""
        return device == self.device_type

    def max_grid(self) -> tuple[int, int, int]:
        """The most programs a launch may have along x, y and z; larger grids are refused before launching.
        Program ids are signed 32-bit integers, hence the default; a device whose y and z axes are narrower
        (65535 on many GPUs) reports that. Asked once per kernel and driver."""
        return DEFAULT_MAX_GRID

    @property
    def utils(self) -> DeviceUtils:
        """``driver.active.utils``: see DeviceUtils. The default reports nothing (its method raises)."""
        return DeviceUtils()

    def get_benchmarker(self) -> Callable[..., Any]:
        from ..testing import do_bench
        return do_bench

    def get_empty_cache_for_benchmark(self) -> Any:
        return None

    def clear_cache(self, cache: Any) -> None:
        return None

    def synchronize(self) -> None:
        return None
