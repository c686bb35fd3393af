"""The seed's MLIR debugging knobs on CPU kernels: TRITON_REPRODUCER_PATH (and `tritium-opt --reproduce`),
MLIR_ENABLE_DIAGNOSTICS / MLIR_ENABLE_REMARK, USE_IR_LOC."""
from __future__ import annotations

import re
import types
import warnings

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium import debug_knobs
from tritium import hookspecs as hs
from tritium import knobs, plugins
from tritium.passes import diagnostics
from tritium.plugins import PluginError, PluginRegistry


def make_kernels():
    @triton.jit
    def victim(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        m = offs < n
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=m) * 3, mask=m)

    @triton.jit
    def bystander(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        m = offs < n
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=m) * 3, mask=m)
    return victim, bystander


def run(kernel):
    x = np.ones(10, np.float32)
    k = kernel[(1, )](x, 10, BLOCK=16)
    np.testing.assert_array_equal(x, 3 * np.ones(10, np.float32))
    return k


def plugin(**hooks):
    ns = types.SimpleNamespace(TRITIUM_PLUGIN_API=hs.PLUGIN_API)
    for name, fn in hooks.items():
        setattr(ns, name, hs.hookimpl(fn))
    return ns


def registry(**extra):
    import tritium.builtin_plugin as core
    import tritium_cpu.plugin as cpu
    items = [(hs.PluginInfo("core", "tritium", "0.1.0", "test"), core),
             (hs.PluginInfo("cpu", "tritium-cpu", "0.1.0", "test"), cpu)]
    items += [(hs.PluginInfo(n, f"dist-{n}", "1.0", "test"), p) for n, p in extra.items()]
    return PluginRegistry(items)


@pytest.fixture
def scoped(fresh_cache):
    debug_knobs._said.clear()
    with knobs.scope():
        knobs.compilation.always_compile = True
        yield


def _func(module):
    return next(op for op in module.body.operations if op.operation.name == "func.func")


# -- TRITON_REPRODUCER_PATH ------------------------------------------------------------------------

def exploding_plugin():
    """Marks the kernel, then fails on the kernel named `victim` only."""
    def mark(module, ctx):
        from mlir import ir
        _func(module).attributes["test.marked"] = ir.UnitAttr.get(module.context)

    def explode(module, ctx):
        if ctx.kernel_name == "victim":
            raise RuntimeError("explode-on-victim refuses kernel victim")

    def pipeline(stage, pipeline):
        if stage == "ttir":
            pipeline.insert_after("tt-combine", "mark-kernel")
            pipeline.insert_after("mark-kernel", "explode-on-victim")

    return plugin(tritium_passes=lambda: [hs.PassSpec("mark-kernel", mark), hs.PassSpec("explode-on-victim", explode)],
                  tritium_pipeline=pipeline)


def test_reproducer_holds_the_ir_before_the_failing_pass_and_replays_it(scoped, tmp_path, monkeypatch, capsys):
    from tritium.passes import reproducer
    from tritium.tools.opt import main
    path = tmp_path / "repro" / "victim.mlir"
    monkeypatch.setenv("TRITIUM_REPRODUCER_PATH", str(path))       # the TRITIUM_ spelling of TRITON_REPRODUCER_PATH
    victim, bystander = make_kernels()
    with plugins.use(registry(boom=exploding_plugin())):
        run(bystander)                                              # the pass only fails on `victim`
        with pytest.raises(PluginError) as err:
            run(victim)
        msg = str(err.value)
        assert "pass 'explode-on-victim' of plugin 'boom'" in msg and "stage 'ttir'" in msg
        assert str(path) in msg and f"tritium-opt --reproduce {path}" in msg

        text = path.read_text()
        # MLIR's reproducer format: the IR, then the pipeline in an external_resources section
        assert re.search(r'\{-#\s*external_resources: \{\s*mlir_reproducer: \{\s*'
                         r'pipeline: "builtin\.module\(explode-on-victim\)"', text)
        repro = reproducer.read(text)
        assert (repro.passes, repro.stage, repro.kernel, repro.backend) == (["explode-on-victim"], "ttir", "victim",
                                                                            "cpu")
        # the IR right before the failing pass: the pass before it ran (its mark is there), the kernel's
        # source locations are kept, and the whole file (section included) is valid MLIR
        assert "test.marked" in repro.ir and "@victim" in repro.ir and "test_debug_knobs_mlir.py" in repro.ir
        from tritium._mlir import parse_module
        parse_module(text)

        capsys.readouterr()
        assert main([str(path), "--reproduce"]) == 1
        err_text = capsys.readouterr().err
        assert "pass 'explode-on-victim' of plugin 'boom'" in err_text
        assert "failed in stage 'ttir': RuntimeError: explode-on-victim refuses kernel victim" in err_text
    # without the plugin the same file names the pass that nothing registers
    assert main([str(path), "--reproduce"]) == 1
    assert "explode-on-victim" in capsys.readouterr().err


