"""Running compiled kernels on NVIDIA GPUs through cuda-bindings.

``make_launcher(kernel)`` builds, once per kernel, a CudaLauncher: the parameters' layout (arguments.py) and the
launch itself as one generated function (``hot_call``, hot_launch.py), which packs the arguments and makes one
driver call (the call chosen by launch_call.py) on the current device and the current torch stream (the legacy
default stream without torch). The common case of that call is also written into core's cached-launch frame
(``CudaDriver.inline_launch``, hot_launch.INLINE_BODY), so that a cached launch runs one Python frame fewer; the
rest falls through to ``hot_call``. The module is loaded per device on first launch, where its resource needs
are checked against the device's limits. What a failure raises is in faults.py.
"""
from __future__ import annotations

import ctypes
import os
import struct
import sys
import threading
from typing import Any, Callable, Optional

from tritium.backends.compiler import GPUTarget
from tritium.backends.driver import DEFAULT_MAX_GRID, PINNED_HOST, DriverBase

from .arguments import ArgumentBuffer
from .arguments import _setter as setter
from .faults import _FAULTS, KernelAssertionError, KernelFault, OutOfResources, _last_launched, fault_message
from .faults import _recent  # noqa: F401 - read by the generated launch (hot_launch.py) from this namespace
from . import launch_call
from .hot_launch import blocking_check, inline_constants, inline_launch, launch_factory
from .knobs import nvidia as nv_knobs


def _torch() -> Any:
    t = sys.modules.get("torch")
    if t is not None and getattr(t, "cuda", None) is not None and t.cuda.is_initialized():
        return t
    return None


_torch_c: Any = None  # torch._C once torch's CUDA is initialized (it stays so): the launch path's device/stream
launch_call.driver_globals = globals()  # where the cached launch's native step reads _torch_c


def _find_torch_c() -> Any:
    global _torch_c
    t = _torch()
    if t is not None:
        _torch_c = t._C
    return _torch_c


_make_launch = launch_factory(globals())
_blocking_may_be_set = blocking_check(globals())


