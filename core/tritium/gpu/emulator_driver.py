"""The GPU emulator's driver: it loads a kernel's object into an MCJIT engine and launches it, every GPU thread
of a program an OS thread, and describes the emulated device."""
from __future__ import annotations

import ctypes
import functools
import struct
import threading
from typing import Any

from ..backends.compiler import GPUTarget
from ..backends.driver import DeviceUtils, DriverBase
from . import emulator_libdevice, emulator_link
from .emulator_target import BARRIER_BYTES, NAME, EmulatorTarget, new_host_machine

# the register file the emulator describes (utils.get_device_properties): 32-bit registers per multiprocessor,
# and at most this many per thread, as on the GPUs whose tutorials size grids from them
MAX_NUM_REGS = 65536
MAX_REGS_PER_THREAD = 255

# a kernel's per-thread entry, emu_thread(args, rt, tid, n0, n1, n2, smem) (emulator_target.thread_main)
_THREAD = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32,
                           ctypes.c_int32, ctypes.c_void_p)


class EmulatedAssertionError(AssertionError):
    """A device_assert failed in an emulated kernel."""


class EmulatorLauncher:
    """Launches one loaded kernel: a grid runs on num_warps * warp_size host threads sharing one CTA's state."""

    def __init__(self, kernel: Any, engine: Any) -> None:
        md = kernel.metadata_dict
        # the kernel holds its launcher: keep only its name, so that no cycle delays freeing the engine until the
        # cyclic collector runs (each engine holds the kernel's code and a target machine)
        self.name, self.engine = kernel.name, engine
        self.fn = _THREAD(engine.get_function_address(f"{kernel.name}_thread"))
        self.types = md["arg_types"]
        self.num_warps = md["num_warps"]
        self.warp_size = md.get("warp_size", 32)
        self.num_ctas = int(md.get("num_ctas", 1) or 1)
        self.shared = max(16, md["shared"])
        self.state = engine.get_global_value_address(f"{kernel.name}_assert_state") if md.get("has_assert") else 0
        self.messages = md.get("assert_messages", [])
        # Triton's _init_handles figures (tutorials size persistent grids from them). The emulator's threads run on
        # host registers, so n_regs is the lowering's estimate from the layouts (gpu/lower/regs.py), capped as a
        # GPU register allocator must: at most MAX_REGS_PER_THREAD, and few enough that one program of
        # num_warps warps fits in a multiprocessor's MAX_NUM_REGS; the words over the cap are reported as spills.
        threads = self.num_warps * self.warp_size
        estimate = max(1, int(md.get("regs_estimate", 0) or 0))
        kernel.n_regs = min(estimate, MAX_REGS_PER_THREAD, MAX_NUM_REGS // threads)
        kernel.n_spills = estimate - kernel.n_regs
        kernel.n_max_threads = threads

    def __call__(self, grid: tuple[int, int, int], args: list[Any]) -> None:
        slots = (ctypes.c_uint64 * max(1, len(args)))(*[_pack(t, a, self.name) for t, a in zip(self.types, args)])
        threads = self.num_warps * self.warp_size
        libc = _libc()
        cta = ctypes.create_string_buffer(BARRIER_BYTES)
        warps = ctypes.create_string_buffer(BARRIER_BYTES * self.num_warps)
        libc.pthread_barrier_init(cta, None, threads)
        for w in range(self.num_warps):
            libc.pthread_barrier_init(ctypes.byref(warps, w * BARRIER_BYTES), None, self.warp_size)
        shfl = (ctypes.c_int32 * threads)()
        smem = ctypes.create_string_buffer(self.shared + 64)
        smem_addr = (ctypes.addressof(smem) + 63) // 64 * 64
        rt = (ctypes.c_void_p * 3)(ctypes.addressof(cta), ctypes.addressof(warps), ctypes.addressof(shfl))
        workers = [threading.Thread(target=self.fn, args=(ctypes.addressof(slots), ctypes.addressof(rt), t,
                                                          grid[0] * self.num_ctas, grid[1], grid[2], smem_addr))
                   for t in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        libc.pthread_barrier_destroy(cta)
        for w in range(self.num_warps):
            libc.pthread_barrier_destroy(ctypes.byref(warps, w * BARRIER_BYTES))
        libc.fflush(None)
        failed = emulator_libdevice.take_error()
        if failed is not None:
            raise RuntimeError(f"kernel `{self.name}`: a libdevice function failed on the emulator: "
                               f"{type(failed).__name__}: {failed}") from failed
        if self.state:
            st = (ctypes.c_int32 * 6).from_address(self.state)
            if st[0]:
                msg = self.messages[st[4]] if 0 <= st[4] < len(self.messages) else "assertion failed"
                pid = (st[1], st[2], st[3])
                ctypes.memset(self.state, 0, 24)
                raise EmulatedAssertionError(f"device_assert failed in kernel `{self.name}` at {msg} "
                                             f"(program id {pid}, element {st[5]})")


@functools.lru_cache(maxsize=None)
def _libc() -> Any:
    return ctypes.CDLL(None)


def _pack(t: str, v: Any, kernel: str) -> int:
    if t.startswith("ptr"):
        return int(v)
    if t == "float":
        return struct.unpack("<I", struct.pack("<f", v))[0]
    if t == "double":
        return struct.unpack("<Q", struct.pack("<d", v))[0]
    return int(v) & ((1 << 64) - 1)


class EmulatorDriver(DriverBase):
    @classmethod
    def is_active(cls) -> bool:
        return True

    def get_current_target(self) -> GPUTarget:
        return GPUTarget(NAME, "host", 32)

    def get_current_device(self) -> int:
        return 0

    def accepts_device(self, device: str) -> bool:
        return device in ("cpu", "mock")

    @property
    def utils(self) -> "EmulatorUtils":
        return EmulatorUtils()

    def make_launcher(self, kernel: Any) -> EmulatorLauncher:
        import llvmlite.binding as llvm
        emulator_link.load_symbols()
        emulator_libdevice.register(kernel.metadata_dict.get("emu_libdevice", []))
        emulator_link.check_symbols(kernel.name, kernel.kernel)
        # the engine (its code, and the machine it owns) is freed with the launcher, i.e. with the kernel
        engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), new_host_machine())
        engine.add_object_file(llvm.ObjectFileRef.from_data(kernel.kernel))
        engine.finalize_object()
        return EmulatorLauncher(kernel, engine)


class EmulatorUtils(DeviceUtils):
    """The emulated device: one multiprocessor (programs run one after another, each on num_warps * 32 host
    threads), the shared memory the target allows, and a GPU-sized register file."""

    def get_device_properties(self, device: Any = None) -> dict[str, Any]:
        return {"multiprocessor_count": 1, "max_shared_mem": EmulatorTarget.max_shared_bytes,
                "max_num_regs": MAX_NUM_REGS, "warpSize": EmulatorTarget.warp_size}
