"""The plugin registry through its public API: order, checks, collisions, knobs and cache keys.

No kernel is compiled here and no MLIR is imported: plugins are small objects built in each test."""
from __future__ import annotations

import types

import pytest

from tritium import builtin_plugin
from tritium import hookspecs as hs
from tritium import knobs, plugins
from tritium.plugins import PluginError, PluginRegistry


def make_plugin(api=hs.PLUGIN_API, **hooks):
    """A plugin object whose hooks are the given functions (``tryfirst__name`` marks tryfirst)."""
    ns = types.SimpleNamespace()
    if api is not None:
        ns.TRITIUM_PLUGIN_API = api
    for key, fn in hooks.items():
        opts, _, name = key.rpartition("__")
        setattr(ns, name, hs.hookimpl(**({opts: True} if opts else {}))(fn))
    return ns


def info(name, dist=None, version="1.0"):
    return hs.PluginInfo(name=name, distribution=dist or f"dist-{name}", version=version, source="test")


def registry(*named):
    return PluginRegistry([(info(n, d, v), obj) for n, d, v, obj in named])


def core():
    return ("core", "tritium", "0.1.0", builtin_plugin)


def test_hook_order_is_core_then_backends_then_others_with_tryfirst_and_trylast():
    def key(name):
        return lambda: name
    named = [("zeta", None, "1", make_plugin(tritium_cache_key=key("zeta"))),
             ("alpha", None, "1", make_plugin(tritium_cache_key=key("alpha"))),
             ("gpu", None, "1", make_plugin(tritium_backends=lambda: [], tritium_cache_key=key("gpu"))),
             ("early", None, "1", make_plugin(tryfirst__tritium_cache_key=key("early"))),
             ("late", None, "1", make_plugin(trylast__tritium_cache_key=key("late"))),
             core()]
    reg = registry(*named)
    assert reg.order == ["core", "gpu", "alpha", "early", "late", "zeta"]
    called = [r for _, r in reg.call_each("tritium_cache_key", options=None, backend=None)]
    assert called == ["early", "gpu", "alpha", "zeta", "late"]


def test_hook_wrappers_are_refused():
    def wrapper(options, backend):
        yield
    p = make_plugin()
    p.tritium_cache_key = hs.hookimpl(hookwrapper=True)(wrapper)
    with pytest.raises(PluginError, match="hook wrapper"):
        registry(("wrapping", None, "1", p))


def test_misspelled_hook_is_refused():
    p = make_plugin()
    p.tritium_pases = lambda: []
    with pytest.raises(PluginError, match=r"tritium_pases, which are not tritium hooks"):
        registry(("typo", "typo-dist", "2.0", p))


@pytest.mark.parametrize("api, expect", [
    (None, "does not declare the plugin API"),
    ((hs.PLUGIN_API[0] + 1, 0), f"targets plugin API {hs.PLUGIN_API[0] + 1}.0"),
    ((hs.PLUGIN_API[0], hs.PLUGIN_API[1] + 1), "install a version of old-dist"),
    ("one", "expected a \\(major, minor\\) pair"),
])
def test_api_version_mismatch_names_the_distribution(api, expect):
    with pytest.raises(PluginError, match=expect) as err:
        registry(("old", "old-dist", "0.3", make_plugin(api=api)))
    assert "old-dist 0.3" in str(err.value)


def test_one_module_under_two_names_is_an_error():
    p = make_plugin()
    with pytest.raises(PluginError, match="are the same object"):
        PluginRegistry([(info("one"), p), (info("two"), p)])


def test_two_plugins_with_one_name_are_an_error_naming_both():
    with pytest.raises(PluginError, match="two plugins are named 'same'") as err:
        PluginRegistry([(info("same", "dist-one"), make_plugin()), (info("same", "dist-two"), make_plugin())])
    assert "dist-one" in str(err.value) and "dist-two" in str(err.value)


def test_hook_passes_collision_names_both_plugins_and_distributions():
    def passes():
        return [hs.PassSpec("shared-name", lambda m, c: None)]
    with pytest.raises(PluginError, match="pass 'shared-name' is registered by two plugins") as err:
        registry(("a", "dist-a", "1", make_plugin(tritium_passes=lambda: passes())),
                 ("b", "dist-b", "1", make_plugin(tritium_passes=lambda: passes())))
    assert "'a' of distribution dist-a" in str(err.value) and "'b' of distribution dist-b" in str(err.value)


def test_hook_backends_collision_names_both():
    def backends():
        return [hs.BackendSpec("dup", "x:Y", "x:Z")]
    with pytest.raises(PluginError, match="backend 'dup' is registered by two plugins") as err:
        registry(("v1", "vendor-one", "1", make_plugin(tritium_backends=lambda: backends())),
                 ("v2", "vendor-two", "1", make_plugin(tritium_backends=lambda: backends())))
    assert "vendor-one" in str(err.value) and "vendor-two" in str(err.value)


def test_hook_returning_the_wrong_type_is_named():
    with pytest.raises(PluginError, match="expected tritium.hookspecs.PassSpec"):
        registry(("bad", None, "1", make_plugin(tritium_passes=lambda: ["not-a-spec"])))


def test_failure_while_building_the_registry_names_plugin_distribution_and_hook():
    def broken():
        raise KeyError("missing table")
    with pytest.raises(PluginError) as err:
        registry(("broken", "broken-dist", "4.2", make_plugin(tritium_passes=broken)))
    msg = str(err.value)
    assert "'broken'" in msg and "broken-dist 4.2" in msg and "tritium_passes" in msg and "missing table" in msg


