"""The in-process launcher: packs a launch's arguments into 8-byte slots and calls the kernel's native code.

Below driver.py (which loads the code and picks the launcher) and checked.py (which extends it), so that
neither has to import the other's module to share it.
"""
from __future__ import annotations

import ctypes
import os
import struct
from typing import Any

from tritium import knobs

from . import interrupt
from .knobs import cpu as cpu_knobs

# No argtypes: ctypes then converts only what it is given (bytes -> char*, int -> int), which costs a third
# of a typed call; the launcher is
# ``void launch(void *args, i32 n0, i32 n1, i32 n2, i32 nthreads, i32 *cancel)``.
_LAUNCH = ctypes.CFUNCTYPE(None)
#: struct format of one 8-byte argument slot, by the LLVM type the kernel reads from it
_SLOT_FORMATS = {"ptr": "Q", "float": "f4x", "double": "d", "half": "e6x"}
_MASK64 = (1 << 64) - 1
_NEVER_ADDR = ctypes.addressof(interrupt.NEVER)
_native: Any = None
_native_tried = False


#: launches through ctypes before a launcher switches to the native call: a process that launches little never
#: pays for building it (5-15 ms), one that launches a kernel often saves ~0.25 us a launch from then on
NATIVE_AFTER = 1000


def native_launch() -> Any:
    """One builtin calling any kernel's launch function (its address first), cheaper than ctypes' generic call
    (tritium.llvmir.native_call). None where it cannot be built (ctypes is used then)."""
    global _native, _native_tried
    if not _native_tried:
        from tritium.llvmir.native_call import NativeCallUnavailable, native_caller
        try:
            _native = native_caller(("bytes", "i32", "i32", "i32", "i32", "u64"), "void", name="launch")
        except NativeCallUnavailable:
            _native = None
        _native_tried = True
    return _native


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class KernelAssertionError(AssertionError):
    """A ``tl.device_assert`` failed while the kernel ran."""


def _bf16_bits(v: Any) -> int:
    bits = struct.unpack("<I", struct.pack("<f", float(v)))[0]
    return (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16  # round to nearest even


class CPULauncher:
    """``launcher(grid, args)``: ``grid`` three ints, ``args`` the run-time arguments in signature order
    (arrays as integer addresses). The arguments are packed into 8-byte slots with one ``struct.pack``."""

    def __init__(self, kernel: Any, engine: Any, address: int, arg_names: list[str]) -> None:
        md = kernel.metadata_dict
        self.kernel = kernel
        self.engine = engine  # keeps the code alive
        self.fn = _LAUNCH(address)
        self.fn.argtypes = None
        self.address = address
        self.native = _native if cpu_knobs.native_launch else None   # at once where another launcher built it
        self.until_native = NATIVE_AFTER if cpu_knobs.native_launch else 0   # 0: never
        self.types = list(md.get("arg_types", []))
        self.arg_names = arg_names
        fmt = "".join(_SLOT_FORMATS.get(t, "q") if t != "bfloat" else "H6x" for t in self.types)
        self.pack = struct.Struct("<" + fmt).pack
        self.has_bf16 = "bfloat" in self.types
        self.work = int(md.get("cpu_work", 1))
        self.has_print = bool(md.get("has_print"))
        self.assert_state = None
        if md.get("has_assert"):
            addr = engine.get_global_value_address(f"{md['symbol']}_assert_state")
            self.assert_state = _AssertState.from_address(addr)
        self.cores = cpu_count()
        # launches that may run long go through interrupt.py, so that Ctrl-C stops them
        self.may_loop = bool(md.get("cpu_may_loop", True))
        self.may_block_alone = self.may_loop or self.work >= cpu_knobs.parallel_threshold
        self.nomem = None
        if md.get("cpu_heap_bytes"):
            self.heap_bytes = int(md["cpu_heap_bytes"])
            self.nomem = ctypes.c_int32.from_address(engine.get_global_value_address(f"{md['symbol']}_nomem"))

    def __call__(self, grid: tuple[int, int, int], args: tuple) -> None:
        n0, n1, n2 = grid
        total = n0 * n1 * n2
        if total == 1:
            nthreads = 1
            may_block = self.may_block_alone
        elif total <= 0:
            if total < 0 or n0 < 0 or n1 < 0 or n2 < 0:
                raise ValueError(f"the grid of {self.kernel.name} has a negative size: {grid}")
            return
        else:
            nthreads = knobs.runtime.num_threads or self.cores
            small = total * self.work < cpu_knobs.parallel_threshold
            if small:
                nthreads = 1
            may_block = self.may_loop or not small
        try:
            packed = self.pack(*args)
            if may_block and interrupt.on_main_thread() and cpu_knobs.interruptible:
                interrupt.wait_interruptibly(self.fn, (packed, n0, n1, n2, nthreads))
            elif self.native is not None:   # short, or no signal can come
                self.native(self.address, packed, n0, n1, n2, nthreads, _NEVER_ADDR)
            else:
                self.fn(packed, n0, n1, n2, nthreads, interrupt.NEVER_PTR)
                left = self.until_native - 1   # the thread that counts down to 0 switches (any race only delays)
                self.until_native = left
                if left == 0:
                    self.native = native_launch()
        except (struct.error, ctypes.ArgumentError, TypeError, OverflowError):
            self._checked_call(grid, args, nthreads)
        if self.nomem is not None and self.nomem.value:
            self.nomem.value = 0
            raise MemoryError(f"kernel `{self.kernel.name}` could not allocate its tiles' memory "
                              f"({self.heap_bytes} bytes per thread); use smaller blocks or fewer threads "
                              f"(TRITIUM_NUM_THREADS)")
        if self.has_print:
            _libc().fflush(None)
        if self.assert_state is not None and self.assert_state.failed:
            self._raise_assert()

    def _checked_call(self, grid: tuple, args: tuple, nthreads: int) -> None:
        """The slow path after the fast one failed: say which argument is wrong, or wrap what needs it."""
        if len(args) != len(self.types):
            raise TypeError(f"kernel `{self.kernel.name}` takes {len(self.types)} run-time arguments "
                            f"({', '.join(self.arg_names)}), got {len(args)}")
        values = []
        for name, t, v in zip(self.arg_names, self.types, args):
            try:
                if t == "bfloat":
                    v = _bf16_bits(v)
                elif t in ("float", "double", "half"):
                    v = float(v)
                else:
                    v = int(v) & _MASK64 if t != "ptr" else int(v)
            except (TypeError, ValueError):
                raise TypeError(f"argument `{name}` of kernel `{self.kernel.name}` must be a number of type {t}, "
                                f"got {v!r}") from None
            values.append(v)
        fmt = "".join(_SLOT_FORMATS.get(t, "Q") if t != "bfloat" else "H6x" for t in self.types)
        try:
            n0, n1, n2 = (int(x) for x in grid)
        except (TypeError, ValueError):
            raise TypeError(f"kernel `{self.kernel.name}`: the grid must hold integers, got {grid!r}") from None
        interrupt.launch(self.fn, (struct.pack("<" + fmt, *values), n0, n1, n2, nthreads), True)

    def _raise_assert(self) -> None:
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
