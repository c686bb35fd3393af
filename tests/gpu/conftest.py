"""GPU tier.

- ``test_emulated_*``: the GPU lowering library (core/tritium/gpu) run on the host emulator, one OS thread
  per GPU thread. Needs no GPU; runs everywhere.
- tests marked ``gpu``: need an NVIDIA GPU with tritium-nvidia; they skip with the reason otherwise.
"""
from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def emulator(isolated_tritium):
    """Kernels launched in the test run on the GPU emulator."""
    from tritium import knobs, plugins
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "gpu-emu": "tritium.gpu.emulator"})
    with plugins.use(reg), knobs.runtime.scope():
        knobs.runtime.default_backend = "gpu-emu"
        yield reg


def _cuda_reason() -> str:
    try:
        import tritium_nvidia.driver as d
    except ImportError as exc:
        return f"tritium-nvidia is not importable: {exc}"
    if not d.CudaDriver.is_active():
        return "no NVIDIA GPU with a working driver (cuda-bindings) on this machine"
    try:
        import torch
        if not torch.cuda.is_available():
            return "torch has no CUDA here"
    except ImportError:
        return "torch is not installed"
    return ""


@pytest.fixture(scope="session")
def cuda_registry(isolated_tritium):
    reason = _cuda_reason()
    if reason:
        pytest.skip(reason)
    from tritium import plugins
    return plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})


@pytest.fixture
def cuda(cuda_registry):
    """Kernels launched in the test run on the GPU (tritium-nvidia)."""
    from tritium import knobs, plugins
    with plugins.use(cuda_registry), knobs.runtime.scope():
        knobs.runtime.default_backend = "nvidia"
        yield cuda_registry


class Device:
    """Where a test's arrays live: numpy arrays for the emulator, torch CUDA tensors for the GPU."""

    def __init__(self, name: str) -> None:
        self.name = name

    def put(self, a):
        if self.name == "emu":
            return a
        import torch
        return torch.from_numpy(a.copy()).to("cuda")

    def get(self, t):
        if self.name == "emu":
            return t
        self.sync()
        return t.cpu().numpy()

    def sync(self) -> None:
        from tritium.runtime.driver import driver
        driver.active.synchronize()


@pytest.fixture(params=["emu", "cuda"])
def dev(request):
    """Run the test on the GPU emulator and, where there is one, on an NVIDIA GPU."""
    if request.param == "emu":
        request.getfixturevalue("emulator")
    else:
        request.getfixturevalue("cuda")
    return Device(request.param)


def pytest_collection_modifyitems(config, items):
    """Mark ``gpu`` the tests of this folder that run on an NVIDIA GPU (the ``cuda`` fixture, or the ``cuda``
    side of ``dev``), so that ``-m "not gpu"`` (make test-nogpu) deselects them; the emulator's run everywhere.
    This hook sees the whole session's items: only this folder's are marked."""
    here = Path(__file__).parent
    for item in items:
        if here not in Path(str(item.fspath)).parents:
            continue
        params = getattr(getattr(item, "callspec", None), "params", {})
        # ``dev`` asks for its ``cuda`` fixture at run time (getfixturevalue): only its parameter says which
        uses_cuda = params.get("dev") == "cuda" if "dev" in params else \
            bool({"cuda", "cuda_registry"} & set(getattr(item, "fixturenames", ())))
        if uses_cuda:
            item.add_marker(pytest.mark.gpu)
