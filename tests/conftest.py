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


@pytest.fixture
def fresh_cache(tmp_path):
    """A cache directory of the test's own."""
    from tritium import knobs
    with knobs.cache.scope():
        knobs.cache.dir = str(tmp_path / "cache")
        yield tmp_path / "cache"