def test_reproducer_is_written_before_each_pass_of_a_successful_compile(scoped, tmp_path, capsys):
    from tritium.passes import reproducer
    from tritium.tools.opt import main
    path = tmp_path / "r.mlir"
    knobs.compilation.reproducer_path = str(path)
    seen = []

    def watch(module, ctx):
        seen.append(reproducer.read(path.read_text()).passes)

    def pipeline(stage, pipeline):
        for anchor in ("tt-combine", "cse"):
            pipeline.insert_after(anchor, "watch")

    with plugins.use(registry(w=plugin(tritium_passes=lambda: [hs.PassSpec("watch", watch)],
                                       tritium_pipeline=pipeline))):
        run(make_kernels()[1])
    assert seen == [["watch"], ["watch"]]              # written right before each pass, this one included
    last = reproducer.read(path.read_text())
    assert last.passes == ["canonicalize"] and last.kernel == "bystander"   # the stage's last pass
    assert main([str(path), "--reproduce"]) == 0
    assert "func.func" in capsys.readouterr().out


def test_reproducer_note_on_a_core_pass_failure(scoped, tmp_path, monkeypatch):
    """A failure in tritium's own pass keeps its exception, with a note naming the pass and the file."""
    import tritium.passes.pipeline as pl
    path = tmp_path / "core.mlir"
    knobs.compilation.reproducer_path = str(path)
    real = pl._run_python

    def failing(module, entry, *a, **kw):
        if entry == "tt-licm":
            raise ZeroDivisionError("simulated failure in tt-licm")
        return real(module, entry, *a, **kw)

    monkeypatch.setattr(pl, "_run_python", failing)
    with pytest.raises(ZeroDivisionError) as err:
        run(make_kernels()[0])
    notes = "\n".join(getattr(err.value, "__notes__", []))
    assert "pass 'tt-licm' failed in stage 'ttir'" in notes and str(path) in notes
    assert '"[\\"tt-licm\\"]"' in path.read_text()


# -- MLIR_ENABLE_DIAGNOSTICS -----------------------------------------------------------------------

def chatty_plugin():
    def chat(module, ctx):
        from tritium.passes._util import all_ops
        load = next(op for op in all_ops(module) if op.name == "tt.load")
        diagnostics.warning(load, "chatty warning")
        diagnostics.remark(load, "chatty remark")

    return plugin(tritium_passes=lambda: [hs.PassSpec("chat", chat)],
                  tritium_pipeline=lambda stage, pipeline: pipeline.append("chat") if stage == "ttir" else None)


@pytest.mark.parametrize("setting, warning, remark", [
    ("", False, False), ("warnings", True, False), ("remarks", True, True), ("remarks,operations", True, True),
])
def test_diagnostics_levels(scoped, capfd, setting, warning, remark):
    knobs.compilation.mlir_diagnostics = setting
    with plugins.use(registry(chat=chatty_plugin())):
        run(make_kernels()[1])
    err = capfd.readouterr().err
    assert ("warning: chatty warning" in err) == warning
    assert ("remark: chatty remark" in err) == remark
    if warning:     # pointed at the kernel's own source line
        assert re.search(r"test_debug_knobs_mlir\.py:\d+:\d+: warning: chatty warning", err)
    assert ("see current operation: %" in err and '"tt.load"' in err) == ("operations" in setting)


def test_diagnostics_stacktraces_and_bad_option(scoped, capfd):
    knobs.compilation.mlir_diagnostics = "warnings,stacktraces"
    with plugins.use(registry(chat=chatty_plugin())):
        run(make_kernels()[1])
        err = capfd.readouterr().err
        assert "warning: chatty warning" in err and "in chat" in err and "run_pipeline" in err
        knobs.compilation.mlir_diagnostics = "warnings,colours"
        with pytest.raises(knobs.KnobError, match="unknown option.*colours"):
            run(make_kernels()[1])


