"""Shared by the examples: pick the device, time with medians, and, on a GPU, load the same kernels
under Triton so both run in one process and the ratio is printed."""
from __future__ import annotations

import importlib.util
import os
import statistics
import sys
import tempfile
import time
from typing import Any, Callable, Optional


def device() -> str:
    """"cuda" when tritium's active backend is a GPU and torch sees it, else "cpu"."""
    import tritium
    from tritium.runtime.driver import driver
    drv = driver.active
    target = drv.get_current_target()
    if target.backend != "cpu":
        return "cuda"
    _ = tritium
    return "cpu"


def median_ms(fn: Callable[[], Any], dev: str, reps: int = 0, min_time: float = 0.4) -> float:
    """Median time of ``fn`` in milliseconds (CUDA events on a GPU, perf_counter on the CPU)."""
    if dev == "cuda":
        import torch
        fn()
        torch.cuda.synchronize()
        times = []
        t_end = time.perf_counter() + min_time
        while time.perf_counter() < t_end or len(times) < max(reps, 10):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            e.synchronize()
            times.append(s.elapsed_time(e))
        return statistics.median(times)
    fn()
    times = []
    t_end = time.perf_counter() + min_time
    while time.perf_counter() < t_end or len(times) < max(reps, 5):
        s = time.perf_counter()
        fn()
        times.append((time.perf_counter() - s) * 1e3)
    return statistics.median(times)


def interleaved(fns: dict[str, Callable[[], Any]], dev: str, rounds: int = 5,
                min_time: float = 0.1) -> dict[str, float]:
    """Each function's median time in ms: the median over ``rounds`` of its ``median_ms``, the functions taking
    turns, in reversed order every other round. A GPU's clock and temperature drift during a run; timing one side
    after the other lets that drift decide a ratio of a few percent, taking turns spreads it over both."""
    names = list(fns)
    times: dict[str, list[float]] = {n: [] for n in names}
    for r in range(rounds):
        for n in (names if r % 2 == 0 else names[::-1]):
            times[n].append(median_ms(fns[n], dev, min_time=min_time))
    return {n: statistics.median(t) for n, t in times.items()}


def triton_twin(example_file: str) -> Optional[Any]:
    """The example's module with ``tritium`` imports replaced by ``triton`` (None if Triton is absent),
    so the very same kernel source runs under Triton in this process."""
    if importlib.util.find_spec("triton") is None:
        return None
    src = open(example_file).read()
    src = src.replace("import tritium.language as tl", "import triton.language as tl")
    src = src.replace("import tritium as triton", "import triton")
    src = src.replace("from tritium.tools.", "from triton.tools.")
    src = src.replace('if __name__ == "__main__":', "if False:")
    d = tempfile.mkdtemp(prefix="triton-twin-")
    path = os.path.join(d, "twin_" + os.path.basename(example_file))
    with open(path, "w") as f:
        f.write(src)
    sys.path.insert(0, os.path.dirname(os.path.abspath(example_file)))
    spec = importlib.util.spec_from_file_location("twin_" + os.path.basename(example_file)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def line(name: str, ours_ms: float, ref_name: str, ref_ms: float, unit: str = "", amount: float = 0.0) -> str:
    """One benchmark line: medians, throughput, and the ratio (> 1 means tritium is faster)."""
    def rate(ms: float) -> str:
        return f" ({amount / (ms * 1e-3):.1f} {unit})" if unit else ""
    text = (f"{name}: tritium {ours_ms:.3f} ms{rate(ours_ms)} | {ref_name} {ref_ms:.3f} ms{rate(ref_ms)} | "
            f"ratio {ref_ms / ours_ms:.2f}x")
    print(text, flush=True)
    return text
