"""Running compiled kernels on the host: load the object file in-process, pack arguments, launch.

The native launcher spreads the grid over threads itself (pthreads), and ctypes releases the GIL for the
call, so a launch costs one ctypes call plus argument packing, which is built once per kernel.
"""
from __future__ import annotations

import ctypes
import os
import struct
import threading
from typing import Any, Callable

from tritium import knobs
from tritium.backends.compiler import GPUTarget
from tritium.backends.driver import DriverBase

from .knobs import cpu as cpu_knobs

_LAUNCH = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32)
_F32 = struct.Struct("<f")
_U32 = struct.Struct("<I")
_F64 = struct.Struct("<d")
_U64 = struct.Struct("<Q")
_MASK64 = (1 << 64) - 1


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class KernelAssertionError(AssertionError):
    """A ``tl.device_assert`` failed while the kernel ran."""


def _pack_ptr(kernel: str, name: str) -> Callable[[Any], int]:
    def pack(v: Any) -> int:
        device = v.device
        if device not in ("cpu", "mock"):
            raise TypeError(f"argument `{name}` of kernel `{kernel}` lives on device '{device}', but the CPU backend "
                            "runs on the host: pass a CPU tensor or numpy array (e.g. x.cpu()), or run on a GPU "
                            "backend")
        return v.address
    return pack


def _pack_int(v: Any) -> int:
    return int(v) & _MASK64


def _pack_f32(v: Any) -> int:
    return _U32.unpack(_F32.pack(v))[0]


def _pack_f64(v: Any) -> int:
    return _U64.unpack(_F64.pack(v))[0]


class CPULauncher:
    def __init__(self, kernel: Any, engine: Any, address: int, arg_names: list[str]) -> None:
        md = kernel.metadata_dict
        self.kernel = kernel
        self.engine = engine  # keeps the code alive
        self.fn = _LAUNCH(address)
        types = md.get("arg_types", [])
        self.slots = ctypes.c_uint64 * max(1, len(types))
        packers: list[Callable[[Any], int]] = []
        for name, t in zip(arg_names, types):
            if t == "ptr":
                packers.append(_pack_ptr(kernel.name, name))
            elif t == "float":
                packers.append(_pack_f32)
            elif t == "double":
                packers.append(_pack_f64)
            else:
                packers.append(_pack_int)
        self.packers = packers
        self.work = int(md.get("cpu_work", 1))
        self.has_print = bool(md.get("has_print"))
        self.assert_state = None
        if md.get("has_assert"):
            addr = engine.get_global_value_address(f"{md['symbol']}_assert_state")
            self.assert_state = _AssertState.from_address(addr)
        self.cores = cpu_count()

    def __call__(self, grid: tuple[int, int, int], args: list[Any]) -> None:
        packers = self.packers
        if len(args) != len(packers):
            raise TypeError(f"kernel `{self.kernel.name}` expects {len(packers)} run-time arguments, got {len(args)}")
        slots = self.slots(*[p(a) for p, a in zip(packers, args)])
        total = grid[0] * grid[1] * grid[2]
        nthreads = knobs.runtime.num_threads or self.cores
        if total * self.work < cpu_knobs.parallel_threshold:
            nthreads = 1
        self.fn(ctypes.addressof(slots), grid[0], grid[1], grid[2], nthreads)
        if self.has_print:
            _libc().fflush(None)
        if self.assert_state is not None and self.assert_state.failed:
            s = self.assert_state
            msg = ctypes.string_at(s.message).decode(errors="replace") if s.message else "assertion failed"
            pid = (s.pid0, s.pid1, s.pid2)
            index = s.index
            ctypes.memset(ctypes.addressof(s), 0, ctypes.sizeof(s))
            raise KernelAssertionError(f"device_assert failed in kernel `{self.kernel.name}` at {msg} "
                                       f"(program id {pid}, element {index})")


class _AssertState(ctypes.Structure):
    _fields_ = [("failed", ctypes.c_int32), ("pid0", ctypes.c_int32), ("pid1", ctypes.c_int32),
                ("pid2", ctypes.c_int32), ("index", ctypes.c_int64), ("message", ctypes.c_void_p)]


_libc_handle = None


def _libc() -> Any:
    global _libc_handle
    if _libc_handle is None:
        _libc_handle = ctypes.CDLL(None)
    return _libc_handle


class CPUDriver(DriverBase):
    def __init__(self) -> None:
        self._target: Any = None

    @classmethod
    def is_active(cls) -> bool:
        return True

    def get_current_target(self) -> GPUTarget:
        if self._target is None:
            from .compiler import host_cpu
            cpu, _ = host_cpu()
            self._target = GPUTarget("cpu", cpu, 1)
        return self._target

    def get_current_device(self) -> int:
        return 0

    def get_active_torch_device(self) -> Any:
        import torch
        return torch.device("cpu")

    def make_launcher(self, kernel: Any) -> CPULauncher:
        import llvmlite.binding as llvm
        symbol = kernel.metadata_dict["symbol"]
        with _engine_lock:
            engine = _engine()
            address = engine.get_function_address(f"{symbol}_launch")
            if not address:
                engine.add_object_file(llvm.ObjectFileRef.from_data(kernel.kernel))
                engine.finalize_object()
                address = engine.get_function_address(f"{symbol}_launch")
        if not address:
            raise RuntimeError(f"kernel `{kernel.name}`: symbol {symbol}_launch not found in its object file")
        names = _runtime_arg_names(kernel)
        return CPULauncher(kernel, engine, address, names)

    def get_benchmarker(self) -> Callable[..., Any]:
        from tritium.testing import do_bench
        return do_bench


_symbols_loaded = False
_engine_lock = threading.Lock()
_engine_obj: Any = None


def _engine() -> Any:
    """One JIT engine for the process: every kernel's object file is linked into it (symbol names carry
    the kernel's hash, so they never collide). The engine owns its target machine and lives forever,
    like a loaded shared library."""
    global _engine_obj
    if _engine_obj is None:
        import llvmlite.binding as llvm
        from .compiler import host_cpu
        llvm.initialize_all_targets()
        llvm.initialize_all_asmprinters()
        _load_process_symbols()
        cpu, features = host_cpu()
        tm = llvm.Target.from_default_triple().create_target_machine(cpu=cpu, features=features, opt=0)
        _engine_obj = llvm.create_mcjit_compiler(llvm.parse_assembly(""), tm)
    return _engine_obj


_PROCESS_SYMBOLS = ("pthread_create", "pthread_join", "printf", "fflush", "exp", "exp2", "log", "log2", "sin", "cos",
                    "erf", "tanh", "pow", "powf", "fmod", "fmodf", "expf", "logf")


def _load_process_symbols() -> None:
    """Tell the JIT linker where the C library functions our code calls live in this process."""
    global _symbols_loaded
    if not _symbols_loaded:
        import llvmlite.binding as llvm
        libc = _libc()
        libm = ctypes.CDLL("libm.so.6")
        for name in _PROCESS_SYMBOLS:
            for lib in (libc, libm):
                try:
                    fnptr = getattr(lib, name)
                except AttributeError:
                    continue
                llvm.add_symbol(name, ctypes.cast(fnptr, ctypes.c_void_p).value)
                break
        _symbols_loaded = True


def _runtime_arg_names(kernel: Any) -> list[str]:
    src = kernel.src
    sig = getattr(src, "signature", {}) or {}
    return [name for name, ty in sig.items() if ty != "constexpr"]
