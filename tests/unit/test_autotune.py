"""Autotuner, heuristics and Config semantics (Triton's), against a stand-in kernel: the autotuner only
calls ``fn.run``/``fn.warmup``, so it works the same over compiled kernels and the interpreter."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
from tritium import knobs


class FakeKernel:
    """Adds BLOCK to every element of `out` (so repeated runs accumulate) and records each launch."""
    arg_names = ["x", "out", "n", "BLOCK"]
    __name__ = "fake_kernel"

    def __init__(self):
        self.launches = []
        self.warmed = []

    def run(self, *args, grid=None, warmup=False, **kwargs):
        named = {**dict(zip(self.arg_names, args)), **kwargs}
        self.launches.append(named)
        named["out"] += named["BLOCK"]
        return "kernel"

    def warmup(self, *args, **kwargs):
        self.warmed.append(kwargs)
        return kwargs["BLOCK"]


def fake_bench(times):
    """A do_bench that runs the call once and reports a fixed time per BLOCK."""
    def bench(fn, quantiles):
        fn()
        block = bench.kernel.launches[-1]["BLOCK"]
        t = times[block]
        return [t, t * 0.9, t * 1.1]
    return bench


CONFIGS = [triton.Config({"BLOCK": 1}), triton.Config({"BLOCK": 2}, num_warps=8), triton.Config({"BLOCK": 4})]


def _tuned(times, **kw):
    kernel = FakeKernel()
    bench = fake_bench(times)
    bench.kernel = kernel
    return triton.autotune(CONFIGS, key=["n"], do_bench=bench, **kw)(kernel), kernel


def test_best_config_is_cached_per_key():
    tuned, kernel = _tuned({1: 3.0, 2: 1.0, 4: 2.0})
    out = np.zeros(4)
    assert tuned[(1, )](None, out, 10) == "kernel"
    assert tuned.best_config.kwargs == {"BLOCK": 2} and tuned.best_config.num_warps == 8
    assert len(kernel.launches) == 4  # three timed runs, then the real one
    assert kernel.launches[-1]["num_warps"] == 8 and kernel.launches[-1]["num_stages"] == 3
    tuned[(1, )](None, out, 10)
    assert len(kernel.launches) == 5  # same key: no new timing
    tuned[(1, )](None, out, 11)
    assert len(kernel.launches) == 9 and len(tuned.cache) == 2
    # the array dtypes are part of the key
    tuned[(1, )](None, np.zeros(4, np.float32), 11)
    assert len(tuned.cache) == 3


class _BackendLimit(triton.OutOfResources):
    """What a backend raises for a program too large for its device (backends subclass core's error)."""

    def __init__(self, message):
        Exception.__init__(self, message)


def test_configs_out_of_resources_are_skipped():
    tuned, kernel = _tuned({1: 3.0, 2: 1.0, 4: 2.0})
    real_run = kernel.run

    def run(*args, **kwargs):
        if kwargs.get("BLOCK") == 2:   # the fastest config does not fit the device
            raise _BackendLimit("kernel `fake_kernel` needs 300000 bytes of shared memory per program")
        return real_run(*args, **kwargs)
    kernel.run = run
    tuned[(1, )](None, np.zeros(4), 10)
    assert tuned.best_config.kwargs == {"BLOCK": 4}


def test_reset_to_zero_and_restore_value():
    tuned, _ = _tuned({1: 3.0, 2: 1.0, 4: 2.0}, reset_to_zero=["out"])
    out = np.full(4, 100.0)
    tuned[(1, )](None, out, 10)
    # zeroed before each timed run and once more before the real launch, which adds BLOCK=2
    np.testing.assert_array_equal(out, 2.0)
    tuned, _ = _tuned({1: 3.0, 2: 1.0, 4: 2.0}, restore_value=["out"])
    out = np.full(4, 100.0)
    tuned[(1, )](None, out, 10)
    np.testing.assert_array_equal(out, 102.0)  # timed runs undone, the real launch kept


def test_prune_configs_by():
    seen = {}

    def early(configs, named_args, **kwargs):
        seen["named"] = dict(named_args)
        return [c for c in configs if c.kwargs["BLOCK"] > 1]

    tuned, kernel = _tuned({1: 0.5, 2: 2.0, 4: 1.0}, prune_configs_by={"early_config_prune": early})
    tuned[(1, )](None, np.zeros(2), 10)
    assert tuned.best_config.kwargs == {"BLOCK": 4} and seen["named"]["n"] == 10
    assert {launch["BLOCK"] for launch in kernel.launches} == {2, 4}

    # perf_model + top_k: only the predicted best is timed
    model = lambda **kw: {1: 3.0, 2: 1.0, 4: 2.0}[kw["BLOCK"]]  # noqa: E731
    tuned, kernel = _tuned({1: 0.1, 2: 1.0, 4: 0.1}, prune_configs_by={"perf_model": model, "top_k": 1})
    tuned[(1, )](None, np.zeros(2), 10)
    assert tuned.best_config.kwargs == {"BLOCK": 2} and len(kernel.launches) == 2

    with pytest.raises(triton.runtime.autotuner.AutotunerError, match="No valid autotuner configs"):
        _tuned({}, prune_configs_by={"early_config_prune": lambda c, a, **k: []})[0][(1, )](None, np.zeros(2), 1)


def test_print_autotuning(capsys):
    tuned, _ = _tuned({1: 3.0, 2: 1.0, 4: 2.0})
    with knobs.autotuning.scope():
        knobs.autotuning.print = True
        tuned[(1, )](None, np.zeros(2), 10)
        out = capsys.readouterr().out
        assert "Triton autotuning for function fake_kernel" in out and "finished after" in out
        assert "best config selected: BLOCK: 2, num_warps: 8" in out
        tuned[(1, )](None, np.zeros(2), 10)
        assert capsys.readouterr().out == ""  # nothing new was tuned


def test_config_pre_hook_and_conflicts():
    calls = []
    cfgs = [triton.Config({"BLOCK": 1}, pre_hook=lambda args: calls.append(args["BLOCK"])),
            triton.Config({"BLOCK": 2})]
    kernel = FakeKernel()
    bench = fake_bench({1: 1.0, 2: 2.0})
    bench.kernel = kernel
    tuned = triton.autotune(cfgs, key=[], do_bench=bench)(kernel)
    tuned[(1, )](None, np.zeros(2), 3)
    assert calls == [1, 1]  # its timed run, then the real launch
    with pytest.raises(ValueError, match="Conflicting meta-parameters: BLOCK"):
        triton.autotune(cfgs, key=["n"], do_bench=bench)(FakeKernel())[(1, )](None, np.zeros(2), 4, BLOCK=8)


def test_warmup_rep_reach_do_bench(monkeypatch):
    import tritium.testing
    seen = {}

    def spy(fn, warmup=25, rep=100, quantiles=None, **kw):
        seen.update(warmup=warmup, rep=rep)
        fn()
        return [1.0, 1.0, 1.0]

    monkeypatch.setattr(tritium.testing, "do_bench", spy)
    tuned = triton.autotune(CONFIGS, key=["n"], warmup=3, rep=7)(FakeKernel())
    tuned[(1, )](None, np.zeros(2), 1)
    assert seen == {"warmup": 3, "rep": 7}


def test_disk_cache_of_timings(fresh_cache):
    tuned, kernel = _tuned({1: 3.0, 2: 1.0, 4: 2.0}, cache_results=True)
    tuned.base_fn.cache_key = "fake-source-hash"
    with pytest.MonkeyPatch.context() as mp:
        import tritium.compiler.compiler as cc
        mp.setattr(cc, "make_backend", lambda target: type("B", (), {"hash": lambda self: "b"})())
        tuned[(1, )](None, np.zeros(2), 10)
        assert len(kernel.launches) == 4
        again, kernel2 = _tuned({1: 3.0, 2: 1.0, 4: 2.0}, cache_results=True)
        again.base_fn.cache_key = "fake-source-hash"
        again[(1, )](None, np.zeros(2), 10)
        assert len(kernel2.launches) == 1 and again.best_config.kwargs == {"BLOCK": 2}


def test_heuristics_and_nesting():
    kernel = FakeKernel()
    h = triton.heuristics({"BLOCK": lambda args: args["n"] * 2})(kernel)
    out = np.zeros(2)
    h[(1, )](None, out, 3)
    assert kernel.launches[-1]["BLOCK"] == 6
    assert h.warmup(None, out, 5) == 10
    # heuristics over an autotuner: the heuristic value is set before tuning keys are read
    bench = fake_bench({1: 1.0, 2: 0.5, 4: 2.0})
    inner = FakeKernel()
    bench.kernel = inner
    cfgs = [triton.Config({"BLOCK": b}) for b in (1, 2, 4)]
    tuned = triton.autotune(cfgs, key=["n"], do_bench=bench)(inner)
    outer = triton.heuristics({"n": lambda args: 99})(tuned)
    outer[(1, )](None, out)
    assert inner.launches[-1]["n"] == 99 and inner.launches[-1]["BLOCK"] == 2


def test_autotuner_warmup_compiles_each_config():
    tuned, kernel = _tuned({1: 1.0, 2: 1.0, 4: 1.0})
    assert tuned.warmup(None, np.zeros(2), 3, grid=(1, )) == [1, 2, 4]


def test_config_identity():
    a = triton.Config({"BLOCK": 4}, num_warps=2)
    assert a == triton.Config({"BLOCK": 4}, num_warps=2) and hash(a) == hash(triton.Config({"BLOCK": 4}, num_warps=2))
    assert a != triton.Config({"BLOCK": 4}, num_warps=4)
    assert a.all_kwargs() == {"BLOCK": 4, "num_warps": 2, "num_ctas": 1, "num_stages": 3}
    assert str(a) == "BLOCK: 4, num_warps: 2, num_ctas: 1, num_stages: 3, maxnreg: None"


def test_unknown_names_are_reported_early():
    with pytest.raises(ValueError, match="'out_ptr' is not a parameter"):
        triton.autotune(CONFIGS, key=["n"], reset_to_zero=["out_ptr"])(FakeKernel())


def test_do_bench_statistics(monkeypatch):
    import tritium.testing as tt
    ticks = iter(range(100000))
    monkeypatch.setattr(tt.time, "perf_counter", lambda: next(ticks) * 1e-3)  # each clock read: 1 ms later
    calls = []
    r = tt.do_bench(lambda: calls.append(1), warmup=4, rep=10, quantiles=[0.5, 0.2, 0.8])
    assert r == pytest.approx([1.0, 1.0, 1.0]) and len(calls) > 10
    times = tt.do_bench(lambda: None, rep=5, return_mode="all")
    # 5 calls between two clock reads: estimated 0.2 ms each, so about 5 / 0.2 timed calls
    assert len(times) in (24, 25) and times == pytest.approx([1.0] * len(times))
    assert tt._summarize([1.0, 2.0, 3.0, 4.0], [0.5], "mean") == 2.5
    assert tt._summarize([4.0, 1.0, 3.0, 2.0], None, "median") == 2.5
    assert tt._summarize([1.0, 2.0, 6.0], None, "mean") == 3.0
    with pytest.raises(ValueError, match="return_mode"):
        tt.do_bench(lambda: None, return_mode="avg")


def test_perf_report(tmp_path, capsys):
    from tritium.testing import Benchmark, perf_report

    @perf_report(Benchmark(x_names=["size"], x_vals=[1, 2], line_arg="provider", line_vals=["a", "b"],
                           line_names=["A", "B"], plot_name="demo", ylabel="GB/s", args={"scale": 10}))
    def bench(size, provider, scale):
        v = size * scale + (1 if provider == "b" else 0)
        return v, v - 1, v + 1

    table = bench.run(print_data=True, save_path=str(tmp_path), return_df=True)
    out = capsys.readouterr().out
    assert out.startswith("demo:") and "A (GB/s)" in out and "21" in out
    rows = (tmp_path / "demo.csv").read_text().splitlines()
    assert rows[0] == "size,A (GB/s),B (GB/s)" and rows[2].startswith("2,20")
    assert (tmp_path / "results.html").exists()
    assert len(table) == 2
