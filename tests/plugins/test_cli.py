"""``tritium plugins``, ``tritium knobs`` and ``tritium-opt`` as commands."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import types

from tritium import hookspecs as hs
from tritium import plugins
from tritium.tools.cli import main


def _extra():
    ns = types.SimpleNamespace(TRITIUM_PLUGIN_API=hs.PLUGIN_API)
    ns.tritium_passes = hs.hookimpl(lambda: [hs.PassSpec("listed-pass", lambda m, c: None, "shows in the listing")])
    ns.tritium_add_stages = hs.hookimpl(lambda stages: stages.wrap("llir", lambda f, s, m: f(s, m)))
    return ns


def _registry():
    import tritium.builtin_plugin as core
    import tritium_cpu.plugin as cpu
    return plugins.PluginRegistry([(hs.PluginInfo("core", "tritium", "0.1.0", "entry point"), core),
                                   (hs.PluginInfo("cpu", "tritium-cpu", "0.1.0", "entry point"), cpu),
                                   (hs.PluginInfo("lister", "tritium-lister", "2.0", "/tmp/lister.py"), _extra())])


def test_plugins_listing_shows_backends_plugins_passes_stages_and_knobs(capsys):
    with plugins.use(_registry()):
        assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "plugin API 1.0" in out
    assert "cpu  from plugin cpu (tritium-cpu 0.1.0)" in out and "capabilities: " in out and "host-memory" in out
    assert "lister  tritium-lister  2.0      1.0  /tmp/lister.py" in out
    assert "listed-pass" in out and "shows in the listing" in out and "tt-dce" in out
    assert "cpu: ttir -> llir [plugin 'lister' (distribution tritium-lister 2.0)] -> obj" in out
    assert "ttir passes: inline," in out and "tt-dce" in out.split("ttir passes:")[1]
    assert "compilation" in out and "cpu (tritium-cpu)" in out


def test_plugins_listing_as_json(capsys):
    with plugins.use(_registry()):
        assert main(["plugins", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [p["name"] for p in data["plugins"]] == ["core", "cpu", "lister"]
    assert data["plugins"][2]["hooks"] == ["tritium_passes", "tritium_add_stages"]
    cpu = data["backends"][0]
    assert cpu["name"] == "cpu" and "host-memory" in cpu["capabilities"] and cpu["active"]
    assert [s["name"] for s in cpu["stages"]] == ["ttir", "llir", "obj"]
    assert {"group": "plugins", "owner": "tritium"}.items() <= data["knob_groups"][5].items()


def test_knobs_listing(capsys):
    with plugins.use(_registry()):
        assert main(["knobs", "cpu"]) == 0
        assert main(["knobs", "no_such_group"]) == 1
    out = capsys.readouterr()
    assert "cpu.opt_level" in out.out and "TRITIUM_CPU_OPT_LEVEL" in out.out
    assert "no knob group 'no_such_group'" in out.err


def _run(args, **env):
    full = {**os.environ, "TRITIUM_PLUGINS_ENABLE": "core,cpu", **env}
    code = "import sys; from tritium.tools.cli import main; rc = main(sys.argv[1:]); " \
           "print('MLIR-IMPORTED' if 'mlir' in sys.modules else 'NO-MLIR'); sys.exit(rc)"
    return subprocess.run([sys.executable, "-c", code, *args], env=full, capture_output=True, text=True)


def test_listing_in_a_fresh_process_imports_no_mlir():
    res = _run(["plugins"])
    assert res.returncode == 0, res.stderr
    assert "NO-MLIR" in res.stdout and "tt-dce" in res.stdout


def test_broken_plugin_makes_the_listing_fail_with_its_name(tmp_path):
    bad = tmp_path / "tp_cli_broken.py"
    bad.write_text("TRITIUM_PLUGIN_API = (1, 0)\nraise RuntimeError('half installed')\n")
    res = _run(["plugins"], TRITIUM_PLUGIN_PATHS=str(bad), TRITIUM_PLUGINS_ENABLE="core,cpu,tp_cli_broken")
    assert res.returncode == 1 and "plugin 'tp_cli_broken'" in res.stderr and "half installed" in res.stderr


def test_console_scripts_are_installed():
    bindir = os.path.dirname(sys.executable)
    for script in ("tritium", "tritium-opt"):
        assert os.path.exists(os.path.join(bindir, script)), f"{script} is not installed; run make dev-install"


def test_opt_reports_parse_errors_and_missing_files(tmp_path, capsys):
    from tritium.tools.opt import main as opt
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @f( {\n")
    assert opt([str(bad), "-p", "cse"]) == 1
    assert opt([str(tmp_path / "missing.mlir"), "-p", "cse"]) == 2
    err = capsys.readouterr().err
    assert "cannot parse the input as MLIR" in err and "cannot read" in err


def test_opt_pipeline_splitting_keeps_option_commas():
    from tritium.tools.opt import split_pipeline
    assert split_pipeline("a, b{x=1,y=2},c") == ["a", "b{x=1,y=2}", "c"]