class CudaLauncher:
    def __init__(self, kernel: Any, drv: "CudaDriver") -> None:
        md = kernel.metadata_dict
        self.kernel = kernel
        self.name = kernel.name
        self.driver = drv
        self.types = list(md["arg_types"])
        self.num_warps = int(md["num_warps"])
        self.block = self.num_warps * 32
        self.shared = int(md.get("shared", 0))
        # a program is a cluster of num_ctas CTAs along x (the cubin's .reqnctapercluster; Triton's grid arithmetic)
        self.num_ctas = int(md.get("num_ctas", 1) or 1)
        self.arguments = ArgumentBuffer(self.types, md.get("tensor_map_params"), kernel)
        self.params_addr = self.arguments.params_addr
        self.functions: dict[int, Any] = {}
        self.handles: dict[int, int] = {}   # the functions' CUfunction handles as ints, what the launch call takes
        self.modules: dict[int, Any] = {}
        self.assert_state: dict[int, int] = {}
        self.has_assert = bool(md.get("has_assert"))
        # tensor maps built on the device live in module globals that every launch rewrites: two launches on
        # different streams must not run at once (see _order_after_previous_launch)
        self.orders_streams = bool(md.get("tensor_map_globals"))
        self.last_stream: dict[int, int] = {}
        self.order_events: dict[int, Any] = {}
        self.messages = list(md.get("assert_messages", []))
        self.lock = threading.Lock()
        # what Triton's _init_handles reports, known from ptxas before any device loads the binary (Triton's
        # tutorial 02 sizes its grid from them after warmup); load() replaces them with the device's figures
        kernel.n_regs = int(md.get("n_regs", 0) or 0)
        kernel.n_spills = int(md.get("n_spills", 0) or 0)
        args = self.arguments
        # struct packs the Python values as they are: no setter, no tensor map, no stream ordering to do first
        fast = args.pack_directly and args.maps is None and not self.orders_streams
        #: ``hot_call(grid, args)``: the launch as a plain function (what core's cached launch calls; calling the
        #: object goes through its type's __call__ first)
        offsets = struct.pack(f"@{len(args.offsets)}Q", *args.offsets)
        # host tensor maps with nothing else to do first: packed and written under the lock without the two
        # frames of _pack and ArgumentBuffer.pack (examples/08 launches three maps in every call)
        write_maps = args.maps.write if args.pack_directly and args.maps is not None and not self.orders_streams \
            else None
        self.hot_call = _make_launch(self, fast, args.packer.pack, args.packer.pack_into, offsets, args.buffer,
                                     self.handles, self.lock, self.shared, self.params_addr, self.num_ctas,
                                     self.name, self.has_assert, write_maps)
        self._inline_ok = fast and self.num_ctas == 1 and not self.has_assert

    def inline_constants(self, keep: Optional[tuple[int, ...]], n: int) -> Optional[tuple]:
        """What the launch written into core's cached-launch frame reads: see hot_launch.inline_constants."""
        return inline_constants(self, keep, n) if self._inline_ok else None

    # -- loading -----------------------------------------------------------------------------------------
    def meta_parameters(self) -> str:
        src = self.kernel.src
        parts = []
        fn = getattr(src, "fn", None)
        for key, v in sorted(getattr(src, "constants", {}).items()):
            name = fn.arg_names[key[0]] if fn is not None and len(key) == 1 else str(key)
            if isinstance(v, int) and not isinstance(v, bool):
                parts.append(f"{name}={v}")
        md = self.kernel.metadata_dict
        parts += [f"num_warps={md.get('num_warps')}", f"num_stages={md.get('num_stages')}"]
        return ", ".join(parts)

    def load(self, device: int) -> Any:
        from . import cuda
        limit = cuda.attribute(device, "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN")
        if self.shared > limit:
            raise OutOfResources(
                f"kernel `{self.name}` needs {self.shared} bytes of shared memory per program, but device {device} "
                f"offers at most {limit}: lower the meta-parameters that size its tiles ({self.meta_parameters()})")
        module = cuda.load_module(self.kernel.kernel)
        func = cuda.get_function(module, self.name)
        n_regs = cuda.function_attribute(func, "NUM_REGS")
        max_threads = cuda.function_attribute(func, "MAX_THREADS_PER_BLOCK")
        if self.block > max_threads:
            regs = cuda.attribute(device, "MAX_REGISTERS_PER_BLOCK")
            raise OutOfResources(
                f"kernel `{self.name}` uses {n_regs} registers per thread; with num_warps={self.num_warps} a program "
                f"of {self.block} threads needs {n_regs * self.block} registers, more than the {regs} device {device} "
                f"offers per program: lower the tile sizes or num_warps ({self.meta_parameters()})")
        if self.shared > 48 * 1024:
            cuda.set_dynamic_shared(func, self.shared)
        self.kernel.n_regs = n_regs
        self.kernel.n_spills = self.kernel.metadata_dict.get("n_spills", 0)
        self.kernel.n_max_threads = max_threads
        self.modules[device] = module
        self.functions[device] = func
        if self.has_assert:
            self.assert_state[device] = cuda.module_global(module, f"{self.name}_assert_state")[0]
        return func

    # -- launching ---------------------------------------------------------------------------------------
    def __call__(self, grid: tuple[int, int, int], args: tuple) -> None:
        self.hot_call(grid, args)

    def _handle(self, device: int) -> int:
        """The kernel's CUfunction on ``device`` as an int (what the launch call takes), loading the module on the
        device's first launch."""
        func = self.functions.get(device)
        handle = self.handles[device] = int(func if func is not None else self.load(device))
        return handle

    def _pack(self, args: tuple, device: int, stream: int) -> None:
        """What a launch does before the driver call where struct alone cannot pack the arguments (bf16, ints
        that wrap, tensor maps, a wrong count) or launches on different streams must be ordered; under the lock."""
        if self.orders_streams:
            self._order_after_previous_launch(device, stream)
        if not self.arguments.pack(args):
            self._arg_error(args, self.arguments.error)

    def _order_after_previous_launch(self, device: int, stream: int) -> None:
        """A launch on another stream than this kernel's previous launch on the device waits for what that stream
        has queued so far, so no two launches share the kernel's tensor-map globals at once; launches on one
        stream are ordered already and pay only this comparison. Not while either stream records a CUDA graph:
        its launches run at replay, which this cannot order (SUPPORT.md)."""
        previous = self.last_stream.get(device)
        self.last_stream[device] = stream
        if previous is None or previous == stream:
            return
        from . import cuda
        event = self.order_events.get(device)
        if event is None:
            event = self.order_events[device] = cuda.create_event()
        try:
            if cuda.is_capturing(stream) or cuda.is_capturing(previous):
                return
            cuda.order_streams(event, previous, stream)
        except cuda.CudaError:
            cuda.synchronize()  # the previous stream is gone (destroyed by its owner): wait for everything instead

    def _arg_error(self, args: tuple, exc: Optional[Exception]) -> None:
        names = _runtime_arg_names(self.kernel)
        if len(args) != len(self.types):
            raise TypeError(f"kernel `{self.name}` takes {len(self.types)} run-time arguments ({', '.join(names)}), "
                            f"got {len(args)}")
        for name, t, a in zip(names, self.types, args):
            try:
                setter(t)(a)  # type: ignore[misc]
            except (TypeError, ValueError):
                raise TypeError(f"argument `{name}` of kernel `{self.name}` must be a {t} value, got {a!r}") from exc
        raise TypeError(f"kernel `{self.name}`: cannot pass its arguments: {exc}") from exc

    def _launch_error(self, err: Any, grid: tuple) -> None:
        from . import cuda
        name, desc = cuda.error_text(err)
        if name == "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES":
            raise OutOfResources(f"kernel `{self.name}` cannot be launched with {self.block} threads and {self.shared} "
                                 f"bytes of shared memory per program ({desc}): lower the tile sizes or num_warps "
                                 f"({self.meta_parameters()})")
        if name in _FAULTS:
            # with CUDA_LAUNCH_BLOCKING the driver reports a kernel's fault from its own launch
            culprit = self.name if nv_knobs.launch_blocking else None
            raise KernelFault(fault_message(name, culprit, f"when launching `{self.name}`"))
        if name == "CUDA_ERROR_INVALID_VALUE":
            raise ValueError(f"kernel `{self.name}`: the driver refused the launch ({desc}); grid {grid} must have "
                             "x < 2**31 and y, z <= 65535 programs")
        raise cuda.CudaError(f"launching kernel `{self.name}` failed: {name} ({desc})", name)

    def _check_after(self, device: int, stream: int) -> None:
        from . import cuda
        try:
            cuda.stream_synchronize(stream)
        except cuda.CudaError as exc:
            if exc.code in _FAULTS:
                raise KernelFault(fault_message(exc.code, self.name, "right after its launch")) from None
            raise
        _last_launched.clear()
        if self.has_assert:
            addr = self.assert_state[device]
            raw = cuda.read_device(addr, 24)
            failed, p0, p1, p2, index, elem = struct.unpack("<6i", raw)
            if failed:
                cuda.zero_device(addr, 24)
                msg = self.messages[index] if 0 <= index < len(self.messages) else "assertion failed"
                raise KernelAssertionError(f"device_assert failed in kernel `{self.name}` at {msg} (program id "
                                           f"{(p0, p1, p2)}, element {elem})")


