"""Benchmarking and testing helpers, as in ``triton.testing``: ``do_bench``, ``assert_close``,
``perf_report``/``Benchmark``."""
from __future__ import annotations

import math
import time
from typing import Any, Callable, Optional, Sequence

from ..runtime.driver import driver
from .perf_report import Benchmark, Mark, perf_report  # noqa: F401


def _quantile(sorted_times: list[float], q: float) -> float:
    """Linear interpolation between the closest ranks (torch.quantile's default)."""
    if not 0 <= q <= 1:
        raise ValueError(f"quantiles must lie in [0, 1], got {q}")
    pos = q * (len(sorted_times) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_times) - 1)
    return sorted_times[lo] + (sorted_times[hi] - sorted_times[lo]) * (pos - lo)


def _summarize(times: list[float], quantiles: Optional[Sequence[float]], return_mode: str) -> Any:
    if quantiles is not None:
        ordered = sorted(times)
        out = [_quantile(ordered, q) for q in quantiles]
        return out[0] if len(out) == 1 else out
    if return_mode == "all":
        return times
    if return_mode == "min":
        return min(times)
    if return_mode == "max":
        return max(times)
    if return_mode == "median":
        return _quantile(sorted(times), 0.5)
    return sum(times) / len(times)


def do_bench(fn: Callable[[], Any], warmup: float = 25, rep: float = 100, grad_to_none: Any = None,
             quantiles: Optional[Sequence[float]] = None, return_mode: str = "mean") -> Any:
    """Time ``fn`` in milliseconds, as Triton's ``do_bench``: estimate its time from 5 calls, warm up for
    about ``warmup`` ms, then time each of about ``rep`` ms worth of calls. Returns the ``quantiles`` of the
    timings (one number when one quantile is asked), else the statistic named by ``return_mode`` ("min",
    "max", "mean", "median", or "all" for the list)."""
    if return_mode not in ("min", "max", "mean", "median", "all"):
        raise ValueError(f"return_mode must be min, max, mean, median or all, got {return_mode!r}")
    drv = driver.active
    sync = drv.synchronize
    cache = drv.get_empty_cache_for_benchmark()
    clear = (lambda: drv.clear_cache(cache)) if cache is not None else None
    fn()
    sync()
    start = time.perf_counter()
    for _ in range(5):
        if clear is not None:
            clear()
        fn()
    sync()
    estimate_ms = max((time.perf_counter() - start) * 1e3 / 5, 1e-4)
    n_warmup = max(1, int(warmup / estimate_ms))
    n_repeat = max(1, int(rep / estimate_ms))
    for _ in range(n_warmup):
        fn()
    sync()
    times = []
    clock = time.perf_counter
    for _ in range(n_repeat):
        if grad_to_none is not None:
            for x in grad_to_none:
                x.grad = None
        if clear is not None:
            clear()
        t0 = clock()
        fn()
        sync()
        times.append((clock() - t0) * 1e3)
    return _summarize(times, quantiles, return_mode)


def do_bench_cudagraph(fn: Callable[[], Any], rep: float = 20, grad_to_none: Any = None,
                       quantiles: Optional[Sequence[float]] = None, return_mode: str = "mean") -> Any:
    """Triton's graph-replay timing; without graphs to replay, this times calls like :func:`do_bench`."""
    return do_bench(fn, warmup=max(1, rep // 4), rep=rep, grad_to_none=grad_to_none, quantiles=quantiles,
                    return_mode=return_mode)


def assert_close(x: Any, y: Any, atol: Any = None, rtol: Any = None, err_msg: str = "") -> None:
    """Assert ``|x - y| <= atol + rtol * |y|`` elementwise (default atol 1e-2, rtol 0, as Triton); NaNs
    compare equal. ``atol``/``rtol`` may be functions of the dtype."""
    import numpy as np

    def as_np(v: Any) -> Any:
        if hasattr(v, "detach"):
            v = v.detach().cpu()
            if str(v.dtype) == "torch.bfloat16":
                v = v.float()
            return v.numpy()
        return np.asarray(v)

    dtype = getattr(x, "dtype", None)
    atol = 1e-2 if atol is None else atol
    rtol = 0.0 if rtol is None else rtol
    atol = atol(dtype) if callable(atol) else atol
    rtol = rtol(dtype) if callable(rtol) else rtol
    a, b = as_np(x), as_np(y)
    if a.size > 1 or b.size > 1:
        np.testing.assert_allclose(a, b, atol=atol, rtol=rtol, equal_nan=True, err_msg=err_msg)
        return
    if not np.allclose(a, b, atol=atol, rtol=rtol, equal_nan=True):
        raise AssertionError(f"{err_msg} {a} is not close to {b} (atol={atol}, rtol={rtol})")
