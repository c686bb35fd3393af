"""What a backend's driver must provide: finding devices and launching compiled kernels."""
from __future__ import annotations

from abc import ABCMeta, abstractmethod
from typing import Any, Callable

#: launch grids per axis (x, y, z); program ids are signed 32-bit integers on every backend
DEFAULT_MAX_GRID = (2**31 - 1, 2**31 - 1, 2**31 - 1)


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

    #: the torch device type of the memory this driver's kernels use; ``warmup``'s typed stand-ins take it,
    #: so that they specialize like real arrays
    device_type = "cpu"

    def accepts_device(self, device: str) -> bool:
        """Whether kernels of this driver can use memory of ``device`` (a torch device type, "cpu" for numpy
        arrays). Asked once per specialization."""
        return device == self.device_type

    def max_grid(self) -> tuple[int, int, int]:
        """The most programs a launch may have along x, y and z; larger grids are refused before launching.
        Program ids are signed 32-bit integers, hence the default; a device whose y and z axes are narrower
        (65535 on many GPUs) reports that. Asked once per kernel and driver."""
        return DEFAULT_MAX_GRID

    def get_benchmarker(self) -> Callable[..., Any]:
        from ..testing import do_bench
        return do_bench

    def get_empty_cache_for_benchmark(self) -> Any:
        return None

    def clear_cache(self, cache: Any) -> None:
        return None

    def synchronize(self) -> None:
        return None