def _runtime_arg_names(kernel: Any) -> list[str]:
    sig = getattr(kernel.src, "signature", {}) or {}
    return [name for name, ty in sig.items() if ty != "constexpr"]


#: CUDA's grid limits on every device since compute capability 3.0: gridDim.x up to 2**31-1, y and z up to 65535;
#: used when the device cannot be asked (no driver, or a device that is gone), the launch then reports the failure
CUDA_MAX_GRID = (2**31 - 1, 65535, 65535)


class CudaDriver(DriverBase):
    _active: Optional[bool] = None
    #: torch's name for the memory these kernels use: warmup's typed stand-ins key as CUDA tensors, and the
    #: cached launch tests ``x.is_cuda`` first instead of building ``x.device`` (it was "cpu", DriverBase's,
    #: until the twentieth session: warmup then compiled a 'cpu'-keyed kernel no real launch used)
    device_type = "cuda"
    #: what CudaLauncher expects of a cubin and its metadata (tritium.load_compiled refuses other versions): the
    #: kernel's entry named as the kernel, parameters by ``arg_types``, ``num_warps * 32`` threads, ``shared``
    #: dynamic bytes, the ``<name>_assert_state`` global. Bump when any of these changes. 2: after the parameters
    #: of ``arg_types``, one 128-byte tensor map per ``tensor_map_params`` entry (tensor_maps.py)
    aot_abi = 2
    #: see tritium.runtime.inline_launch
    inline_launch = inline_launch(sys.modules[__name__])

    @staticmethod
    def c_launcher(header: dict, binary: bytes, stem: str) -> dict[str, bytes]:
        """``tritium compile --emit-c``: a C header and a launcher embedding the cubin, for C and C++ hosts."""
        from .aot import c_launcher
        return c_launcher(header, binary, stem)

    def check_binary(self, metadata: dict) -> None:
        """Refuse a cubin the current device cannot run (tritium.load_compiled)."""
        from . import cuda
        from .aot import check_arch
        device = self.get_current_device()
        check_arch(metadata, device, cuda.capability(device))

    def __init__(self) -> None:
        self._targets: dict[int, GPUTarget] = {}
        self._max_grids: dict[int, tuple[int, int, int]] = {}

    @classmethod
    def is_active(cls) -> bool:
        if cls._active is None:
            cls._active = _probe()
        return cls._active

    def get_current_target(self) -> GPUTarget:
        device = self.get_current_device()
        t = self._targets.get(device)
        if t is None:
            from . import cuda
            t = self._targets[device] = GPUTarget("cuda", cuda.capability(device), 32)
        return t

    def get_current_device(self) -> int:
        torch = _torch()
        if torch is not None:
            return torch._C._cuda_getDevice()
        from . import cuda
        return cuda.current_device()

    def set_current_device(self, device: Any) -> None:
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_available():
            torch.cuda.set_device(device)
            return
        from . import cuda
        cuda.ensure_context(int(device))

    def get_current_stream(self, device: Any = None) -> int:
        torch = _torch()
        if torch is None:
            return 0
        return torch._C._cuda_getCurrentRawStream(self.get_current_device() if device is None else device)

    def get_active_torch_device(self) -> Any:
        import torch
        return torch.device("cuda", self.get_current_device())

    def get_device_interface(self) -> Any:
        import torch
        return torch.cuda

    def accepts_device(self, device: str) -> bool:
        # page-locked host memory (torch's pin_memory) is addressable from kernels at its host address: every
        # 64-bit CUDA platform tritium runs on has unified addressing, as Triton's launcher assumes too
        return device in ("cuda", "mock", PINNED_HOST)

    def make_launcher(self, kernel: Any) -> CudaLauncher:
        return CudaLauncher(kernel, self)

    def max_grid(self) -> tuple[int, int, int]:
        """The current device's MAX_GRID_DIM_X/Y/Z (y and z are 65535 where x is 2**31-1), so that a grid too
        large along y or z is refused with the kernel's name instead of failing in cuLaunchKernel. Capped at
        core's limits: program ids are signed 32-bit integers whatever the device allows."""
        try:
            from . import cuda
            device = self.get_current_device()
            limits = self._max_grids.get(device)
            if limits is None:
                limits = tuple(min(cuda.attribute(device, f"MAX_GRID_DIM_{axis}"), cap)
                               for axis, cap in zip("XYZ", DEFAULT_MAX_GRID))
                self._max_grids[device] = limits  # type: ignore[assignment]
            return limits  # type: ignore[return-value]
        except (ImportError, OSError, RuntimeError):   # CudaError, a missing libcuda: see CUDA_MAX_GRID
            return CUDA_MAX_GRID

    def synchronize(self) -> None:
        from . import cuda
        try:
            torch = _torch()
            if torch is not None:
                torch.cuda.synchronize()
            else:
                cuda.synchronize()
        except cuda.CudaError as exc:
            if exc.code in _FAULTS:
                raise KernelFault(fault_message(exc.code, _last_launched[-1] if _last_launched else None,
                                                "at synchronization")) from None
            raise
        except RuntimeError as exc:   # torch's message for the same fault
            if "illegal memory access" in str(exc) or "misaligned address" in str(exc):
                raise KernelFault(fault_message("CUDA_ERROR_ILLEGAL_ADDRESS",
                                                _last_launched[-1] if _last_launched else None,
                                                "at synchronization")) from exc
            raise
        _last_launched.clear()

    @property
    def utils(self) -> "CudaUtils":
        return CudaUtils()

    def get_benchmarker(self) -> Callable[..., Any]:
        from .bench import do_bench
        return do_bench

    def get_empty_cache_for_benchmark(self) -> Any:
        import torch
        return torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda")

    def clear_cache(self, cache: Any) -> None:
        cache.zero_()


class CudaUtils:
    @staticmethod
    def get_device_properties(device: Any = None) -> dict[str, Any]:
        from . import cuda
        d = int(device) if device is not None else CudaDriver().get_current_device()
        a = lambda n: cuda.attribute(d, n)  # noqa: E731
        return {"multiprocessor_count": a("MULTIPROCESSOR_COUNT"), "max_shared_mem": a("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"),
                "max_num_regs": a("MAX_REGISTERS_PER_BLOCK"), "warpSize": a("WARP_SIZE"),
                "sm_clock_rate": a("CLOCK_RATE"), "mem_clock_rate": a("MEMORY_CLOCK_RATE"),
                "mem_bus_width": a("GLOBAL_MEMORY_BUS_WIDTH"), "max_threads_per_block": a("MAX_THREADS_PER_BLOCK")}


def _probe() -> bool:
    """Cheap and silent: is an NVIDIA driver with at least one device usable from this process?"""
    try:
        if not (os.path.exists("/dev/nvidiactl") or os.path.exists("/dev/nvidia0") or ctypes.util.find_library("cuda")):
            return False
        from . import cuda
        return cuda.device_count() > 0
    except Exception:
        return False


import ctypes.util  # noqa: E402  (find_library, used by the probe)
