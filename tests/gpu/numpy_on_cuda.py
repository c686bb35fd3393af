"""pytest plugin (``-p numpy_on_cuda``, with tests/gpu on sys.path): run a test suite written with numpy
arrays, such as core's conformance suite, on a GPU backend. Every numpy array a launch receives is copied
to the GPU before it (the whole buffer it views, so views, offsets and aliasing keep their meaning) and
copied back after it; kernels then see device memory, as they must on a GPU.

    PYTHONPATH=tests/gpu pytest -p numpy_on_cuda --pyargs tritium.testing.conformance --backend=nvidia
"""
from __future__ import annotations

from typing import Any

import numpy as np


class DeviceView:
    """A numpy array's place in a device copy of its buffer: what the kernel binder needs of an array."""

    def __init__(self, buf: Any, offset: int, dtype: Any) -> None:
        self.buf, self.offset, self.dtype = buf, offset, dtype
        self.device = buf.device

    def data_ptr(self) -> int:
        return self.buf.data_ptr() + self.offset


def _root(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def pytest_configure(config: Any) -> None:
    import importlib
    jit = importlib.import_module("tritium.runtime.jit")
    from tritium.runtime.specialize import TensorWrapper
    original = jit.JITFunction.run

    def run(self: Any, *args: Any, grid: Any, warmup: bool = False, **kwargs: Any) -> Any:
        import torch
        buffers: dict[int, tuple[np.ndarray, Any]] = {}

        def move(a: Any) -> Any:
            if isinstance(a, np.ndarray):
                root = _root(a)
                if id(root) not in buffers:
                    raw = np.frombuffer(root.data if root.flags.c_contiguous else root.tobytes(), np.uint8) \
                        if root.size else np.zeros(1, np.uint8)
                    buffers[id(root)] = (root, torch.from_numpy(raw.copy()).to("cuda"))
                _, dev = buffers[id(root)]
                return DeviceView(dev, a.__array_interface__["data"][0] - root.__array_interface__["data"][0],
                                  a.dtype)
            if isinstance(a, TensorWrapper) and isinstance(a.base, np.ndarray):
                return TensorWrapper(move(a.base), a.dtype)
            return a

        args = tuple(move(a) for a in args)
        kwargs = {k: move(v) for k, v in kwargs.items()}
        try:
            return original(self, *args, grid=grid, warmup=warmup, **kwargs)
        finally:
            if buffers:
                torch.cuda.synchronize()
                for root, dev in buffers.values():
                    if root.flags.writeable and root.flags.c_contiguous and root.size:
                        np.frombuffer(root.data, np.uint8)[...] = dev.cpu().numpy()

    jit.JITFunction.run = run
