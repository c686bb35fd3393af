"""Autotuning real kernels on the CPU: configs are timed once per key and never recompiled afterwards;
reset_to_zero protects accumulating outputs; the same works when the kernel runs in the interpreter."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium import knobs


def _accumulate(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.atomic_add(out_ptr + offs, tl.load(x_ptr + offs, mask=m), mask=m)


CONFIGS = [triton.Config({"BLOCK": 32}, num_warps=2), triton.Config({"BLOCK": 128}),
           triton.Config({"BLOCK": 512}, num_stages=2)]


def _tuned(interpret=False, **kw):
    fn = triton.jit(_accumulate)
    fn.interpret = interpret
    return triton.autotune(CONFIGS, key=["n"], reset_to_zero=["out_ptr"], warmup=1, rep=3, **kw)(fn), fn


def _grid(n):
    return lambda meta: (triton.cdiv(n, meta["BLOCK"]), )


def test_autotuned_kernel_is_right_and_compiles_each_config_once(monkeypatch):
    compiled = []
    monkeypatch.setattr(knobs.runtime, "jit_post_compile_hook", lambda **kw: compiled.append(kw["key"]))
    tuned, fn = _tuned()
    x = np.random.default_rng(0).random(1008).astype(np.float32)
    out = np.full(1008, 5.0, dtype=np.float32)
    tuned[_grid(1008)](x, out, 1008)
    np.testing.assert_allclose(out, x)  # zeroed before the real launch despite the timed ones
    assert len(compiled) == 3 and tuned.best_config in CONFIGS
    for _ in range(3):
        tuned[_grid(1008)](x, out, 1008)
    np.testing.assert_allclose(out, 4 * x, rtol=1e-6)
    assert len(compiled) == 3  # cached per key: no new timing, no recompilation
    x2 = np.ones(2000, dtype=np.float32)
    out2 = np.zeros(2000, dtype=np.float32)
    tuned[_grid(2000)](x2, out2, 2000)  # new key: timed again; 2000 and 1008 both divisible by 16
    assert len(tuned.cache) == 2 and len(compiled) == 3
    np.testing.assert_array_equal(out2, x2)


def test_print_autotuning_from_the_environment(monkeypatch, capsys):
    monkeypatch.setenv("TRITON_PRINT_AUTOTUNING", "1")
    tuned, _ = _tuned()
    x = np.ones(100, dtype=np.float32)
    tuned[_grid(100)](x, np.zeros(100, np.float32), 100)
    out = capsys.readouterr().out
    assert out.count("Autotuning kernel _accumulate with config") == 3
    assert "Triton autotuning for function _accumulate,\nwith key as (100, 'float32', 'float32')" in out
    assert "best config selected: BLOCK: " in out


def test_heuristics_on_a_kernel():
    @triton.heuristics({"BLOCK": lambda args: triton.next_power_of_2(args["n"])})
    @triton.jit
    def double(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        m = offs < n
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2, mask=m)

    x = np.arange(100, dtype=np.float32)
    k = double[(1, )](x, 100)
    np.testing.assert_array_equal(x, np.arange(100) * 2)
    assert k.src.constants[(2, )] == 128


def test_autotune_in_the_interpreter():
    tuned, fn = _tuned(interpret=True)
    x = np.arange(300, dtype=np.float32)
    out = np.zeros(300, dtype=np.float32)
    tuned[_grid(300)](x, out, 300)
    np.testing.assert_array_equal(out, x)
    assert fn.device_caches == {}  # nothing was compiled
    assert len(tuned.cache) == 1


def test_do_bench_times_a_kernel():
    fn = triton.jit(_accumulate)
    x = np.ones(4096, dtype=np.float32)
    out = np.zeros(4096, dtype=np.float32)
    ms = triton.testing.do_bench(lambda: fn[(8, )](x, out, 4096, BLOCK=512), warmup=2, rep=10)
    assert 0 < ms < 50
    med, lo, hi = triton.testing.do_bench(lambda: fn[(8, )](x, out, 4096, BLOCK=512), warmup=2, rep=10,
                                          quantiles=[0.5, 0.2, 0.8])
    assert lo <= med <= hi


def test_device_properties_for_tutorials():
    props = triton.runtime.driver.active.utils.get_device_properties(None)
    assert props["multiprocessor_count"] >= 1 and props["max_shared_mem"] > 0 and props["warpSize"] >= 1
    torch = pytest.importorskip("torch")
    assert triton.runtime.driver.active.get_active_torch_device() == torch.device("cpu")
