"""A JIT-compiled C function of cuLaunchKernel's signature for the NVIDIA launch tests on hosts without a GPU:
it records its eleven arguments, optionally counts its calls, copies the parameters kernelParams points at and
returns a result the test sets."""
from __future__ import annotations

import ctypes
from typing import Any, Optional, Sequence

from tritium_nvidia import cuda

_engines: list = []   # the stand-ins' code lives as long as its engine


def build(received: Any, *, result: Optional[ctypes.c_int32] = None, calls: Optional[ctypes.c_int64] = None,
          slots: Any = None, slot_types: Sequence[str] = (), kept: Optional[ctypes.c_int64] = None) -> int:
    """The stand-in's address. ``received``: 11 u64s, its arguments. ``slots``/``slot_types``: the parameter
    ``j`` read as ``slot_types[j]`` (an LLVM integer type), zero-extended into ``slots[j]``; with ``kept``, only
    the first ``kept.value`` of them (a kernel with fewer parameters has no more pointers to follow)."""
    import llvmlite.binding as llvm

    def at(buffer: Any) -> str:
        return f"inttoptr (i64 {ctypes.addressof(buffer)} to ptr)"

    params = ", ".join(f"{'i64' if k == 'u64' else 'i32'} %a{i}" for i, k in enumerate(cuda.LAUNCH_KINDS))
    body = ["entry:"]
    for i, k in enumerate(cuda.LAUNCH_KINDS):
        value = f"%a{i}"
        if k == "u32":
            body.append(f"  %z{i} = zext i32 %a{i} to i64")
            value = f"%z{i}"
        body += [f"  %q{i} = getelementptr i64, ptr {at(received)}, i64 {i}", f"  store i64 {value}, ptr %q{i}"]
    body.append("  %tab = inttoptr i64 %a9 to ptr")
    if kept is not None:
        body.append(f"  %kept = load i64, ptr {at(kept)}")
    for j, ty in enumerate(slot_types):
        if kept is not None:
            body += [f"  %in{j} = icmp ult i64 {j}, %kept", f"  br i1 %in{j}, label %s{j}, label %done", f"s{j}:"]
        body += [f"  %sp{j} = getelementptr ptr, ptr %tab, i64 {j}", f"  %p{j} = load ptr, ptr %sp{j}",
                 f"  %v{j} = load {ty}, ptr %p{j}, align 1",
                 f"  %w{j} = zext {ty} %v{j} to i64" if ty != "i64" else f"  %w{j} = add i64 %v{j}, 0",
                 f"  %t{j} = getelementptr i64, ptr {at(slots)}, i64 {j}", f"  store i64 %w{j}, ptr %t{j}"]
    body += ["  br label %done", "done:"]
    if calls is not None:
        body += [f"  %n = load i64, ptr {at(calls)}", "  %n1 = add i64 %n, 1", f"  store i64 %n1, ptr {at(calls)}"]
    body.append(f"  %r = load i32, ptr {at(result)}" if result is not None else "  %r = add i32 0, 0")
    text = f"define i32 @stand_in({params}) {{\n" + "\n".join(body) + "\n  ret i32 %r\n}\n"
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(text),
                                        llvm.Target.from_default_triple().create_target_machine())
    engine.finalize_object()
    _engines.append(engine)
    return engine.get_function_address("stand_in")


def host_cuda_driver(any_device: bool) -> type:
    """A CudaDriver for an sm_90 device 0 on a host without a GPU. ``any_device``: it takes tensors wherever they
    are (CPU tensors stand in for CUDA ones); otherwise CudaDriver's own ``accepts_device`` decides."""
    from tritium.backends.compiler import GPUTarget
    from tritium_nvidia import driver

    class HostCudaDriver(driver.CudaDriver):
        def get_current_target(self) -> GPUTarget:
            return GPUTarget("cuda", 90, 32)

        def get_current_device(self) -> int:
            return 0

        def max_grid(self) -> tuple[int, int, int]:
            return driver.CUDA_MAX_GRID

    if any_device:
        HostCudaDriver.accepts_device = lambda self, device: True
    return HostCudaDriver


def route_launches(monkeypatch: Any, address: int, stream: int) -> None:
    """Send the NVIDIA launcher's cuLaunchKernel to the stand-in at ``address``, with the launch chosen from the
    first call on and torch's current device 0 with ``stream``."""
    import types

    from tritium_nvidia import driver, launch_call

    monkeypatch.setattr(cuda, "launch_kernel_address", lambda: (address, "a stand-in"))
    monkeypatch.setattr(launch_call, "launch", launch_call.choose)
    monkeypatch.setattr(launch_call, "is_native", False)
    monkeypatch.setattr(launch_call, "packed", (None, None))
    monkeypatch.setattr(launch_call, "NATIVE_AFTER", 0)
    monkeypatch.setattr(driver, "_torch_c", types.SimpleNamespace(_cuda_getDevice=lambda: 0,
                                                                    _cuda_getCurrentRawStream=lambda d: stream))
