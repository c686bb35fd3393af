"""Host time of core's dispatch for a cached launch, on any machine (CPU backend here; the active backend
wherever it runs).

Three numbers per array kind (numpy, torch), each the median over batches of launches (``--stat min``: the
fastest batch, which a loaded machine disturbs less):

- ``kernel[(1,)](x, 3)``: the whole cached launch, the backend's launcher included;
- the same with the compiled kernel's launcher replaced by a no-op (in this script's process only): what core
  costs (binder, key, cache lookup, knob reads, grid, hooks) before the backend's own call;
- ``kernel.run(x, 3, grid=(1,))`` with the no-op launcher: the same without ``__getitem__``'s closure.

Arrays live where the active driver runs kernels (numpy and torch on the CPU backend, torch on a GPU's).

Run: python core/bench/dispatch.py [--profile]   (--profile prints cProfile's view of the stubbed launch)
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import time
from typing import Any, Callable

import tritium
import tritium.language as tl


@tritium.jit
def store_one(out_ptr, value):
    tl.store(out_ptr, value)


@tritium.jit
def fifteen_args(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # a matmul's signature: what the binder keys per launch grows with the arguments
    total = M + N + K + stride_am + stride_ak + stride_bk + stride_bn + stride_cm + stride_cn
    tl.store(c_ptr, tl.load(a_ptr) + tl.load(b_ptr) + total + BLOCK_M + BLOCK_N + BLOCK_K)


STAT: Callable[[list], float] = statistics.median
SYNC: Callable[[], Any] = lambda: None  # noqa: E731  (a GPU's: between batches, so its queue never fills)


def per_call_us(call: Callable[[], Any], batches: int = 101, per_batch: int = 1000) -> float:
    call()
    SYNC()
    times = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(per_batch):
            call()
        times.append((time.perf_counter() - t0) * 1e6 / per_batch)
        SYNC()
    return STAT(times)


def _stub_launchers(kernel: Any) -> list:
    """Replace every compiled launcher of ``kernel`` by a no-op; returns what to restore."""
    saved = []
    for state in kernel.device_caches.values():
        for entry in state.kernels.values():
            saved.append((entry, entry.launcher, entry.with_arguments))
            entry.launcher = (lambda g, r, b=None: None)
    return saved


def _restore(saved: list) -> None:
    for entry, launcher, with_arguments in saved:
        entry.launcher, entry.with_arguments = launcher, with_arguments


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--batches", type=int, default=101)
    parser.add_argument("--stat", choices=("median", "min"), default="median")
    args = parser.parse_args()
    global STAT, SYNC
    STAT = min if args.stat == "min" else statistics.median
    from tritium.runtime.driver import driver
    device = driver.active.device_type
    arrays: dict[str, Any] = {}
    if device == "cpu":
        import numpy as np
        arrays["numpy"] = np.zeros(4, dtype=np.float32)
    try:
        import torch
        arrays["torch"] = torch.zeros(4, dtype=torch.float32, device=device)
        if device != "cpu":
            SYNC = getattr(torch, device).synchronize
    except ImportError:
        pass
    print(f"active driver: {type(driver.active).__name__} ({device})", flush=True)
    for name, x in arrays.items():
        store_one[(1, )](x, 3)
        assert float(x[0]) == 3.0
        _measure(f"{name:5s} store_one[(1,)](x, 3)", store_one, (x, 3), args)
        many = (x, x, x, 512, 512, 512, 512, 1, 512, 1, 512, 1, 16, 16, 16)
        fifteen_args[(1, )](*many)
        _measure(f"{name:5s} fifteen_args[(1,)](3 arrays, 9 ints, 3 constexprs)", fifteen_args, many, args)


def _measure(title: str, kernel: Any, a: tuple, args: Any) -> None:
    launch = kernel[(1, )]
    full = per_call_us(lambda: kernel[(1, )](*a), args.batches)
    saved = _stub_launchers(kernel)
    try:
        core = per_call_us(lambda: kernel[(1, )](*a), args.batches)
        bound = per_call_us(lambda: launch(*a), args.batches)
        run = per_call_us(lambda: kernel.run(*a, grid=(1, )), args.batches)
        if args.profile:
            prof = cProfile.Profile()
            prof.enable()
            for _ in range(100000):
                kernel[(1, )](*a)
            prof.disable()
            pstats.Stats(prof).sort_stats("tottime").print_stats(12)
    finally:
        _restore(saved)
    print(f"{title}\n    whole launch {full:5.2f} us | core only (no-op launcher) {core:5.2f} us | pre-bound "
          f"kernel[(1,)] {bound:5.2f} us | run(..., grid=) {run:5.2f} us", flush=True)


if __name__ == "__main__":
    main()
