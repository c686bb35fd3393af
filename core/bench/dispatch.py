"""Host time of core's dispatch for a cached launch, on any machine (CPU backend here; the active backend
wherever it runs).

Three numbers per array kind (numpy, torch), each the median over batches of launches (``--stat min``: the
fastest batch, which a loaded machine disturbs less):

- ``kernel[(1,)](x, 3)``: the whole cached launch, the backend's launcher included;
- the same with the compiled kernel's launcher replaced by a no-op (in this script's process only): what core
  costs (binder, key, cache lookup, knob reads, grid, hooks) before the backend's own call;
- ``kernel.run(x, 3, grid=(1,))`` with the no-op launcher: the same without ``__getitem__``'s closure.

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


STAT: Callable[[list], float] = statistics.median


def per_call_us(call: Callable[[], Any], batches: int = 101, per_batch: int = 1000) -> float:
    call()
    times = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(per_batch):
            call()
        times.append((time.perf_counter() - t0) * 1e6 / per_batch)
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
    global STAT
    STAT = min if args.stat == "min" else statistics.median
    import numpy as np
    arrays = {"numpy": np.zeros(4, dtype=np.float32)}
    try:
        import torch
        arrays["torch"] = torch.zeros(4, dtype=torch.float32)
    except ImportError:
        pass
    for name, x in arrays.items():
        store_one[(1, )](x, 3)
        assert float(x[0]) == 3.0
        launch = store_one[(1, )]
        full = per_call_us(lambda: store_one[(1, )](x, 3), args.batches)
        saved = _stub_launchers(store_one)
        try:
            core = per_call_us(lambda: store_one[(1, )](x, 3), args.batches)
            bound = per_call_us(lambda: launch(x, 3), args.batches)
            run = per_call_us(lambda: store_one.run(x, 3, grid=(1, )), args.batches)
            if args.profile:
                prof = cProfile.Profile()
                prof.enable()
                for _ in range(100000):
                    store_one[(1, )](x, 3)
                prof.disable()
                pstats.Stats(prof).sort_stats("tottime").print_stats(12)
        finally:
            _restore(saved)
        print(f"{name:6s} kernel[(1,)](x, 3): {full:5.2f} us | core only (no-op launcher): {core:5.2f} us | "
              f"pre-bound kernel[(1,)]: {bound:5.2f} us | run(..., grid=): {run:5.2f} us", flush=True)


if __name__ == "__main__":
    main()
