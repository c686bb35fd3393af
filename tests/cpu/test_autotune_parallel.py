"""knobs.autotuning.compile_workers: an autotuner's configs are compiled by worker processes into the kernel
cache before they are timed, so the tuning process itself compiles nothing; whatever cannot go to a worker
(a kernel defined in a function, a stage hook set from Python, workers off) compiles as before."""
from __future__ import annotations

import os
import sys
import time

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium import knobs
from tritium.compiler import compiler as compiler_mod
from tritium.runtime import autotune_compile

# the kernels live in a module that worker processes import by name (this folder is on their sys.path)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import autotune_parallel_kernels as kernels  # noqa: E402


@pytest.fixture
def counts(monkeypatch, fresh_cache):
    """Compilations in this process (stage pipelines built: not cache hits), kernels the launch path loaded,
    and what precompile returned."""
    seen = {"compiles": 0, "loaded": 0, "precompiled": []}
    build = compiler_mod.build_stages

    def counting_build(*a, **kw):
        seen["compiles"] += 1
        return build(*a, **kw)

    pre = autotune_compile.precompile

    def recording_precompile(*a, **kw):
        seen["precompiled"].append(pre(*a, **kw))
        return seen["precompiled"][-1]

    monkeypatch.setattr(compiler_mod, "build_stages", counting_build)
    monkeypatch.setattr(autotune_compile, "precompile", recording_precompile)
    monkeypatch.setattr(knobs.runtime, "jit_post_compile_hook",
                        lambda **kw: seen.__setitem__("loaded", seen["loaded"] + 1))
    with knobs.autotuning.scope():
        yield seen


def _fresh(tuner):
    tuner.cache.clear()
    tuner.base_fn.device_caches.clear()


def _scale_add(n=3000):
    rng = np.random.default_rng(1)
    x = rng.random(n).astype(np.float32)
    y = rng.random(n).astype(np.float32)
    out = np.zeros(n, np.float32)
    _fresh(kernels.scale_add)
    kernels.scale_add[lambda m: (triton.cdiv(n, m["BLOCK"]), )](x, y, out, n, 0.5)
    np.testing.assert_allclose(out, np.exp(x) * 0.5 + np.sqrt(y), rtol=1e-5)
    return kernels.scale_add


def test_workers_compile_every_config_and_the_parent_none(counts):
    knobs.autotuning.compile_workers = 2
    tuner = _scale_add()
    assert counts["precompiled"] == [4]
    assert counts["compiles"] == 0            # every kernel came from the cache the workers filled
    assert counts["loaded"] == 4              # ... and each was loaded once into the in-memory cache
    assert set(tuner.configs_timings) == set(kernels.CONFIGS) and tuner.best_config in kernels.CONFIGS
    best = min(tuner.configs_timings, key=lambda c: tuner.configs_timings[c])
    assert tuner.best_config == best



@pytest.mark.parametrize("n", [1024, 1000])
def test_workers_compile_what_heuristics_make_of_each_config(counts, n):
    knobs.autotuning.compile_workers = 2
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    _fresh(kernels.negate)
    kernels.negate[lambda m: (triton.cdiv(n, m["BLOCK"]), )](x, out, n)
    np.testing.assert_array_equal(out, -x)
    assert counts["precompiled"] == [2] and counts["compiles"] == 0

def test_workers_off_compiles_in_the_tuning_process(counts, monkeypatch):
    knobs.autotuning.compile_workers = 0

    def no_workers(*a, **kw):
        raise AssertionError("no worker may start with compile_workers=0")

    monkeypatch.setattr(autotune_compile.subprocess, "Popen", no_workers)
    tuner = _scale_add()
    assert counts["precompiled"] == [0] and counts["compiles"] == 4 and counts["loaded"] == 4
    assert tuner.best_config in kernels.CONFIGS


def _capped(n=1000):
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    _fresh(kernels.capped)
    kernels.capped[lambda m: (triton.cdiv(n, m["BLOCK"]), )](x, out, n)
    np.testing.assert_array_equal(out, 2 * x)
    return kernels.capped


@pytest.mark.parametrize("workers", [0, 2])
def test_a_config_that_does_not_compile_is_skipped_as_without_workers(counts, workers):
    knobs.autotuning.compile_workers = workers
    tuner = _capped()
    failing = kernels.FAILING_CONFIGS[1]
    assert tuner.configs_timings[failing] == [float("inf")] * 3
    assert all(t[0] < float("inf") for c, t in tuner.configs_timings.items() if c != failing)
    assert tuner.best_config != failing
    # with workers: the three good ones come from the cache; the failing one is compiled here again, to fail
    # here exactly as it does without workers
    assert counts["compiles"] == (4 if workers == 0 else 1)
    assert counts["precompiled"] == [0 if workers == 0 else 3]


def test_a_kernel_no_worker_can_import_compiles_here(counts):
    knobs.autotuning.compile_workers = 2

    @triton.autotune(kernels.CONFIGS, key=["n"], warmup=1, rep=3)
    @triton.jit
    def local_copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr):   # a function's local: not importable by name
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1.0, mask=offs < n)

    x = np.arange(500, dtype=np.float32)
    out = np.zeros(500, np.float32)
    local_copy[lambda m: (triton.cdiv(500, m["BLOCK"]), )](x, out, 500)
    np.testing.assert_array_equal(out, x + 1)
    assert counts["precompiled"] == [0] and counts["compiles"] == 4


