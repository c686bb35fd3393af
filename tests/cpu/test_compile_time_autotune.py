"""Autotuning on the CPU times each distinct code once: configs that differ only in options the backend's code
does not depend on (num_warps, num_stages, num_ctas, maxnreg...) compile once (tests/cpu/test_compile_sharing.py)
and run the same code the same way, so timing each of them again only cost time (Liger-Kernel's fused MoE tunes
32 configs per GEMM, 4 distinct codes on the CPU). A backend that says every option matters (the GPU backends)
still has every config timed."""
from __future__ import annotations

import numpy as np
import pytest

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


# -- sharing beside installed plugins --------------------------------------------------------------------------
# A development install (and many users') has plugins whose passes run only when switched on (tritium's own
# nan-finder and wide-accumulate): merely registering a pass, or a pipeline hook that takes the options but builds
# the same pipeline, made every config compile on its own (Liger's fused MoE: 243 compiles for 1 test).

from tritium import plugins  # noqa: E402
from tritium.compiler.compiler import ASTSource, compile  # noqa: E402
from tritium.hookspecs import PLUGIN_API, PassSpec, hookimpl  # noqa: E402

SIG = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}


def _mark(module, ctx):
    ctx.metadata.setdefault("marked_num_warps", []).append(ctx.options.num_warps)


class OptionalPass:
    """Registers a pass and puts it in the ttir pipeline only when ``on`` (as a knob would)."""
    TRITIUM_PLUGIN_API = PLUGIN_API

    def __init__(self, on: bool):
        self.on = on

    @hookimpl
    def tritium_passes(self):
        return [PassSpec("h6-mark", _mark, "records the options it sees")]

    @hookimpl
    def tritium_pipeline(self, stage, pipeline, options):
        if stage == "ttir" and self.on:
            pipeline.append("h6-mark")


@pytest.fixture
def llir_runs(monkeypatch, fresh_cache):
    runs = []
    real = CPUBackend.make_llir

    def counted(self, module, metadata, options):
        runs.append(options)
        return real(self, module, metadata, options)
    monkeypatch.setattr(CPUBackend, "make_llir", counted)
    return runs


def _registry(extra):
    return plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "cpu": "tritium_cpu.plugin",
                                                "extra": extra})


def test_a_plugin_pass_that_is_not_in_the_pipeline_does_not_stop_sharing(llir_runs):
    with plugins.use(_registry(OptionalPass(on=False))):
        compile(ASTSource(scale, SIG, {"BLOCK": 64}), options={"num_warps": 4})
        compile(ASTSource(scale, SIG, {"BLOCK": 64}), options={"num_warps": 8})
    assert len(llir_runs) == 1


def test_a_plugin_pass_in_the_pipeline_sees_every_set_of_options(llir_runs):
    with plugins.use(_registry(OptionalPass(on=True))):
        a = compile(ASTSource(scale, SIG, {"BLOCK": 64}), options={"num_warps": 4})
        b = compile(ASTSource(scale, SIG, {"BLOCK": 64}), options={"num_warps": 8})
    assert len(llir_runs) == 2
    assert a.metadata_dict["marked_num_warps"] == [4] and b.metadata_dict["marked_num_warps"] == [8]
