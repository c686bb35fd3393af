"""Running code objects on AMD GPUs through hip-python (the HIP runtime's Python bindings), imported only when a
kernel is launched or the device is asked about. Where the HIP runtime (ROCm's ``libamdhip64.so``) or a GPU is
missing, the driver is inactive and :func:`inactive_reason` says why; compiling never needs it.

Not run on hardware: no AMD GPU is reachable from the machines this backend was written on. The argument packing
(:func:`pack_args`) is tested; loading, launching and fault reporting follow the HIP API's documented contract.
"""
from __future__ import annotations

import ctypes
import struct
import sys
import threading
from typing import Any, Callable, Optional

from tritium.backends.compiler import GPUTarget
from tritium.backends.driver import PINNED_HOST, DeviceUtils, DriverBase

from .knobs import amd as amd_knobs

_reason: Optional[str] = None
_last_launched: list[str] = []
#: hipError_t names of a kernel that faulted on the device (HIP reports illegal instructions and misaligned
#: accesses as launch failures)
_FAULTS = ("hipErrorIllegalAddress", "hipErrorLaunchFailure", "hipErrorAssert", "hipErrorLaunchTimeOut",
           "hipErrorPriorLaunchFailure")


class HipError(RuntimeError):
    def __init__(self, message: str, code: str = "") -> None:
        super().__init__(message)
        self.code = code


class KernelFault(RuntimeError):
    pass


class KernelAssertionError(AssertionError):
    pass


def inactive_reason() -> str:
    """Why no AMD GPU can run kernels here ("" when one can)."""
    global _reason
    if _reason is None:
        _reason = _probe()
    return _reason


def _probe() -> str:
    try:
        from hip import hip
    except ImportError as exc:
        return f"hip-python is not installed ({exc}): `pip install tritium-amd[run]` on a machine with ROCm"
    try:
        err = hip.hipInit(0)[0]
        if err != hip.hipError_t.hipSuccess:
            return f"the HIP runtime failed to initialize ({err.name})"
        err, count = hip.hipGetDeviceCount()
    except Exception as exc:   # hip-python raises RuntimeError when libamdhip64.so cannot be loaded
        return f"the HIP runtime is not available: {exc}"
    if err != hip.hipError_t.hipSuccess or count == 0:
        return "the HIP runtime found no AMD GPU"
    return ""


def _hip() -> Any:
    from hip import hip
    return hip


def _check(result: Any, what: str) -> Any:
    err = result[0] if isinstance(result, tuple) else result
    hip = _hip()
    if err != hip.hipError_t.hipSuccess:
        raise HipError(f"{what} failed: {err.name}", err.name)
    return result[1] if isinstance(result, tuple) and len(result) == 2 else result


# -- arguments -----------------------------------------------------------------------------------------------
_INT = {"i1": (ctypes.c_uint8, 0x1, 0), "i8": (ctypes.c_int8, 0xFF, 0x80), "i16": (ctypes.c_int16, 0xFFFF, 0x8000),
        "i32": (ctypes.c_int32, 0xFFFFFFFF, 0x80000000), "i64": (ctypes.c_int64, (1 << 64) - 1, 1 << 63)}


