"""The NVIDIA cached launch on a host without a GPU: ``kernel[(1,)](x, 3)`` through core's generated frame and
CudaLauncher, with only the driver call replaced by an empty C function of cuLaunchKernel's signature (called
through the same native builtin a GPU launch uses) and torch's device/stream query by builtins that answer 0.
Everything else is the real code: the kernel is compiled for sm_90 with ptxas, the arguments are packed into the
launcher's buffer. Tensors are torch CPU tensors (the stand-in driver accepts them), so a GPU host's path differs
only by ``x.is_cuda`` answering first.

    python backends/nvidia/bench/launch_host.py               # ns per launch, medians of batches
    python backends/nvidia/bench/launch_host.py --callgrind   # under valgrind: instructions per launch
    valgrind --tool=callgrind --collect-atstart=no --toggle-collect=functools_reduce \\
        python backends/nvidia/bench/launch_host.py --callgrind

Instruction counts (callgrind) do not move with the host's load, where wall time does.
"""
from __future__ import annotations

import argparse
import functools
import statistics
import time
import types
from typing import Any, Callable

import torch

import tritium
import tritium.language as tl


@tritium.jit
def store_one(out_ptr, value):
    tl.store(out_ptr, value)


@tritium.jit
def eight_args(a_ptr, b_ptr, c_ptr, M, N, K, scale, flag, BLOCK: tl.constexpr):
    total = M + N + K + flag
    tl.store(c_ptr, (tl.load(a_ptr) + tl.load(b_ptr)) * scale + total + BLOCK)


def empty_launch() -> tuple[int, Any]:
    """An empty C function of cuLaunchKernel's signature returning CUDA_SUCCESS (and the engine holding it)."""
    import llvmlite.binding as llvm
    from tritium_nvidia import cuda
    params = ", ".join(f"{'i64' if k == 'u64' else 'i32'} %a{i}" for i, k in enumerate(cuda.LAUNCH_KINDS))
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(f"define i32 @empty({params}) {{\n  ret i32 0\n}}\n"),
                                        llvm.Target.from_default_triple().create_target_machine())
    engine.finalize_object()
    return engine.get_function_address("empty"), engine


def install() -> Any:
    """Make a stand-in CudaDriver active and the native launch call target an empty function."""
    from tritium.backends.compiler import GPUTarget
    from tritium.runtime.driver import driver as active
    from tritium_nvidia import cuda, driver, launch_call

    class HostCudaDriver(driver.CudaDriver):
        device_type = "cuda"

        def get_current_target(self) -> GPUTarget:
            return GPUTarget("cuda", 90, 32)

        def get_current_device(self) -> int:
            return 0

        def max_grid(self) -> tuple[int, int, int]:
            return driver.CUDA_MAX_GRID

        def accepts_device(self, device: str) -> bool:
            return True

    address, engine = empty_launch()
    cuda.launch_kernel_address = lambda: (address, "an empty stand-in")
    launch_call.NATIVE_AFTER = 0
    # builtins answering device 0 and stream 0, as cheap to call as torch._C's
    driver._torch_c = types.SimpleNamespace(_cuda_getDevice=(0).__int__, _cuda_getCurrentRawStream=(0).__mul__)
    drv = HostCudaDriver()
    active.set_active(drv)
    return engine


def prepare(kernel: Any, *args: Any, **kwargs: Any) -> None:
    kernel.warmup(*args, grid=(1, ), **kwargs)
    for state in kernel.device_caches.values():
        for entry in state.kernels.values():
            entry.kernel._launcher.functions[0] = 0x7000_0000_1000  # as if loaded: a CUfunction handle
    kernel[(1, )](*args, **kwargs)


def per_call_ns(call: Callable[[], Any], batches: int, per_batch: int = 2000) -> float:
    times = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(per_batch):
            call()
        times.append((time.perf_counter() - t0) * 1e9 / per_batch)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--callgrind", action="store_true", help="5000 launches of each inside functools.reduce")
    parser.add_argument("--case", type=int, default=None, help="only this case (0-based)")
    parser.add_argument("--batches", type=int, default=51)
    opts = parser.parse_args()
    engine = install()  # noqa: F841 - the stand-in's code lives as long as its engine
    x = torch.zeros(4)
    y = torch.zeros(4)
    prepare(store_one, x, 3)
    prepare(eight_args, x, y, x, 5, 6, 7, 1.5, 1, BLOCK=16)
    from tritium_nvidia import launch_call
    assert launch_call.is_native, "the native launch call was not chosen"
    launcher = next(iter(next(iter(store_one.device_caches.values())).kernels.values())).kernel._launcher
    grid_fn = lambda meta: (1, )  # noqa: E731 - the tutorials' grid, a function of the meta-parameters
    cases = [("store_one[(1,)](x, 3)", lambda: store_one[(1, )](x, 3)),
             ("eight_args[(1,)](x, y, x, 5, 6, 7, 1.5, 1, BLOCK=16)",
              lambda: eight_args[(1, )](x, y, x, 5, 6, 7, 1.5, 1, BLOCK=16)),
             ("CudaLauncher alone (hot_call), store_one", lambda: launcher.hot_call((1, 1, 1), (x.data_ptr(), 3))),
             ("store_one[grid function](x, 3)", lambda: store_one[grid_fn](x, 3)),
             ("core alone: store_one[(1,)](x, 3), no-op launcher", lambda: store_one[(1, )](x, 3))]
    for i, (name, call) in enumerate(cases):
        if opts.case is not None and i != opts.case:
            continue
        if name.startswith("core alone"):  # the last case: the compiled launcher is replaced from here on
            for state in store_one.device_caches.values():
                for entry in state.kernels.values():
                    entry.launcher = lambda g, r: None
            call()
        if opts.callgrind:
            functools.reduce(lambda acc, _: call(), range(5000), None)
            print(f"5000 launches inside functools.reduce: {name}")
        else:
            print(f"{name:55s} {per_call_ns(call, opts.batches):8.0f} ns per launch", flush=True)


if __name__ == "__main__":
    main()
