"""The stage pipeline through the public API: the seed's inspection hook, plugins' stages, the cache key,
dumps and overrides, and what happens when a stage breaks."""
from __future__ import annotations

import os

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium import hookspecs as hs
from tritium import knobs, plugins
from tritium.compiler import ASTSource
from tritium.plugins import PluginError


@triton.jit
def twice(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2, mask=m)


def _run(kernel=twice):
    x = np.arange(100, dtype=np.float32)
    out = np.zeros_like(x)
    k = kernel[(1, )](x, out, 100, BLOCK=128)
    np.testing.assert_array_equal(out, 2 * x)
    return k


@pytest.fixture
def fresh(fresh_cache):
    twice.device_caches.clear()  # forget in-memory kernels: each test starts from the disk cache
    with knobs.scope():
        yield fresh_cache


def test_seed_inspection_hook_verbatim(fresh):
    calls = []

    def inspect_stages(_self, stages, options, language, capability):
        # inspect or modify add_stages here
        calls.append((type(_self).__name__, list(stages), capability))
    triton.knobs.runtime.add_stages_inspection_hook = inspect_stages
    _run()
    assert calls and calls[0][1] == ["ttir", "llir", "obj"]


def test_hook_wraps_replaces_inserts_and_removes(fresh):
    log = []

    def hook(_self, stages, options, language, capability):
        orig = stages["llir"]

        def wrapped(src, md):
            log.append("llir")
            return orig(src, md)
        stages["llir"] = wrapped
        stages.insert_after("ttir", "notes", lambda src, md: (log.append("notes"), src)[1])
    knobs.runtime.add_stages_inspection_hook = hook
    k = _run()
    assert log == ["notes", "llir"]
    assert "notes" in k.asm


def test_hook_is_part_of_the_cache_key(fresh):
    def hook_a(_self, stages, options, language, capability):
        pass

    def hook_b(_self, stages, options, language, capability):
        stages.insert_after("llir", "extra", lambda src, md: src)
    knobs.runtime.add_stages_inspection_hook = hook_a
    ka = _run()
    knobs.runtime.add_stages_inspection_hook = hook_b
    kb = _run()
    assert ka.hash != kb.hash and "extra" in kb.asm and "extra" not in ka.asm


def test_zero_argument_form_of_the_hook(fresh):
    state = {"key": "v1"}

    def hook(*args):
        if not args:
            return (state["key"], "hash-" + state["key"])
    knobs.runtime.add_stages_inspection_hook = hook
    k1 = _run()
    state["key"] = "v2"
    twice.device_caches.clear()
    k2 = _run()
    assert k1.hash != k2.hash


class _StagePlugin:
    TRITIUM_PLUGIN_API = hs.PLUGIN_API

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.order: list[str] = []

    @hs.hookimpl
    def tritium_add_stages(self, stages, options, language, capability, backend):
        def tag(src, md):
            if self.fail:
                raise RuntimeError("boom")
            self.order.append("plugin-stage")
            return src
        stages.insert_after("ttir", "tagged", tag)


def _registry(*extra):
    objs = {"core": "tritium.builtin_plugin", "cpu": "tritium_cpu.plugin"}
    for i, e in enumerate(extra):
        objs[f"testplugin{i}"] = e
    return plugins.PluginRegistry.from_objects(objs, distribution="test-dist")


def test_plugins_then_inspection_hook(fresh):
    plugin = _StagePlugin()
    seen = []

    def hook(_self, stages, options, language, capability):
        seen.append(list(stages))  # the plugin's stage is already there: the hook runs last
    knobs.runtime.add_stages_inspection_hook = hook
    with plugins.use(_registry(plugin)):
        k = _run()
    assert seen[0] == ["ttir", "tagged", "llir", "obj"]
    assert plugin.order == ["plugin-stage"] and "tagged" in k.asm


def test_failing_plugin_stage_names_plugin_and_leaves_no_cache(fresh):
    with plugins.use(_registry(_StagePlugin(fail=True))):
        with pytest.raises(PluginError) as err:
            _run()
    msg = str(err.value)
    assert "testplugin0" in msg and "test-dist" in msg and "'tagged'" in msg and "boom" in msg
    entries = [d for d, _, files in os.walk(fresh) if "manifest.json" in files]
    assert entries == []


def test_disk_cache_hit_and_always_compile(fresh):
    built = []

    def hook(_self, stages, options, language, capability):
        built.append(1)
    knobs.runtime.add_stages_inspection_hook = hook
    _run()
    twice.device_caches.clear()
    _run()
    assert len(built) == 1, "the second compile must come from the disk cache"
    twice.device_caches.clear()
    knobs.compilation.always_compile = True
    _run()
    assert len(built) == 2


def test_stages_keep_their_order_on_a_cache_hit(fresh):
    compiled = list(_run().asm)
    assert compiled[:3] == ["ttir", "llir", "obj"]
    twice.device_caches.clear()
    assert list(_run().asm) == compiled, "a kernel from the disk cache lists its stages in another order"


def test_corrupt_cache_entry_is_recompiled(fresh):
    k = _run()
    paths = [os.path.join(d, f) for d, _, files in os.walk(fresh) for f in files if f.endswith(".obj")]
    assert paths
    with open(paths[0], "wb") as f:
        f.write(b"not an object file")
    twice.device_caches.clear()
    k2 = _run()
    assert k2.asm["obj"] == k.asm["obj"]


def test_dump_and_override_workflow(fresh, tmp_path):
    dump, override = tmp_path / "dump", tmp_path / "override"
    knobs.compilation.always_compile = True
    knobs.compilation.dump_ir = True
    knobs.cache.dump_dir = str(dump)
    # step 1: run once, dumping every stage
    _run()
    (kernel_dir, ) = list(dump.iterdir())
    assert {p.suffix for p in kernel_dir.iterdir()} >= {".ttir", ".llir", ".obj", ".json"}
    # steps 2-3: copy the dump, keep only the stage to override, and change it (store 3x instead of 2x)
    target = override / kernel_dir.name
    target.mkdir(parents=True)
    ttir = next(kernel_dir.glob("*.ttir")).read_text()
    assert "arith.constant 2.000000e+00" in ttir
    (target / next(kernel_dir.glob("*.ttir")).name).write_text(
        ttir.replace("arith.constant 2.000000e+00", "arith.constant 3.000000e+00"))
    # step 4: run again with overriding on
    knobs.compilation.override = True
    knobs.cache.override_dir = str(override)
    twice.device_caches.clear()
    x = np.arange(100, dtype=np.float32)
    out = np.zeros_like(x)
    twice[(1, )](x, out, 100, BLOCK=128)
    np.testing.assert_array_equal(out, 3 * x)


def test_compile_without_launching():
    from tritium.runtime.driver import driver
    src = ASTSource(fn=twice, signature={"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"},
                    constexprs={"BLOCK": 64})
    k = triton.compile(src, target=driver.active.get_current_target())
    assert set(k.asm) == {"ttir", "llir", "obj"}
    assert isinstance(k.asm["obj"], bytes) and k.asm["obj"][:4] == b"\x7fELF"
    assert '"tt.load"' in k.asm["ttir"] and "define" in k.asm["llir"]