def test_a_stage_hook_set_from_python_keeps_compiles_here(counts, monkeypatch):
    knobs.autotuning.compile_workers = 2
    seen = []
    monkeypatch.setattr(knobs.runtime, "add_stages_inspection_hook",
                        lambda backend, stages, options, language, capability: seen.append(1))
    _scale_add()
    assert counts["precompiled"] == [0] and counts["compiles"] == 4 and len(seen) == 4


def test_print_tuning_time_serial_and_parallel(counts, tmp_path):
    """Not a test of speed (none is asserted): prints how long tuning 4 configs took each way."""
    times = {}
    for workers in (0, 2):
        knobs.cache.dir = str(tmp_path / f"cache-{workers}")   # cold cache each time
        knobs.autotuning.compile_workers = workers
        start = time.perf_counter()
        _scale_add()
        times[workers] = time.perf_counter() - start
    print(f"\nautotuning 4 configs, cold cache: serial {times[0]:.2f} s, 2 compile workers {times[2]:.2f} s")


def test_a_worker_that_computes_another_cache_key_leaves_the_compiles_here(counts, monkeypatch):
    knobs.autotuning.compile_workers = 2
    setup = autotune_compile._setup

    def skewed():   # as if a setting the parent has did not reach the worker: its keys differ
        s = setup()
        other = "tf32x3" if knobs.language.fp32_default != "tf32x3" else "ieee"
        s["knobs"]["language"] = {"fp32_default": other}
        return s

    monkeypatch.setattr(autotune_compile, "_setup", skewed)
    _scale_add()
    assert counts["precompiled"] == [0] and counts["compiles"] == 4


SCRIPT = """
import sys
import numpy as np
import tritium as triton
import tritium.language as tl
with open(sys.argv[1], "a") as f:
    f.write("ran\\n")      # a worker that re-ran this script (multiprocessing's spawn does) would add a line

@triton.autotune([triton.Config({"BLOCK": b}) for b in (32, 64, 128, 256)], key=["n"], warmup=1, rep=3,
                 restore_value=["x_ptr"])
@triton.jit
def add_one(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1.0, mask=offs < n)

x = np.zeros(1000, np.float32)
add_one[lambda m: (triton.cdiv(1000, m["BLOCK"]), )](x, 1000)
print("sum", x.sum())
"""


def test_a_kernel_in_a_scripts_main_compiles_here_and_the_script_runs_once(tmp_path):
    import subprocess
    script, marks = tmp_path / "tune.py", tmp_path / "marks"
    script.write_text(SCRIPT)
    env = dict(os.environ, TRITIUM_AUTOTUNE_COMPILE_WORKERS="2", TRITON_CACHE_DIR=str(tmp_path / "cache"))
    run = subprocess.run([sys.executable, str(script), str(marks)], capture_output=True, text=True, env=env,
                         timeout=600)
    assert run.returncode == 0, run.stderr
    assert "sum 1000.0" in run.stdout
    assert marks.read_text() == "ran\n"


def test_a_worker_never_starts_workers(counts, monkeypatch, tmp_path):
    log = tmp_path / "imports"
    monkeypatch.setenv("TRITIUM_TEST_IMPORT_LOG", str(log))
    import autotune_parallel_recording as recording
    knobs.autotuning.compile_workers = 2
    x = np.ones(300, np.float32)
    out = np.zeros(300, np.float32)
    recording.twice[lambda m: (triton.cdiv(300, m["BLOCK"]), )](x, out, 300)
    np.testing.assert_array_equal(out, 2 * x)
    assert counts["precompiled"] == [2] and counts["compiles"] == 0
    workers = [line.split() for line in log.read_text().splitlines() if int(line.split()[0]) != os.getpid()]
    assert len(workers) == 2 and all(w[1] == "0" for w in workers)


DISCOVERED = """
import sys
import numpy as np
import tritium as triton
from tritium.compiler import compiler
from tritium.runtime import autotune_compile
sys.path.insert(0, sys.argv[1])
import autotune_parallel_kernels as kernels
compiles, stored = [], []
build, pre = compiler.build_stages, autotune_compile.precompile
compiler.build_stages = lambda *a, **kw: compiles.append(1) or build(*a, **kw)
autotune_compile.precompile = lambda *a, **kw: stored.append(pre(*a, **kw)) or stored[-1]
x = np.ones(700, np.float32)
out = np.zeros(700, np.float32)
kernels.scale_add[lambda m: (triton.cdiv(700, m["BLOCK"]), )](x, x, out, 700, 2.0)
print("result", float(out[0]), "stored", stored, "compiled here", len(compiles))
"""


def test_the_installed_plugins_are_found_alike_in_the_workers(tmp_path):
    """Outside the tests' explicit registry: a program's discovered plugins, rediscovered by each worker."""
    import subprocess
    script = tmp_path / "discovered.py"
    script.write_text(DISCOVERED)
    env = dict(os.environ, TRITIUM_AUTOTUNE_COMPILE_WORKERS="2", TRITON_CACHE_DIR=str(tmp_path / "cache"))
    run = subprocess.run([sys.executable, str(script), os.path.dirname(os.path.abspath(__file__))],
                         capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split()[0] == "result"
    assert float(run.stdout.split()[1]) == pytest.approx(np.exp(1.0) * 2 + 1, rel=1e-5)
    assert "stored [4] compiled here 0" in run.stdout, run.stdout + run.stderr
