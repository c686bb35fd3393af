"""Every compile-time hook through the public API, on CPU kernels: ``tritium_pipeline``, ``tritium_add_stages``
(add, replace, wrap, remove, composed by several plugins and the seed's inspection hook, in the documented
order), ``tritium_passes`` in a pipeline, ``tritium_cache_key`` and ``tritium_kernel_compiled``. Failures name
the plugin, its distribution and the stage, and leave nothing in the cache."""
from __future__ import annotations

import os
import types

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium import hookspecs as hs
from tritium import knobs, plugins
from tritium.plugins import PluginError, PluginRegistry


def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 3.0, mask=m)


def run():
    """Compile (a fresh JITFunction, so only the disk cache is shared) and check the result."""
    x = np.arange(50, dtype=np.float32)
    out = np.zeros_like(x)
    k = tritium.jit(scale)[(1,)](x, out, 50, BLOCK=64)
    np.testing.assert_array_equal(out, 3 * x)
    return k


def plugin(**hooks):
    ns = types.SimpleNamespace(TRITIUM_PLUGIN_API=hs.PLUGIN_API)
    for name, fn in hooks.items():
        setattr(ns, name, hs.hookimpl(fn))
    return ns


def reg_with(**extra):
    """core + cpu + the given plugins, each in a distribution named after it."""
    import tritium.builtin_plugin as core
    import tritium_cpu.plugin as cpu
    items = [(hs.PluginInfo("core", "tritium", "0.1.0", "test"), core),
             (hs.PluginInfo("cpu", "tritium-cpu", "0.1.0", "test"), cpu)]
    items += [(hs.PluginInfo(n, f"dist-{n}", "1.0", "test"), p) for n, p in extra.items()]
    return PluginRegistry(items)


def cache_entries(root) -> list:
    return [d for d, _, files in os.walk(root) if "manifest.json" in files]


@pytest.fixture(autouse=True)
def fresh(fresh_cache):
    with knobs.scope():
        yield fresh_cache


# -- tritium_passes + tritium_pipeline ------------------------------------------------------------

def _count_pass(seen):
    def run_pass(module, ctx):
        seen.append((ctx.stage, ctx.kernel_name, dict(ctx.pass_options)))
    return run_pass


def test_hook_pipeline_inserts_a_registered_pass_by_name():
    seen = []

    def pipeline(stage, pipeline):
        if stage == "ttir":
            pipeline.insert_after("canonicalize", "count-ops{level=2}", occurrence=-1)
            pipeline.insert_before("tt-combine", "count-ops")

    p = plugin(tritium_passes=lambda: [hs.PassSpec("count-ops", _count_pass(seen))], tritium_pipeline=pipeline)
    with plugins.use(reg_with(counter=p)):
        run()
    assert seen == [("ttir", "scale", {}), ("ttir", "scale", {"level": "2"})]


def test_hook_pipeline_edits_compose_in_plugin_order():
    log = []

    def first(stage, pipeline):
        pipeline.replace("tt-licm", "loop-invariant-code-motion")
        log.append(("a", list(pipeline)))

    def second(stage, pipeline):
        log.append(("b", list(pipeline)))
        pipeline.remove("loop-invariant-code-motion")

    with plugins.use(reg_with(b_second=plugin(tritium_pipeline=second), a_first=plugin(tritium_pipeline=first))):
        run()
    assert [who for who, _ in log] == ["a", "b"]
    assert "tt-licm" not in log[1][1] and log[1][1].count("loop-invariant-code-motion") == 2


def test_hook_pipeline_unknown_pass_names_the_plugin_that_asked():
    def pipeline(stage, pipeline):
        pipeline.append("no-such-pass")
    with plugins.use(reg_with(asker=plugin(tritium_pipeline=pipeline))):
        with pytest.raises(ValueError, match=r"asks for pass 'no-such-pass' \(put there by plugin 'asker' "
                                             r"\(distribution dist-asker 1.0\)\)"):
            run()


def test_hook_pipeline_failure_names_plugin_distribution_and_stage(fresh):
    def pipeline(stage, pipeline):
        pipeline.insert_after("not-there", "cse")
    with plugins.use(reg_with(clumsy=plugin(tritium_pipeline=pipeline))):
        with pytest.raises(PluginError) as err:
            run()
    msg = str(err.value)
    assert "'clumsy'" in msg and "dist-clumsy" in msg and "stage 'ttir'" in msg and "no pass 'not-there'" in msg
    assert cache_entries(fresh) == []


def test_hook_passes_failing_or_corrupting_pass_is_caught_and_nothing_is_cached(fresh):
    def boom(module, ctx):
        raise RuntimeError("pass exploded")

    def corrupt(module, ctx):
        from mlir import ir
        func = module.body.operations[0]
        entry = func.regions[0].blocks[0]
        with module.context, ir.Location.unknown(), ir.InsertionPoint.at_block_begin(entry):
            i32 = ir.IntegerType.get_signless(32)
            one = ir.Operation.create("arith.constant", results=[i32],
                                      attributes={"value": ir.IntegerAttr.get(i32, 1)}).result
            ir.Operation.create("arith.addi", results=[ir.F32Type.get()], operands=[one, one])  # wrong type

    for name, fn, expect in (("boom", boom, "failed in stage 'ttir': RuntimeError: pass exploded"),
                             ("corrupt", corrupt, "left invalid IR in stage 'ttir'")):
        p = plugin(tritium_passes=lambda n=name, f=fn: [hs.PassSpec(f"bad-{n}", f)],
                   tritium_pipeline=lambda pipeline, n=name: pipeline.append(f"bad-{n}"))
        with plugins.use(reg_with(**{name: p})):
            with pytest.raises(PluginError) as err:
                run()
        assert f"pass 'bad-{name}' of plugin '{name}' (distribution dist-{name} 1.0)" in str(err.value)
        assert expect in str(err.value)
    assert cache_entries(fresh) == []


