"""The plugin's tests run with an explicit registry (core, the CPU backend, this plugin) and a private
cache, whatever else is installed."""
from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def registry(tmp_path_factory):
    from tritium import plugins
    return plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "cpu": "tritium_cpu.plugin",
                                                "opstats": "tritium_opstats.plugin"})


@pytest.fixture(autouse=True)
def _isolated(registry, tmp_path):
    # function scope: tests of other plugins may run in the same process with registries of their own
    from tritium import knobs, plugins
    with plugins.use(registry), knobs.scope():
        knobs.cache.dir = str(tmp_path / "cache")
        yield