class unit_demo_knobs(knobs.KnobGroup):
    group_name = "unit_demo"
    level = knobs.IntKnob("TRITIUM_UNIT_DEMO_LEVEL", 1, doc="a demo level")
    verbose = knobs.BoolKnob("TRITIUM_UNIT_DEMO_VERBOSE", doc="printing only")
    not_in_cache_key = ("verbose",)


DEMO = unit_demo_knobs()


def test_hook_knobs_group_is_published_with_its_own_environment(monkeypatch):
    registry(("demo", None, "1", make_plugin(tritium_knobs=lambda: [DEMO])))
    assert knobs.unit_demo is DEMO and knobs.groups()["unit_demo"] is DEMO
    monkeypatch.setenv("TRITIUM_UNIT_DEMO_LEVEL", "3")
    assert knobs.unit_demo.level == 3


def test_knob_group_collisions():
    class clash_env(knobs.KnobGroup):
        group_name = "unit_clash_env"
        x = knobs.BoolKnob("TRITON_ALWAYS_COMPILE")
    with pytest.raises(PluginError, match="TRITIUM_ALWAYS_COMPILE.*compilation.always_compile"):
        registry(("clash", None, "1", make_plugin(tritium_knobs=lambda: [clash_env()])))

    class core_name(knobs.KnobGroup):
        group_name = "compilation"
    with pytest.raises(PluginError, match="tritium's own"):
        registry(("steal", None, "1", make_plugin(tritium_knobs=lambda: [core_name()])))

    class first(knobs.KnobGroup):
        group_name = "unit_taken"
    registry(("owner", "owner-dist", "1", make_plugin(tritium_knobs=lambda: [first()])))
    with pytest.raises(PluginError, match="declared by two plugins: 'owner' of distribution owner-dist and "
                                          "'other' of distribution other-dist"):
        registry(("other", "other-dist", "1", make_plugin(tritium_knobs=lambda: [first()])))


def _key(reg):
    return reg.cache_key(options=None, backend=None)


def test_cache_key_follows_plugins_versions_knobs_and_hook():
    base = make_plugin(tritium_knobs=lambda: [DEMO])
    with knobs.scope():
        k1 = _key(registry(("demo", "demo-dist", "1.0", base)))
        assert k1 == _key(registry(("demo", "demo-dist", "1.0", base)))
        assert k1 != _key(registry(("demo", "demo-dist", "1.1", base)))               # version
        assert k1 != _key(registry(("demo", "demo-dist", "1.0", base),
                                   ("extra", None, "1", make_plugin())))               # one more plugin
        DEMO.level = 7
        assert k1 != _key(registry(("demo", "demo-dist", "1.0", base)))               # knob value
        DEMO.level = 1
        DEMO.verbose = True
        assert k1 == _key(registry(("demo", "demo-dist", "1.0", base)))               # exempt knob
    assert k1 != _key(registry(("demo", "demo-dist", "1.0", base),
                               ("keyed", None, "1", make_plugin(tritium_cache_key=lambda: "table-v2"))))


def test_hook_cache_key_result_is_in_the_key():
    state = {"v": "a"}
    reg = registry(("keyed", None, "1", make_plugin(tritium_cache_key=lambda options, backend: state["v"])))
    first = _key(reg)
    state["v"] = "b"
    assert _key(reg) != first


def test_pass_reads_put_knob_values_in_the_key():
    spec = hs.PassSpec("unit-reader", lambda m, c: None, reads=("language.fp32_default",))
    reg = registry(("reader", None, "1", make_plugin(tritium_passes=lambda: [spec])))
    with knobs.scope():
        knobs.language.fp32_default = "ieee"
        a = _key(reg)
        knobs.language.fp32_default = "tf32"
        assert _key(reg) != a
    bad = hs.PassSpec("unit-bad-reader", lambda m, c: None, reads=("nogroup.x",))
    with pytest.raises(PluginError, match="reads knob 'nogroup.x', which does not exist"):
        _key(registry(("badreader", None, "1", make_plugin(tritium_passes=lambda: [bad]))))


def test_jit_key_follows_registry_and_plugin_knobs():
    reg = registry(("demo", None, "1", make_plugin(tritium_knobs=lambda: [DEMO])))
    with plugins.use(reg), knobs.scope():
        k = plugins.jit_key()
        assert plugins.jit_key() == k
        DEMO.level = 5
        assert plugins.jit_key() != k
    with plugins.use(registry(("demo", None, "1", make_plugin(tritium_knobs=lambda: [DEMO])))):
        assert plugins.jit_key()[0] != k[0]


def test_use_nests_and_restores():
    a, b = registry(), registry()
    with plugins.use(a):
        with plugins.use(b):
            with plugins.use(a):
                assert plugins.registry() is a
            assert plugins.registry() is b
        assert plugins.registry() is a


def test_pass_spec_checks_and_lazy_functions():
    with pytest.raises(ValueError, match="pass name"):
        hs.PassSpec("has space", "canonicalize")
    with pytest.raises(TypeError, match="must be an upstream pass name or a callable"):
        hs.PassSpec("x", 42)
    fn = hs.lazy("os.path:basename")
    assert "os.path" in repr(fn) and fn("/a/b.c") == "b.c"
    with pytest.raises(ValueError):
        hs.lazy("no_colon")


def test_every_hook_is_declared_documented_and_typed():
    for name in hs.HOOK_NAMES:
        spec = getattr(hs.TritiumHookSpecs, name)
        assert spec.__doc__ and len(spec.__doc__.split()) > 10, f"{name} has no real documentation"
        assert "return" in spec.__annotations__, f"{name} has no return annotation"
