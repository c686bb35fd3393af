"""AMD tier (tritium-amd), without an AMD GPU: code objects are compiled for gfx90a, gfx942 and gfx950 and inspected
(ELF machine and flags, kernel descriptors, kernarg layout, register and LDS use, no undefined symbols); the
target-neutral lowering is run at AMD's wave size (64) on the GPU host emulator; the HIP driver's tests skip with
the reason the runtime is missing."""
from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def amd_registry(isolated_tritium):
    pytest.importorskip("tritium_amd", reason="tritium-amd is not installed")
    from tritium import plugins
    return plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "amd": "tritium_amd.plugin"})


@pytest.fixture
def emulator64(isolated_tritium):
    """Kernels launched in the test run on the GPU host emulator; tests pass ``warp_size=64`` (AMD's wave)."""
    from tritium import knobs, plugins
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "gpu-emu": "tritium.gpu.emulator"})
    with plugins.use(reg), knobs.runtime.scope():
        knobs.runtime.default_backend = "gpu-emu"
        yield reg
