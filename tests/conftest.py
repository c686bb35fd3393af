"""Every test runs with an explicit plugin registry (core and the CPU backend) and a private cache, so
results never depend on what else is installed or cached on the machine."""
from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="session", autouse=True)
def isolated_tritium(tmp_path_factory: pytest.TempPathFactory):
    from tritium import knobs, plugins
    home = tmp_path_factory.mktemp("tritium-home")
    os.environ["TRITIUM_HOME"] = str(home)
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "cpu": "tritium_cpu.plugin"})
    with plugins.use(reg):
        yield reg
    knobs.reset()


@pytest.fixture(autouse=True)
def knobs_restored():
    """Every knob set during a test is undone after it, whatever set it: ``monkeypatch.setattr(knobs.x, "k", v)``
    restores the value it read, which turns an environment-derived value into one set from Python and hides the
    environment from every later test in the process (a fresh-clone CI run failed test_knobs that way)."""
    from tritium import knobs
    with knobs.scope():
        yield


@pytest.fixture
def fresh_cache(tmp_path):
    """A cache directory of the test's own."""
    from tritium import knobs
    with knobs.cache.scope():
        knobs.cache.dir = str(tmp_path / "cache")
        yield tmp_path / "cache"


@pytest.fixture(params=["compiled", "interpreter"])
def compiled_or_interpreted(request):
    """Kernels launched in the test run compiled for the CPU, then (second parameter) in the interpreter."""
    from tritium import knobs
    with knobs.runtime.scope(), knobs.interpreter.scope():
        knobs.runtime.interpret = request.param == "interpreter"
        yield request.param
