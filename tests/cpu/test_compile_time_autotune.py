"""Autotuning on the CPU times each distinct code once: configs that differ only in options the backend's code
does not depend on (num_warps, num_stages, num_ctas, maxnreg...) compile once (tests/cpu/test_compile_sharing.py)
and run the same code the same way, so timing each of them again only cost time (Liger-Kernel's fused MoE tunes
32 configs per GEMM, 4 distinct codes on the CPU). A backend that says every option matters (the GPU backends)
still has every config timed."""
from __future__ import annotations

import numpy as np

import tritium as triton
import tritium.language as tl
from tritium_cpu.compiler import CPUBackend


@triton.jit
def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * 3.0 + 1.0, mask=m)


def _configs():
    configs = [triton.Config({"BLOCK": b}, num_warps=w, num_stages=s)
               for b in (64, 128) for w in (2, 4, 8) for s in (2, 3)]
    configs.append(triton.Config({"BLOCK": 64}, num_warps=4, maxnreg=128, num_ctas=2))
    return configs


def _tune(timed: list):
    def do_bench(fn, quantiles=None):
        timed.append(1)
        return triton.testing.do_bench(fn, warmup=1, rep=2, quantiles=quantiles)
    return triton.autotune(_configs(), key=["n"], do_bench=do_bench)(scale)


def test_configs_that_run_the_same_code_are_timed_once(fresh_cache):
    timed: list = []
    tuned = _tune(timed)
    x = np.arange(300, dtype=np.float32)
    y = np.zeros_like(x)
    tuned[lambda meta: (triton.cdiv(300, meta["BLOCK"]), )](x, y, 300)
    np.testing.assert_array_equal(y, x * 3 + 1)
    assert len(timed) == 2                       # one per BLOCK
    assert len(tuned.configs_timings) == 13      # every config has its timing
    by_block = {}
    for c, t in tuned.configs_timings.items():
        by_block.setdefault(c.kwargs["BLOCK"], []).append(tuple(t))
    assert all(len(set(ts)) == 1 for ts in by_block.values())
    assert tuned.best_config in tuned.configs_timings


def test_a_backend_whose_code_reads_every_option_times_every_config(fresh_cache, monkeypatch):
    monkeypatch.setattr(CPUBackend, "code_options", lambda self, options: options)
    timed: list = []
    tuned = _tune(timed)
    x = np.arange(300, dtype=np.float32)
    y = np.zeros_like(x)
    tuned[lambda meta: (triton.cdiv(300, meta["BLOCK"]), )](x, y, 300)
    np.testing.assert_array_equal(y, x * 3 + 1)
    assert len(timed) == 13
