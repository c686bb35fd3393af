"""The few CUDA driver calls tritium-nvidia makes, through cuda-bindings (``cuda.bindings.driver``).

Importing ``cuda.bindings.driver`` raises where no NVIDIA driver is installed, so this module is imported only
when a kernel is loaded or launched, never by ``import tritium``.
"""
from __future__ import annotations

import ctypes
import threading
from typing import Any

from cuda.bindings import driver as cu

_lock = threading.Lock()
_initialized = False


class CudaError(RuntimeError):
    """A CUDA driver call failed; ``code`` is the CUresult's name."""

    def __init__(self, message: str, code: str = "") -> None:
        super().__init__(message)
        self.code = code


def error_text(err: Any) -> tuple[str, str]:
    try:
        if not isinstance(err, cu.CUresult):
            err = cu.CUresult(err)   # the native launch call returns a plain int
        _, name = cu.cuGetErrorName(err)
        _, desc = cu.cuGetErrorString(err)
        return (name.decode() if name else str(err)), (desc.decode() if desc else "")
    except Exception:
        return str(err), ""


def check(result: Any, what: str) -> Any:
    """Raise CudaError unless ``result`` (a cuda-bindings return tuple) is CUDA_SUCCESS; return its values."""
    err, *vals = result if isinstance(result, tuple) else (result, )
    if err != cu.CUresult.CUDA_SUCCESS:
        name, desc = error_text(err)
        raise CudaError(f"{what} failed: {name} ({desc})", name)
    if not vals:
        return None
    return vals[0] if len(vals) == 1 else tuple(vals)


def init() -> None:
    global _initialized
    if not _initialized:
        with _lock:
            if not _initialized:
                check(cu.cuInit(0), "cuInit")
                _initialized = True


def device_count() -> int:
    init()
    return check(cu.cuDeviceGetCount(), "cuDeviceGetCount")


def attribute(device: int, name: str) -> int:
    init()
    dev = check(cu.cuDeviceGet(device), "cuDeviceGet")
    attr = getattr(cu.CUdevice_attribute, f"CU_DEVICE_ATTRIBUTE_{name}")
    return check(cu.cuDeviceGetAttribute(attr, dev), f"cuDeviceGetAttribute({name})")


def capability(device: int) -> int:
    return attribute(device, "COMPUTE_CAPABILITY_MAJOR") * 10 + attribute(device, "COMPUTE_CAPABILITY_MINOR")


def current_device() -> int:
    """The device of the calling thread's current context (after making one current if there is none)."""
    ensure_context()
    return int(check(cu.cuCtxGetDevice(), "cuCtxGetDevice"))


