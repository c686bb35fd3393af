"""Discovery through the public API: entry points of distributions (made here as ``.dist-info`` folders on
a temporary ``sys.path`` entry, so nothing is installed), TRITIUM_PLUGIN_PATHS/TRITON_PLUGIN_PATHS, and the
enable/disable switches. Each test lets discovery load only the plugins it names (plus ``core``), so what
else is installed cannot change the result."""
from __future__ import annotations

import importlib
import sys
import textwrap
from pathlib import Path

import pytest

from tritium import knobs, plugins
from tritium.plugins import PluginError

PLUGIN_SOURCE = '''
import tritium.hookspecs as hs
TRITIUM_PLUGIN_API = {api}

@hs.hookimpl
def tritium_passes():
    return [hs.PassSpec("{pass_name}", lambda module, ctx: None, "a test pass")]
'''


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A folder on sys.path where tests put modules and .dist-info folders; forgotten afterwards."""
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    for var in ("TRITIUM_PLUGIN_PATHS", "TRITON_PLUGIN_PATHS", "TRITIUM_PLUGINS_ENABLE", "TRITIUM_PLUGINS_DISABLE"):
        monkeypatch.delenv(var, raising=False)
    before = set(sys.modules)
    with knobs.scope():
        yield root
    for name in set(sys.modules) - before:
        if name.startswith("tp_"):
            del sys.modules[name]
    importlib.invalidate_caches()


def make_dist(root: Path, dist: str, version: str, entry: str, module: str, source: str) -> None:
    (root / f"{module}.py").write_text(source)
    info = root / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[tritium.plugins]\n{entry} = {module}\n")
    importlib.invalidate_caches()


def plugin_source(pass_name: str, api: str = "hs.PLUGIN_API") -> str:
    return PLUGIN_SOURCE.format(api=api, pass_name=pass_name)


def test_entry_point_plugin_is_found_with_distribution_and_version(site):
    make_dist(site, "tritium-tpdemo", "2.5", "tpdemo", "tp_demo", plugin_source("tp-demo-pass"))
    knobs.plugins.enable = ("core", "tpdemo")
    reg = plugins.discover()
    i = reg.infos["tpdemo"]
    assert (i.distribution, i.version, i.source, i.api) == ("tritium-tpdemo", "2.5", "entry point", (1, 0))
    assert reg.passes["tp-demo-pass"][1] is i
    assert set(reg.infos) == {"core", "tpdemo"}  # nothing else that is installed was loaded


def test_disabled_plugin_is_not_even_imported_and_the_key_changes(site):
    make_dist(site, "tritium-tpoff", "1.0", "tpoff", "tp_off", plugin_source("tp-off-pass"))
    knobs.plugins.enable = ("core", "tpoff")
    on = plugins.discover()
    del sys.modules["tp_off"]
    knobs.plugins.disable = ("tpoff",)
    off = plugins.discover()
    assert "tpoff" not in off.infos and "tp_off" not in sys.modules
    assert on.identity() != off.identity()


def test_plugin_failing_at_import_names_plugin_distribution_and_discovery(site):
    make_dist(site, "tritium-tpbroken", "0.9", "tpbroken", "tp_broken", "raise ImportError('no libfoo')\n")
    knobs.plugins.enable = ("core", "tpbroken")
    with pytest.raises(PluginError) as err:
        plugins.discover()
    msg = str(err.value)
    assert "'tpbroken'" in msg and "tritium-tpbroken 0.9" in msg and "discovery" in msg and "no libfoo" in msg
    assert "TRITIUM_PLUGINS_DISABLE=tpbroken" in msg
    knobs.plugins.disable = ("tpbroken",)
    assert "tpbroken" not in plugins.discover().infos


def test_two_distributions_with_one_plugin_name_name_both(site):
    make_dist(site, "tritium-tpone", "1.0", "tptwin", "tp_one", plugin_source("tp-one"))
    make_dist(site, "tritium-tptwo", "1.0", "tptwin", "tp_two", plugin_source("tp-two"))
    knobs.plugins.enable = ("core", "tptwin")
    with pytest.raises(PluginError, match="two distributions provide a plugin named 'tptwin'") as err:
        plugins.discover()
    assert "tritium-tpone" in str(err.value) and "tritium-tptwo" in str(err.value)


def test_two_distributions_registering_one_pass_name_both(site):
    make_dist(site, "tritium-tpa", "1.0", "tpa", "tp_a", plugin_source("tp-shared"))
    make_dist(site, "tritium-tpb", "3.0", "tpb", "tp_b", plugin_source("tp-shared"))
    knobs.plugins.enable = ("core", "tpa", "tpb")
    with pytest.raises(PluginError, match="pass 'tp-shared' is registered by two plugins") as err:
        plugins.discover()
    assert "tritium-tpa" in str(err.value) and "tritium-tpb" in str(err.value)


def test_api_mismatch_through_an_entry_point(site):
    make_dist(site, "tritium-tpfuture", "9.0", "tpfuture", "tp_future", plugin_source("tp-f", api="(99, 0)"))
    knobs.plugins.enable = ("core", "tpfuture")
    with pytest.raises(PluginError, match=r"tritium-tpfuture 9.0\) targets plugin API 99.0"):
        plugins.discover()


def test_enabling_a_plugin_nobody_provides_is_an_error(site):
    knobs.plugins.enable = ("core", "tp_nonexistent")
    with pytest.raises(PluginError, match="TRITIUM_PLUGINS_ENABLE names tp_nonexistent"):
        plugins.discover()


def test_plugin_paths_load_files_folders_and_packages(site, tmp_path, monkeypatch):
    single = tmp_path / "tp_single.py"
    single.write_text(plugin_source("tp-single"))
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "tp_in_folder.py").write_text(plugin_source("tp-in-folder"))
    (folder / "_private.py").write_text("raise RuntimeError('never imported')\n")
    pkg = folder / "tp_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from .impl import *  # noqa\nfrom .impl import TRITIUM_PLUGIN_API\n")
    (pkg / "impl.py").write_text(plugin_source("tp-pkg"))
    monkeypatch.setenv("TRITIUM_PLUGIN_PATHS", f"{single}:{folder}")
    knobs.plugins.enable = ("core", "tp_single", "tp_in_folder", "tp_pkg")
    reg = plugins.discover()
    assert {"tp-single", "tp-in-folder", "tp-pkg"} <= set(reg.passes)
    assert reg.infos["tp_single"].source == str(single)
    assert reg.infos["tp_pkg"].distribution == f"(path) {pkg}"


def test_tritons_variable_works_too_and_a_changed_file_changes_the_key(site, tmp_path, monkeypatch):
    f = tmp_path / "tp_triton_var.py"
    f.write_text(plugin_source("tp-triton-var"))
    monkeypatch.delenv("TRITIUM_PLUGIN_PATHS", raising=False)
    monkeypatch.setenv("TRITON_PLUGIN_PATHS", str(f))
    knobs.plugins.enable = ("core", "tp_triton_var")
    first = plugins.discover()
    assert "tp-triton-var" in first.passes
    f.write_text(plugin_source("tp-triton-var") + "\n# edited\n")
    assert plugins.discover().identity() != first.identity()


@pytest.mark.parametrize("entry, message", [
    ("/nonexistent/tp_missing.py", "which does not exist"),
    ("{tmp}/libTritonPlugin.so", "a native library"),
])
def test_bad_plugin_paths_explain_themselves(site, tmp_path, entry, message):
    (tmp_path / "libTritonPlugin.so").write_bytes(b"\x7fELF")
    knobs.plugins.paths = (entry.format(tmp=tmp_path),)
    with pytest.raises(PluginError, match=message):
        plugins.discover()


def test_path_plugin_that_would_shadow_a_module_is_refused(site, tmp_path):
    (tmp_path / "json.py").write_text(plugin_source("tp-json"))
    knobs.plugins.paths = (str(tmp_path / "json.py"),)
    with pytest.raises(PluginError, match="has the name of module 'json'"):
        plugins.discover()


def test_path_plugin_raising_names_its_file(site, tmp_path):
    f = tmp_path / "tp_raises.py"
    f.write_text("x = 1 / 0\n")
    knobs.plugins.paths = (str(f),)
    with pytest.raises(PluginError, match=r"plugin 'tp_raises' from .*tp_raises.py .*ZeroDivisionError"):
        plugins.discover()


def test_configure_switches_plugins_from_python(site, tmp_path, monkeypatch):
    monkeypatch.setattr(plugins, "_active", plugins._active)  # leave the process's registry as it was
    f = tmp_path / "tp_configured.py"
    f.write_text(plugin_source("tp-configured"))
    reg = plugins.configure(enable=["core", "tp_configured"], paths=[str(f)])
    assert "tp-configured" in reg.passes and knobs.plugins.paths == (str(f),)
    reg = plugins.configure(disable=["tp_configured"])
    assert "tp_configured" not in reg.infos


def test_installed_backend_is_found_by_name(site):
    knobs.plugins.enable = ("core", "cpu")
    reg = plugins.discover()
    spec, info = reg.backends["cpu"]
    assert info.distribution == "tritium-cpu" and info.source == "entry point" and spec.capabilities


def test_discovery_source_is_documented():
    doc = textwrap.dedent(plugins.__doc__ or "")
    assert "TRITIUM_PLUGIN_PATHS" in doc and "TRITIUM_PLUGINS_ENABLE" in doc