def test_diagnostics_of_mlir_itself_follow_the_knob(scoped, tmp_path, capfd):
    """A warning that MLIR emits (the parser's, for an unknown resource section) goes through the same policy."""
    from tritium.tools.opt import main
    path = tmp_path / "w.mlir"
    path.write_text('module {\n}\n{-#\n  external_resources: { zzz_unknown: { a: "b" } }\n#-}\n')
    assert main([str(path)]) == 0
    assert "zzz_unknown" not in capfd.readouterr().err           # default: errors only
    knobs.compilation.mlir_diagnostics = "warnings"
    assert main([str(path)]) == 0
    assert "warning: ignoring unknown external resources for 'zzz_unknown'" in capfd.readouterr().err
    knobs.compilation.mlir_diagnostics = "warnings,operations"
    with pytest.warns(debug_knobs.DebugKnobWarning, match="operations: .* no operation"):
        assert main([str(path)]) == 0


def test_mlir_enable_remark_is_deprecated_spelling_of_remarks(scoped, capfd, monkeypatch):
    monkeypatch.setenv("MLIR_ENABLE_REMARK", "1")
    with plugins.use(registry(chat=chatty_plugin())):
        with pytest.warns(debug_knobs.DebugKnobWarning, match="deprecated.*MLIR_ENABLE_DIAGNOSTICS=remarks"):
            run(make_kernels()[1])
    assert "remark: chatty remark" in capfd.readouterr().err


# -- USE_IR_LOC --------------------------------------------------------------------------------------

def test_use_ir_loc_points_locations_at_the_ttir_file(scoped):
    k = run(make_kernels()[1])
    assert "test_debug_knobs_mlir.py" in k.asm["ttir"]
    knobs.compilation.always_compile = False
    knobs.compilation.use_ir_loc = "ttir"        # part of the cache key: never served the Python-located build
    with warnings.catch_warnings():              # the LLVM IR's line table follows: nothing to warn about
        warnings.simplefilter("error", debug_knobs.DebugKnobWarning)
        k = run(make_kernels()[1])
    ttir = k.asm["ttir"]
    assert "test_debug_knobs_mlir.py" not in ttir
    files = set(re.findall(r'loc\("([^"]+\.ttir)"', ttir))
    assert len(files) == 1
    lines = open(files.pop()).read().splitlines()
    # every op's location is the line of the IR file that holds that op
    checked = 0
    for name, alias in re.findall(r'^\s*(?:%\S+ = )?"?([a-z_]+\.[a-z_.]+)"?.* loc\((#loc\d+)\)$', ttir, re.M):
        m = re.search(rf'^{alias} = loc\("[^"]+":(\d+):\d+\)', ttir, re.M)
        if m:
            assert name in lines[int(m.group(1)) - 1], (name, lines[int(m.group(1)) - 1])
            checked += 1
    assert checked >= 3
    # and the LLVM IR's debug locations (so the machine code's line table) point at those lines too
    llir = k.asm["llir"]
    assert re.search(r'!DIFile\(filename: "bystander\.ttir"', llir)
    dilocs = {m.group(1): int(m.group(2)) for m in re.finditer(r"^(!\d+) = !DILocation\(line: (\d+)", llir, re.M)}
    for inst, op in (("load", '"tt.load"'), ("store", '"tt.store"')):
        refs = re.findall(rf"^\s+(?:%\S+ = )?{inst} (?:<\d+ x )?float.*, !dbg (!\d+)", llir, re.M)
        assert refs and all(op in lines[dilocs[r] - 1] for r in refs), (inst, [lines[dilocs[r] - 1] for r in refs])


def test_use_ir_loc_without_line_info_warns_that_llvm_ir_cannot_follow(scoped):
    knobs.compilation.use_ir_loc = "ttir"
    knobs.compilation.disable_line_info = True
    with pytest.warns(debug_knobs.DebugKnobWarning, match="USE_IR_LOC=ttir.*TRITON_DISABLE_LINE_INFO=1"):
        k = run(make_kernels()[1])
    assert "!dbg" not in k.asm["llir"]


def test_use_ir_loc_of_a_stage_that_cannot_hold_locations_warns(scoped):
    for stage, why in (("llir", "not MLIR"), ("ttgir", "no stage 'ttgir'")):
        knobs.compilation.use_ir_loc = stage
        with pytest.warns(debug_knobs.DebugKnobWarning, match=f"USE_IR_LOC={stage}.*{why}"):
            run(make_kernels()[1])
    with warnings.catch_warnings():
        warnings.simplefilter("error", debug_knobs.DebugKnobWarning)
        run(make_kernels()[1])