def ensure_context(device: int = 0) -> None:
    """Make a context current: the one torch (or the user) made current, else the device's primary one, the
    context torch and the CUDA runtime use, so memory from either works in our kernels."""
    init()
    ctx = check(cu.cuCtxGetCurrent(), "cuCtxGetCurrent")
    if ctx is not None and int(ctx) != 0:
        return
    dev = check(cu.cuDeviceGet(device), "cuDeviceGet")
    primary = check(cu.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
    check(cu.cuCtxSetCurrent(primary), "cuCtxSetCurrent")


def load_module(image: bytes) -> Any:
    ensure_context()
    return check(cu.cuModuleLoadData(image), "cuModuleLoadData")


def get_function(module: Any, name: str) -> Any:
    return check(cu.cuModuleGetFunction(module, name.encode()), f"cuModuleGetFunction({name})")


def function_attribute(func: Any, name: str) -> int:
    attr = getattr(cu.CUfunction_attribute, f"CU_FUNC_ATTRIBUTE_{name}")
    return check(cu.cuFuncGetAttribute(attr, func), f"cuFuncGetAttribute({name})")


def set_dynamic_shared(func: Any, nbytes: int) -> None:
    attr = cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    check(cu.cuFuncSetAttribute(func, attr, nbytes), "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)")


def module_global(module: Any, name: str) -> tuple[int, int]:
    dptr, size = check(cu.cuModuleGetGlobal(module, name.encode()), f"cuModuleGetGlobal({name})")
    return int(dptr), int(size)


def read_device(dptr: int, size: int) -> bytes:
    buf = ctypes.create_string_buffer(size)
    check(cu.cuMemcpyDtoH(ctypes.addressof(buf), dptr, size), "cuMemcpyDtoH")
    return buf.raw


def zero_device(dptr: int, size: int) -> None:
    check(cu.cuMemsetD8(dptr, 0, size), "cuMemsetD8")


def create_event() -> Any:
    """An event for ordering streams only (no timing: cheaper to record and wait on)."""
    ensure_context()
    return check(cu.cuEventCreate(cu.CUevent_flags.CU_EVENT_DISABLE_TIMING), "cuEventCreate")


def is_capturing(stream: int) -> bool:
    """Whether ``stream`` is recording a CUDA graph (its work is not run now, and cross-stream calls such as
    recording an event on another stream could break the capture)."""
    status = check(cu.cuStreamIsCapturing(stream), "cuStreamIsCapturing")
    return status != cu.CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_NONE


def order_streams(event: Any, before: int, after: int) -> None:
    """Work queued on ``after`` from now on waits for all work queued on ``before`` so far."""
    check(cu.cuEventRecord(event, before), "cuEventRecord")
    check(cu.cuStreamWaitEvent(after, event, 0), "cuStreamWaitEvent")


def synchronize() -> None:
    check(cu.cuCtxSynchronize(), "cuCtxSynchronize")


def stream_synchronize(stream: int) -> None:
    check(cu.cuStreamSynchronize(stream), "cuStreamSynchronize")


def launch(func: Any, grid: tuple[int, int, int], block: int, shared: int, stream: int, params: int) -> Any:
    """Launch; returns the raw CUresult (the launcher turns failures into errors that name the kernel)."""
    return cu.cuLaunchKernel(func, grid[0], grid[1], grid[2], block, 1, 1, shared, stream, params, 0)[0]


SUCCESS = cu.CUresult.CUDA_SUCCESS

#: cuLaunchKernel(f, grid x/y/z, block x/y/z, shared bytes, stream, kernelParams, extra) as C integer kinds
LAUNCH_KINDS = ("u64", "u32", "u32", "u32", "u32", "u32", "u32", "u32", "u64", "u64", "u64")


def launch_kernel_address() -> tuple[int, str]:
    """The address of libcuda's cuLaunchKernel and where it was found. First the pointer cuda-bindings itself
    calls (its table honours CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM, so both paths launch on the same
    default stream), then the driver's own answer for the legacy default stream, which is also what
    cuda-bindings uses unless that variable is set."""
    import importlib
    reasons = []
    # private modules (13.x, then 12.x's name): their absence is only a reason to ask the driver
    for module in ("cuda.bindings._internal.driver", "cuda.bindings._bindings.cydriver"):
        try:
            address = int(importlib.import_module(module)._inspect_function_pointer("__cuLaunchKernel") or 0)
            if address:
                return address, f"cuda-bindings' function table ({module})"
            reasons.append(f"{module} has no cuLaunchKernel")
        except Exception as exc:  # noqa: BLE001 - any failure here only means: look further
            reasons.append(f"{module}: {type(exc).__name__}: {exc}")
    try:
        init()
        version = check(cu.cuDriverGetVersion(), "cuDriverGetVersion")
        flags = cu.CUdriverProcAddress_flags.CU_GET_PROC_ADDRESS_LEGACY_STREAM
        result = cu.cuGetProcAddress(b"cuLaunchKernel", version, flags)
        err, address = result[0], int(result[1] or 0)
        if err == SUCCESS and address:
            return address, "cuGetProcAddress"
        reasons.append(f"cuGetProcAddress: {error_text(err)[0]}")
    except Exception as exc:  # noqa: BLE001
        reasons.append(f"cuGetProcAddress: {type(exc).__name__}: {exc}")
    raise CudaError("cannot find cuLaunchKernel's address (" + "; ".join(reasons) + ")")


#: the same call with ``kernelParams`` built by the builtin: ``offsets`` (bytes of native u64 offsets) and the
#: packed parameters (bytes) in its place, so a launch needs no shared buffer (and no lock around it)
PACKED_LAUNCH_KINDS = LAUNCH_KINDS[:9] + ("offsets", "ptrs", "u64")


def native_launch() -> tuple[Any, str]:
    """A builtin ``f(function, gx, gy, gz, bx, by, bz, shared, stream, params, extra) -> CUresult (an int)``
    calling the driver directly, and where its target came from; raises where it cannot be built."""
    from tritium.llvmir.native_call import native_function
    address, source = launch_kernel_address()
    return native_function(address, LAUNCH_KINDS, "i32", name="cuLaunchKernel"), source


def native_packed_launch() -> Any:
    """``f(function, gx, gy, gz, bx, by, bz, shared, stream, offsets, data, extra) -> CUresult``: cuLaunchKernel
    with ``kernelParams`` pointing into ``data`` (bytes, the parameters as their C struct) at ``offsets``. The
    driver copies the parameters during the call, so ``data`` may be a fresh object per launch."""
    from tritium.llvmir.native_call import native_function
    address, _ = launch_kernel_address()
    return native_function(address, PACKED_LAUNCH_KINDS, "i32", name="cuLaunchKernel_packed")


def jit_link(ptx: str, kernel: str) -> bytes:
    """PTX -> cubin with the driver's JIT compiler, for the current context's device."""
    state = check(cu.cuLinkCreate(0, [], []), "cuLinkCreate")
    try:
        data = ptx.encode() + b"\0"
        check(cu.cuLinkAddData(state, cu.CUjitInputType.CU_JIT_INPUT_PTX, data, len(data), f"{kernel}.ptx".encode(),
                               0, [], []), f"the driver's JIT compiling kernel `{kernel}`")
        cubin, size = check(cu.cuLinkComplete(state), "cuLinkComplete")
        return ctypes.string_at(int(cubin), int(size))
    finally:
        cu.cuLinkDestroy(state)
