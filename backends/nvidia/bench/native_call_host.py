"""What one call to a C function with cuLaunchKernel's signature costs from Python, on any host (no GPU): the
native builtin of tritium.llvmir.native_call, ctypes with argtypes, ctypes without, and a Python function of
11 arguments for scale. The C function is a JIT-compiled one that returns 0 at once, so what is measured is the
crossing alone.

    python backends/nvidia/bench/native_call_host.py
"""
from __future__ import annotations

import ctypes
import statistics
import time
from typing import Any, Callable

from tritium.llvmir import native_call

KINDS = ("u64", "u32", "u32", "u32", "u32", "u32", "u32", "u32", "u64", "u64", "u64")
ARGS = (0x7F00_1234_5000, 1, 1, 1, 128, 1, 1, 0, 0x55AA_0000_1000, 0x7FFF_0000_2000, 0)


def empty_launch() -> tuple[int, Any]:
    import llvmlite.binding as llvm
    params = ", ".join(f"{'i64' if k.endswith('64') else 'i32'} %a{i}" for i, k in enumerate(KINDS))
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(f"define i32 @empty({params}) {{\n  ret i32 0\n}}\n"),
                                        llvm.Target.from_default_triple().create_target_machine())
    engine.finalize_object()
    return engine.get_function_address("empty"), engine


def per_call_ns(call: Callable[[], Any], batches: int = 30, per_batch: int = 20000) -> float:
    times = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(per_batch):
            call()
        times.append((time.perf_counter() - t0) * 1e9 / per_batch)
    return statistics.median(times)


def main() -> None:
    address, engine = empty_launch()
    t0 = time.perf_counter()
    native = native_call.native_function(address, KINDS, "i32", name="launch")
    built_ms = (time.perf_counter() - t0) * 1e3
    u32, ptr = ctypes.c_uint32, ctypes.c_void_p
    typed = ctypes.CFUNCTYPE(ctypes.c_int, ptr, u32, u32, u32, u32, u32, u32, u32, ptr, ptr, ptr)(address)
    untyped = ctypes.CFUNCTYPE(ctypes.c_int)(address)

    def python_function(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        return 0

    a = ARGS
    rows = [("empty loop body (lambda: None)", per_call_ns(lambda: None)),
            ("Python function of 11 arguments", per_call_ns(lambda: python_function(*a))),
            ("native builtin (GIL released)", per_call_ns(lambda: native(*a))),
            ("native builtin (GIL kept)", per_call_ns(
                lambda f=native_call.native_function(address, KINDS, "i32", name="launch", release_gil=False): f(*a))),
            ("ctypes with argtypes", per_call_ns(lambda: typed(*a))),
            ("ctypes without argtypes", per_call_ns(lambda: untyped(*a)))]
    print(f"first native build (engine + module): {built_ms:.1f} ms")
    for name, ns in rows:
        print(f"{name:40s} {ns:7.0f} ns per call (loop included)")


if __name__ == "__main__":
    main()
