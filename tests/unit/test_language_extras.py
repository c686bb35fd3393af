"""``tl.extra.<name>`` from plugins (hookspecs' ``tritium_language_extras``), as Triton's backends add
``triton.language.extra.cuda``: found through the registry in effect, imported on first access, a name offered
twice refused naming both distributions, an unknown one an AttributeError that lists what there is."""
from __future__ import annotations

import sys
import types

import pytest

import tritium.language as tl
from tritium import builtin_plugin
from tritium import hookspecs as hs
from tritium import plugins
from tritium.plugins import PluginError, PluginRegistry


def _plugin(*extras):
    ns = types.SimpleNamespace(TRITIUM_PLUGIN_API=hs.PLUGIN_API)
    ns.tritium_language_extras = hs.hookimpl(lambda: list(extras))
    return ns


def _registry(**named):
    infos = [(hs.PluginInfo(name=n, distribution=f"dist-{n}", version="1", source="test"), obj)
             for n, obj in named.items()]
    return PluginRegistry([(hs.PluginInfo("core", "tritium", "0", "test"), builtin_plugin), *infos])


@pytest.fixture
def demo_module(monkeypatch):
    mod = types.ModuleType("tritium_unit_demo_extra")
    mod.answer = 42
    monkeypatch.setitem(sys.modules, mod.__name__, mod)
    return mod


def test_hook_language_extras_module_is_tl_extra_while_its_registry_is_in_effect(demo_module):
    reg = _registry(demo=_plugin(hs.LanguageExtra("demo", demo_module.__name__, "a demo")))
    assert reg.language_extras["demo"][0].module == demo_module.__name__
    with plugins.use(reg):
        assert tl.extra.demo is demo_module and tl.extra.demo.answer == 42
    with plugins.use(_registry()):
        with pytest.raises(AttributeError, match="no module 'demo'"):
            tl.extra.demo


def test_core_modules_are_found_without_plugins():
    with plugins.use(_registry()):
        assert tl.extra.libdevice.__name__ == "tritium.language.extra.libdevice"
        assert tl.extra.cpu.__name__ == "tritium.language.extra.cpu"


def test_unknown_extra_lists_what_there_is(demo_module):
    with plugins.use(_registry(demo=_plugin(hs.LanguageExtra("demo", demo_module.__name__)))):
        with pytest.raises(AttributeError) as err:
            tl.extra.nosuch
    msg = str(err.value)
    assert "'nosuch'" in msg and "cpu, demo, libdevice" in msg and "tl.extra.libdevice" in msg
    assert not hasattr(tl.extra, "__nosuch__")


def test_name_offered_by_two_plugins_names_both_distributions():
    with pytest.raises(PluginError, match="language extra 'x' is registered by two plugins") as err:
        _registry(a=_plugin(hs.LanguageExtra("x", "m1")), b=_plugin(hs.LanguageExtra("x", "m2")))
    assert "dist-a" in str(err.value) and "dist-b" in str(err.value)


@pytest.mark.parametrize("name, module", [("not-a-name", "m"), ("ok", ""), ("ok", "pkg.mod:fn")])
def test_malformed_extra_is_refused(name, module):
    with pytest.raises(ValueError):
        hs.LanguageExtra(name, module)