def test_hook_passes_plugin_pass_runs_in_tritium_opt(tmp_path, capsys):
    from tritium.tools.opt import main
    seen = []
    ir_file = tmp_path / "k.mlir"
    ir_file.write_text("func.func @f() {\n  return\n}\n")
    with plugins.use(reg_with(counter=plugin(tritium_passes=lambda: [hs.PassSpec("count-ops", _count_pass(seen))]))):
        assert main([str(ir_file), "-p", "count-ops{x=1},canonicalize", "--stage", "mine"]) == 0
        assert main(["--list-passes"]) == 0
    out = capsys.readouterr().out
    assert seen == [("mine", "", {"x": "1"})] and "func.func @f" in out
    assert "count-ops" in out and "counter" in out


# -- tritium_add_stages ---------------------------------------------------------------------------

def test_hook_add_stages_add_replace_wrap_remove_compose_with_the_inspection_hook():
    order = []

    def a_adds(stages, backend):
        order.append("a")
        # a stage's result is the next stage's input: an inserted stage passes the module on
        stages.insert_after("ttir", "ttnote", lambda src, md: md.update(note="seen " + md["name"]) or src)
        stages.insert_before("ttnote", "ttscratch", lambda src, md: src)
        original_llir = stages["llir"]
        stages["llir"] = lambda src, md: original_llir(src, md) + "\n; replaced by a"  # replace

    def b_edits(stages):
        order.append("b")
        assert list(stages) == ["ttir", "ttscratch", "ttnote", "llir", "obj"]  # a ran before b
        stages.remove("ttscratch")
        stages.wrap("llir", lambda original, src, md: original(src, md) + "\n; wrapped by b")

    def inspection_hook(self, stages, options, language, capability):
        order.append("seed hook")

    knobs.runtime.add_stages_inspection_hook = inspection_hook
    with plugins.use(reg_with(b=plugin(tritium_add_stages=b_edits), a=plugin(tritium_add_stages=a_adds))):
        k = run()
    assert order == ["a", "b", "seed hook"]
    assert list(k.asm) == ["ttir", "ttnote", "llir", "obj"] and k.asm["ttnote"] == k.asm["ttir"]
    assert k.metadata.note == "seen scale"
    assert k.asm["llir"].endswith("; replaced by a\n; wrapped by b")


def test_hook_add_stages_failure_names_plugin_distribution_and_stage(fresh):
    def adds(stages):
        def explode(src, md):
            raise ValueError("bad stage")
        stages.insert_after("llir", "llcheck", explode)
    with plugins.use(reg_with(checker=plugin(tritium_add_stages=adds))):
        with pytest.raises(PluginError) as err:
            run()
    msg = str(err.value)
    assert "'checker'" in msg and "dist-checker 1.0" in msg and "stage 'llcheck'" in msg and "bad stage" in msg
    assert cache_entries(fresh) == []

    def hook_raises(stages):
        raise RuntimeError("cannot add")
    with plugins.use(reg_with(adder=plugin(tritium_add_stages=hook_raises))):
        with pytest.raises(PluginError, match=r"'adder' \(distribution dist-adder 1.0\) failed in hook tritium_add_stages"):
            run()
    assert cache_entries(fresh) == []


# -- tritium_cache_key and tritium_kernel_compiled ------------------------------------------------

def test_hook_cache_key_change_recompiles():
    calls = []
    state = {"key": "v1"}

    def passes():
        return [hs.PassSpec("note-call", lambda module, ctx: calls.append(1))]
    p = plugin(tritium_passes=passes, tritium_pipeline=lambda pipeline: pipeline.append("note-call"),
               tritium_cache_key=lambda: state["key"])
    with plugins.use(reg_with(keyed=p)):
        first = run()
        again = run()
        state["key"] = "v2"
        third = run()
    assert first.hash == again.hash != third.hash
    assert len(calls) == 2  # compiled, cache hit, compiled again


def test_hook_kernel_compiled_sees_compiles_and_cache_hits_and_failures_are_named():
    seen = []
    p = plugin(tritium_kernel_compiled=lambda kernel: seen.append((kernel.name, sorted(kernel.asm))))
    with plugins.use(reg_with(watcher=p)):
        run()
        run()  # from the disk cache
    assert seen == [("scale", ["llir", "obj", "ttir"])] * 2

    def raises(kernel):
        raise RuntimeError("watcher broke")
    with plugins.use(reg_with(watcher=plugin(tritium_kernel_compiled=raises))):
        with pytest.raises(PluginError, match=r"'watcher' \(distribution dist-watcher 1.0\) failed in hook "
                                              r"tritium_kernel_compiled: RuntimeError: watcher broke"):
            run()


def test_disabling_a_plugin_changes_the_key():
    p = plugin(tritium_kernel_compiled=lambda kernel: None)
    with plugins.use(reg_with(extra=p)):
        with_it = run()
    with plugins.use(reg_with()):
        without = run()
    assert with_it.hash != without.hash