def _convert(t: str) -> Callable[[Any], Any]:
    if t.startswith("ptr"):
        return lambda v: ctypes.c_void_p(int(v))
    if t == "float":
        return lambda v: ctypes.c_float(float(v))
    if t == "double":
        return lambda v: ctypes.c_double(float(v))
    if t == "half":
        return lambda v: ctypes.c_uint16(struct.unpack("<H", struct.pack("<e", float(v)))[0])
    if t == "bfloat":
        def bf16(v: Any) -> Any:
            bits = struct.unpack("<I", struct.pack("<f", float(v)))[0]
            return ctypes.c_uint16(((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF)
        return bf16
    cty, mask, sign = _INT.get(t, (ctypes.c_int64, (1 << 64) - 1, 1 << 63))
    if t == "i1":
        return lambda v: cty(1 if v else 0)
    return lambda v: cty(((int(v) & mask) ^ sign) - sign)


def pack_args(kernel: str, names: list[str], types: list[str], args: tuple) -> tuple:
    """The kernel's explicit arguments as ctypes values in signature order: hip-python lays them out in the
    kernarg buffer at their natural alignment, as the code object's metadata places them."""
    if len(args) != len(types):
        raise TypeError(f"kernel `{kernel}` takes {len(types)} run-time arguments ({', '.join(names)}), got "
                        f"{len(args)}")
    out = []
    for name, t, a in zip(names, types, args):
        try:
            out.append(_convert(t)(a))
        except (TypeError, ValueError) as exc:
            raise TypeError(f"argument `{name}` of kernel `{kernel}` must be a {t} value, got {a!r}") from exc
    return tuple(out)


def fault_message(code: str, kernel: Optional[str], when: str) -> str:
    culprit = f"kernel `{kernel}`" if kernel else "a kernel"
    recent = ", ".join(f"`{k}`" for k in _last_launched[-4:]) or "none recorded"
    return (f"{culprit} faulted ({code}: an out-of-bounds or misaligned memory access, or another device "
            f"exception), detected {when}; kernels launched since the last synchronization: {recent}. Run the kernel "
            "in the interpreter (TRITON_INTERPRET=1) to find the access, or set HIP_LAUNCH_BLOCKING=1 so that the "
            "first faulting launch raises.")


def _torch_stream() -> int:
    torch = sys.modules.get("torch")
    if torch is not None and getattr(torch.version, "hip", None) and torch.cuda.is_initialized():
        return torch.cuda.current_stream().cuda_stream
    return 0


class HipLauncher:
    def __init__(self, kernel: Any) -> None:
        md = kernel.metadata_dict
        self.kernel, self.name = kernel, kernel.name
        self.types = list(md["arg_types"])
        sig = getattr(kernel.src, "signature", {}) or {}
        self.names = [n for n, t in sig.items() if t != "constexpr"] or [f"arg{i}" for i in range(len(self.types))]
        self.block = int(md["num_warps"]) * int(md.get("warp_size", 64))
        self.has_assert = bool(md.get("has_assert"))
        self.messages = list(md.get("assert_messages", []))
        self.functions: dict[int, tuple[Any, Any]] = {}
        self.lock = threading.Lock()
        kernel.n_regs = int(md.get("n_regs", 0) or 0)
        kernel.n_spills = int(md.get("n_spills", 0) or 0)

    def load(self, device: int) -> tuple[Any, Any]:
        hip = _hip()
        with self.lock:
            got = self.functions.get(device)
            if got is None:
                module = _check(hip.hipModuleLoadData(self.kernel.kernel), f"loading the code object of `{self.name}`")
                func = _check(hip.hipModuleGetFunction(module, self.name.encode()),
                              f"finding kernel `{self.name}` in its code object")
                got = self.functions[device] = (module, func)
        return got

    def __call__(self, grid: tuple[int, int, int], args: tuple) -> None:
        if min(grid) <= 0:
            if min(grid) < 0:
                raise ValueError(f"kernel `{self.name}`: negative grid {grid}")
            return
        hip = _hip()
        device = _check(hip.hipGetDevice(), "hipGetDevice")
        module, func = self.functions.get(device) or self.load(device)
        packed = pack_args(self.name, self.names, self.types, args)
        stream = _torch_stream()
        err = hip.hipModuleLaunchKernel(func, grid[0], grid[1], grid[2], self.block, 1, 1, 0, stream or None, None,
                                        packed)[0]
        if err != hip.hipError_t.hipSuccess:
            if err.name == "hipErrorLaunchOutOfResources":
                from tritium.compiler.errors import OutOfResources
                raise OutOfResources(self.block, self.block, "threads or registers per workgroup",
                                     f"kernel `{self.name}` cannot be launched with {self.block} threads: lower "
                                     "num_warps or the block sizes")
            if err.name in _FAULTS:
                raise KernelFault(fault_message(err.name, self.name if amd_knobs.launch_blocking else None,
                                                f"when launching `{self.name}`"))
            raise HipError(f"launching kernel `{self.name}` on grid {grid} with {self.block} threads failed: "
                           f"{err.name}", err.name)
        _last_launched.append(self.name)
        del _last_launched[:-16]
        if self.has_assert or amd_knobs.launch_blocking:
            self._check_after(module, stream)

    def _check_after(self, module: Any, stream: int) -> None:
        hip = _hip()
        err = hip.hipStreamSynchronize(stream or None)[0]
        if err != hip.hipError_t.hipSuccess:
            if err.name in _FAULTS:
                raise KernelFault(fault_message(err.name, self.name, "right after its launch"))
            raise HipError(f"kernel `{self.name}`: {err.name}", err.name)
        _last_launched.clear()
        if self.has_assert:
            got = hip.hipModuleGetGlobal(module, f"{self.name}_assert_state".encode())   # (err, address, bytes)
            _check(got[0], f"finding the assert state of `{self.name}`")
            ptr = got[1]
            buf = bytearray(24)
            _check(hip.hipMemcpyDtoH(buf, ptr, 24), "reading the assert state")
            failed, p0, p1, p2, index, elem = struct.unpack("<6i", bytes(buf))
            if failed:
                _check(hip.hipMemsetD8(ptr, 0, 24), "clearing the assert state")
                msg = self.messages[index] if 0 <= index < len(self.messages) else "assertion failed"
                raise KernelAssertionError(f"device_assert failed in kernel `{self.name}` at {msg} (program id "
                                           f"{(p0, p1, p2)}, element {elem})")


#: the CompiledKernels a no-run launcher was made for in this process (compile-only launches)
compiled: list[Any] = []


class NoRunLauncher:
    """TRITIUM_AMD_COMPILE_ONLY: the kernel was compiled (and its code object checked); nothing runs."""

    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel
        compiled.append(kernel)

    def __call__(self, grid: tuple, args: tuple) -> None:
        return None


class HipDriver(DriverBase):
    device_type = "cuda"      # torch on ROCm names its devices "cuda"

    @classmethod
    def is_active(cls) -> bool:
        return amd_knobs.compile_only or inactive_reason() == ""

    def get_current_target(self) -> GPUTarget:
        if amd_knobs.compile_only:
            return GPUTarget("hip", amd_knobs.arch or "gfx942", 64)
        hip = _hip()
        props = hip.hipDeviceProp_t()
        _check(hip.hipGetDeviceProperties(props, self.get_current_device()), "hipGetDeviceProperties")
        arch = props.gcnArchName.decode() if isinstance(props.gcnArchName, bytes) else str(props.gcnArchName)
        return GPUTarget("hip", arch.split(":", 1)[0], int(props.warpSize))

    def get_current_device(self) -> int:
        if amd_knobs.compile_only:
            return 0
        return int(_check(_hip().hipGetDevice(), "hipGetDevice"))

    def set_current_device(self, device: Any) -> None:
        _check(_hip().hipSetDevice(int(device)), "hipSetDevice")

    def get_current_stream(self, device: Any = None) -> int:
        return 0 if amd_knobs.compile_only else _torch_stream()

    def get_active_torch_device(self) -> Any:
        import torch
        if amd_knobs.compile_only:     # nothing runs: host tensors stand in for device memory
            return torch.device("cpu")
        return torch.device("cuda", self.get_current_device())

    def accepts_device(self, device: str) -> bool:
        return device in ("cuda", "mock") or (amd_knobs.compile_only and device in ("cpu", PINNED_HOST))

    def make_launcher(self, kernel: Any) -> Any:
        if amd_knobs.compile_only:
            return NoRunLauncher(kernel)
        return HipLauncher(kernel)

    def synchronize(self) -> None:
        if amd_knobs.compile_only:
            return
        _check(_hip().hipDeviceSynchronize(), "hipDeviceSynchronize")

    @property
    def utils(self) -> "HipUtils":
        return HipUtils()


class HipUtils(DeviceUtils):
    def get_device_properties(self, device: Any = None) -> dict[str, Any]:
        hip = _hip()
        props = hip.hipDeviceProp_t()
        dev = HipDriver().get_current_device() if device is None else int(device)
        _check(hip.hipGetDeviceProperties(props, dev), "hipGetDeviceProperties")
        return {"multiprocessor_count": int(props.multiProcessorCount),
                "max_shared_mem": int(props.sharedMemPerBlock), "max_num_regs": int(props.regsPerBlock),
                "warpSize": int(props.warpSize)}
