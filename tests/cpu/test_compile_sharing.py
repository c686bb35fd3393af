"""Options the CPU backend's code does not depend on (GPU launch and tuning parameters such as num_warps) do not
make it compile again: each set of options keeps its own cache entry and metadata, made from the one
compilation (tritium.compiler.shared_code). Options that change the code, a plugin that can read the options and
the seed's inspection hook each still get compilations of their own."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium import knobs, plugins
from tritium.compiler.compiler import ASTSource, compile
from tritium.hookspecs import PLUGIN_API, hookimpl
from tritium.runtime import autotune_compile
from tritium_cpu.compiler import CPUBackend


@triton.jit
def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * 3.0 + 1.0, mask=m)


SIG = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}


@pytest.fixture
def llir_runs(monkeypatch, fresh_cache):
    """How many times the CPU backend lowered a kernel to LLVM IR (the real stage runs)."""
    runs = []
    real = CPUBackend.make_llir

    def counted(self, module, metadata, options):
        runs.append(options)
        return real(self, module, metadata, options)
    monkeypatch.setattr(CPUBackend, "make_llir", counted)
    return runs


def _src():
    return ASTSource(scale, SIG, {"BLOCK": 64})


def test_launch_options_the_cpu_ignores_compile_once(llir_runs):
    x = np.arange(100, dtype=np.float32)
    kernels = []
    for opts in ({}, {"num_warps": 8}, {"num_warps": 2, "num_stages": 5}, {"num_ctas": 2, "maxnreg": 128}):
        y = np.zeros_like(x)
        kernels.append(scale[(2, )](x, y, 100, BLOCK=64, **opts))
        np.testing.assert_array_equal(y, x * 3 + 1)
    assert len(llir_runs) == 1
    assert len({k.hash for k in kernels}) == 4          # every set of options has its own cache entry
    assert [k.metadata.num_warps for k in kernels] == [4, 8, 2, 4]
    assert [k.metadata.num_stages for k in kernels] == [3, 3, 5, 3]
    assert kernels[3].metadata.maxnreg == 128 and kernels[3].metadata.num_ctas == 2
    base = kernels[0]
    for k in kernels[1:]:
        assert k.metadata_dict["code_from"] == base.hash
        assert k.asm["obj"] == base.asm["obj"] and k.asm["llir"] == base.asm["llir"]


def test_a_shared_entry_is_a_cache_hit_later(llir_runs):
    first = compile(_src(), options={"num_warps": 8})
    assert len(llir_runs) == 1
    again = compile(_src(), options={"num_warps": 8})
    default = compile(_src(), options={})
    assert len(llir_runs) == 1
    assert again.hash == first.hash and again.metadata.num_warps == 8
    assert default.hash == first.metadata_dict["code_from"] and default.metadata.num_warps == 4


@pytest.mark.parametrize("opts", [{"enable_fp_fusion": False}, {"debug": True}, {"sanitize_overflow": True},
                                  {"num_warps": 8, "enable_fp_fusion": False}])
def test_options_that_change_the_code_compile_on_their_own(llir_runs, opts):
    plain = compile(_src(), options={})
    other = compile(_src(), options=opts)
    assert other.hash != plain.hash and other.metadata_dict.get("code_from") != plain.hash
    assert len(llir_runs) == 2
    assert all(getattr(llir_runs[1], k) == v for k, v in opts.items() if k != "num_warps")


class ReadsOptions:
    """A plugin whose stages may depend on num_warps: it must see the real value, so nothing is shared."""

    TRITIUM_PLUGIN_API = PLUGIN_API

    def __init__(self):
        self.seen = []

    @hookimpl
    def tritium_add_stages(self, stages, options):
        self.seen.append(options.num_warps)


class IgnoresOptions:
    """A plugin that cannot see the options (they are not among its hook's parameters)."""
    TRITIUM_PLUGIN_API = PLUGIN_API

    @hookimpl
    def tritium_add_stages(self, stages):
        pass


def _registry(extra):
    return plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "cpu": "tritium_cpu.plugin",
                                                "extra": extra})


def test_a_plugin_that_takes_the_options_gets_every_compilation(llir_runs):
    plugin = ReadsOptions()
    with plugins.use(_registry(plugin)):
        compile(_src(), options={"num_warps": 4})
        compile(_src(), options={"num_warps": 8})
    assert len(llir_runs) == 2 and plugin.seen == [4, 8]


def test_a_plugin_that_cannot_see_the_options_does_not_stop_sharing(llir_runs):
    with plugins.use(_registry(IgnoresOptions())):
        compile(_src(), options={"num_warps": 4})
        compile(_src(), options={"num_warps": 8})
    assert len(llir_runs) == 1


def test_the_inspection_hook_gets_every_compilation(llir_runs, monkeypatch):
    seen = []
    monkeypatch.setattr(knobs.runtime, "add_stages_inspection_hook",
                        lambda self, stages, options, language, capability: seen.append(options.num_warps))
    compile(_src(), options={"num_warps": 4})
    compile(_src(), options={"num_warps": 8})
    assert len(llir_runs) == 2 and seen == [4, 8]


def test_autotune_configs_that_differ_in_ignored_options_compile_once(llir_runs):
    configs = [triton.Config({"BLOCK": 64}, num_warps=w, num_stages=s) for w, s in ((1, 2), (4, 3), (8, 4))]
    configs.append(triton.Config({"BLOCK": 128}, num_warps=4))
    tuned = triton.autotune(configs, key=["n"], warmup=1, rep=2)(scale)
    x = np.arange(300, dtype=np.float32)
    y = np.zeros_like(x)
    tuned[lambda meta: (triton.cdiv(300, meta["BLOCK"]), )](x, y, 300)
    np.testing.assert_array_equal(y, x * 3 + 1)
    assert sorted(o.num_warps for o in llir_runs) == [4, 4]   # one per BLOCK; each compiled at the defaults
    # the compile workers would get one job per distinct code, not one per config
    assert len(autotune_compile._jobs(tuned, configs, (x, y, 300), {})) == 0   # all in the cache now
    with knobs.cache.scope():
        knobs.cache.dir = knobs.cache.dir + "-empty"
        assert len(autotune_compile._jobs(tuned, configs, (x, y, 300), {})) == 2
