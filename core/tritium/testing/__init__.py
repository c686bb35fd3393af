"""Benchmarking and testing helpers, as in ``triton.testing``."""
from __future__ import annotations

import statistics
import time
from typing import Any, Callable, Optional, Sequence


def _sync() -> None:
    from ..runtime.driver import driver
    try:
        driver.active.synchronize()
    except Exception:
        pass


def do_bench(fn: Callable[[], Any], warmup: float = 25, rep: float = 100, grad_to_none: Any = None,
             quantiles: Optional[Sequence[float]] = None, return_mode: str = "mean") -> Any:
    """Time ``fn`` in milliseconds: warm up for ``warmup`` ms, then run for about ``rep`` ms.

    Returns the statistic named by ``return_mode`` ("min", "max", "mean", "median", "all"), or the
    ``quantiles`` of the timings when given, like Triton's ``do_bench``.
    """
    assert return_mode in ("min", "max", "mean", "median", "all")
    fn()
    _sync()
    t0 = time.perf_counter()
    n = 0
    while True:
        fn()
        n += 1
        if n >= 5:
            break
    _sync()
    est = (time.perf_counter() - t0) * 1000 / n
    n_warmup = max(1, int(warmup / max(est, 1e-6)))
    n_repeat = max(1, int(rep / max(est, 1e-6)))
    for _ in range(min(n_warmup, 10000)):
        fn()
    _sync()
    times = []
    for _ in range(min(n_repeat, 10000)):
        if grad_to_none is not None:
            for x in grad_to_none:
                x.grad = None
        s = time.perf_counter()
        fn()
        _sync()
        times.append((time.perf_counter() - s) * 1000)
    if quantiles is not None:
        qs = statistics.quantiles(times, n=100, method="inclusive") if len(times) > 1 else [times[0]] * 99
        out = [times[0] if q == 0 else (max(times) if q == 1 else qs[max(0, min(98, int(round(q * 100)) - 1))])
               for q in quantiles]
        return out[0] if len(out) == 1 else out
    if return_mode == "all":
        return times
    return {"min": min, "max": max, "mean": statistics.fmean, "median": statistics.median}[return_mode](times)


def assert_close(x: Any, y: Any, atol: Optional[float] = None, rtol: Optional[float] = None,
                 err_msg: str = "") -> None:
    import numpy as np

    def as_np(v: Any) -> Any:
        if hasattr(v, "detach"):
            v = v.detach().cpu()
            if str(v.dtype) == "torch.bfloat16":
                v = v.float()
            return v.numpy()
        return np.asarray(v)

    a, b = as_np(x), as_np(y)
    atol = 1e-2 if atol is None else atol
    rtol = 0 if rtol is None else rtol
    np.testing.assert_allclose(a, b, atol=atol, rtol=rtol, err_msg=err_msg)
