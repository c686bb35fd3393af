"""Fixtures of the conformance suite: the backend under test, its capabilities, a private cache."""
from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np
import pytest


@dataclass(frozen=True)
class BackendUnderTest:
    name: str
    capabilities: frozenset

    def require(self, *caps: str) -> None:
        """Skip the calling test unless the backend declares every capability in ``caps``."""
        missing = [c for c in caps if c and c not in self.capabilities]
        if missing:
            pytest.skip(f"backend {self.name!r} does not declare {', '.join(missing)}")

    def require_dtype(self, *names: str) -> None:
        from .reference import DTYPES
        self.require(*(DTYPES[n].capability for n in names if DTYPES[n].capability))

    def has(self, cap: str) -> bool:
        return cap in self.capabilities


@pytest.fixture(scope="session")
def backend() -> BackendUnderTest:
    from tritium.backends import backends
    from tritium.runtime.driver import driver
    driver.active  # selects the backend (--backend, TRITON_DEFAULT_BACKEND or the best active one)
    name = driver.backend_name
    found = backends()
    spec = found[name].spec if name in found else None
    return BackendUnderTest(name or "?", frozenset(spec.capabilities) if spec is not None else frozenset())


@pytest.fixture(scope="session", autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory):
    """Compile everything afresh: a cache filled by another version of the compiler proves nothing."""
    from tritium import knobs
    with knobs.cache.scope():
        knobs.cache.dir = str(tmp_path_factory.mktemp("conformance-cache"))
        yield


@pytest.fixture(autouse=True)
def _device_arrays(backend: BackendUnderTest, monkeypatch: pytest.MonkeyPatch):
    """Tests pass numpy arrays. A backend that cannot read host memory gets copies on its device (torch
    tensors), and whatever the kernel wrote is copied back, so every test runs unchanged on any backend."""
    if backend.has("host-memory"):
        yield
        return
    torch = pytest.importorskip("torch", reason="a device backend receives its arrays as torch tensors")
    from tritium.runtime.driver import driver
    from tritium.runtime.jit import JITFunction
    from tritium.runtime.specialize import TensorWrapper, reinterpret
    device = driver.active.get_active_torch_device()
    original = JITFunction.run

    def run(self, *args, grid, warmup=False, **kwargs):
        moved = []

        def to_device(a):
            if isinstance(a, np.ndarray):
                t = torch.from_numpy(np.ascontiguousarray(a)).to(device)
                moved.append((a, t))
                return t
            if isinstance(a, TensorWrapper) and isinstance(a.base, np.ndarray):
                return reinterpret(to_device(a.base), a.dtype)
            if isinstance(a, tuple):
                return type(a)(*map(to_device, a)) if hasattr(a, "_fields") else tuple(map(to_device, a))
            if type(a).__name__ == "TensorDescriptor":
                return type(a)(strided_copy(a.base), a.shape, a.strides, a.block_shape, a.padding)
            return a

        def strided_copy(a):
            """A descriptor carries its own strides: its base must keep the array's place in its buffer (a view
            of a larger array stays a view), so the whole buffer goes to the device."""
            if not isinstance(a, np.ndarray):
                return to_device(a)
            root = a
            while isinstance(root.base, np.ndarray):
                root = root.base
            if not root.flags.c_contiguous or root.dtype != a.dtype:
                return to_device(a)
            flat = root.reshape(-1)
            dev = to_device(flat)
            offset = (a.__array_interface__["data"][0] - root.__array_interface__["data"][0]) // a.itemsize
            return dev.as_strided(a.shape, [st // a.itemsize for st in a.strides], offset)

        args = tuple(to_device(a) for a in args)
        kwargs = {k: to_device(v) for k, v in kwargs.items()}
        out = original(self, *args, grid=grid, warmup=warmup, **kwargs)
        for host, dev in moved:
            host[...] = dev.cpu().numpy()
        return out

    monkeypatch.setattr(JITFunction, "run", run)
    yield


@pytest.fixture
def rng(request) -> np.random.Generator:
    # the node id carries the path pytest was started from; the module's import name does not, so a test
    # draws the same inputs wherever (and however: --pyargs or a path) the suite runs
    seed = zlib.crc32(f"{request.node.module.__name__}::{request.node.name}".encode())
    return np.random.default_rng(seed)
