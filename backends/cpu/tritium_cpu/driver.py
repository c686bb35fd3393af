"""Running compiled kernels on the host: load the object file in-process and pick its launcher (launcher.py
packs the arguments and calls the code; checked.py adds the bounds checks).
"""
from __future__ import annotations

import ctypes
import threading
from typing import Any, Callable

from tritium.backends.compiler import GPUTarget
from tritium.backends.driver import DriverBase
from tritium.llvmir.jit_symbols import add_process_symbols

from .checked import CheckedLauncher
from .launcher import (  # noqa: F401  (re-exported: the launcher's names lived here)
    _SLOT_FORMATS, CPULauncher, KernelAssertionError, _libc, cpu_count)


class CPUDriver(DriverBase):
    #: what a launcher expects of an object and its metadata (tritium.load_compiled refuses other versions):
    #: ``<symbol>_launch(args, n0, n1, n2, nthreads, cancel)``, 8-byte slots by ``arg_types``, the
    #: ``_assert_state`` and ``_nomem`` globals. Bump when any of these changes.
    aot_abi = 1

    def __init__(self) -> None:
        self._target: Any = None

    #: the stage ``c_launcher`` is given: it emits a linkable object from the IR (the ``obj`` stage is for MCJIT)
    c_launcher_stage = "llir"

    @staticmethod
    def c_launcher(header: dict, llir: str, stem: str) -> dict[str, bytes]:
        """``tritium compile --emit-c``: a C header, launcher and the object, for C and C++ hosts."""
        from .aot_c import c_launcher
        return c_launcher(header, llir, stem)

    def check_binary(self, metadata: dict) -> None:
        """Refuse an object this host cannot execute: another architecture, or instruction sets it lacks."""
        import llvmlite.binding as llvm
        from .isa import _host_features
        triple = metadata.get("cpu_triple") or ""
        host = llvm.get_process_triple()
        if triple.split("-")[0] != host.split("-")[0]:
            raise RuntimeError(f"kernel `{metadata.get('name')}` was compiled for {triple or 'an unknown triple'}, "
                               f"this host is {host}: compile it for this architecture")
        have = _host_features()
        wanted = [f[1:] for f in (metadata.get("cpu_features") or "").split(",") if f.startswith("+")]
        missing = sorted(set(wanted) - have) if have is not None else []
        if missing:
            raise RuntimeError(
                f"kernel `{metadata.get('name')}` was compiled for CPU {metadata.get('cpu_name')} with instruction "
                f"sets this host's CPU ({llvm.get_host_cpu_name()}) lacks: {', '.join(missing)}. Compile it for a "
                "level both machines run: set TRITIUM_CPU_TARGET and TRITIUM_CPU_FEATURES as "
                "`python -m tritium_cpu.isa` prints them (e.g. its avx2 line) when running `tritium compile`")

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

    @property
    def utils(self) -> "CPUUtils":
        return _UTILS

    def get_device_interface(self) -> Any:
        import torch
        return torch.cpu

    def make_launcher(self, kernel: Any) -> CPULauncher:
        import llvmlite.binding as llvm
        from .crosscompile import no_run_launcher
        if (launcher := no_run_launcher(kernel)) is not None:   # compile-only, or code for another triple
            return launcher
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
        _describe_for_occupancy(kernel)
        if kernel.metadata_dict.get("bounds_check"):
            return CheckedLauncher(kernel, engine, address, names)
        return CPULauncher(kernel, engine, address, names)

    def get_benchmarker(self) -> Callable[..., Any]:
        from tritium.testing import do_bench
        return do_bench


class CPUUtils:
    """``driver.active.utils``: what tutorials ask of the device, answered for the host."""

    @staticmethod
    def get_device_properties(device: Any = None) -> dict[str, Any]:
        # the names GPU code reads; a "multiprocessor" here is a core, and a program runs on one core
        return {"multiprocessor_count": cpu_count(), "max_shared_mem": _l2_cache_bytes(), "max_num_regs": 1 << 16,
                "warpSize": 1, "sm_clock_rate": 0, "mem_clock_rate": 0, "mem_bus_width": 0,
                "max_threads_per_block": 1}


def _describe_for_occupancy(kernel: Any) -> None:
    """GPU code sizes persistent grids from registers and shared memory per program
    (``regs // (n_regs * warpSize * num_warps)``, ``max_shared_mem // shared``). On the host one program
    occupies one core, so report the figures that make both ratios 1."""
    props = CPUUtils.get_device_properties()
    num_warps = max(1, int(kernel.metadata_dict.get("num_warps", 1) or 1))
    kernel.n_regs = max(1, props["max_num_regs"] // (props["warpSize"] * num_warps))
    kernel.n_spills = 0
    kernel.n_max_threads = 1
    if not kernel.metadata.shared:
        kernel.metadata = kernel.metadata._replace(shared=props["max_shared_mem"])


def _l2_cache_bytes() -> int:
    try:
        with open("/sys/devices/system/cpu/cpu0/cache/index2/size") as f:
            text = f.read().strip().upper()
        return int(text[:-1]) * 1024 if text.endswith("K") else int(text)
    except (OSError, ValueError):
        return 1 << 20


_UTILS = CPUUtils()
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


_PROCESS_SYMBOLS = ("pthread_create", "pthread_join", "aligned_alloc", "free", "printf", "fflush", "exp", "exp2",
                    "log", "log2", "sin", "cos", "erf", "tanh", "pow", "powf", "fmod", "fmodf", "expf", "logf")


def _load_process_symbols() -> None:
    """Tell the JIT linker where the C library functions our code calls live in this process."""
    global _symbols_loaded
    if not _symbols_loaded:
        libc = _libc()
        libm = ctypes.CDLL("libm.so.6")
        from .codegen.mathlib_extra import C_SYMBOLS
        add_process_symbols(_PROCESS_SYMBOLS + tuple(sorted(C_SYMBOLS)), (libc, libm))
        _symbols_loaded = True


def _runtime_arg_names(kernel: Any) -> list[str]:
    src = kernel.src
    sig = getattr(src, "signature", {}) or {}
    return [name for name, ty in sig.items() if ty != "constexpr"]
