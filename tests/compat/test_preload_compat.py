"""Triton's preload flow through the compat package (Triton's runtime test_cache.py::test_preload, shortened):
under ``import triton`` tritium's dtype classes are named ``triton.language...``, and the hook's
``specialization_data`` was None for a kernel with a dtype constexpr (the text writer recognized the dtype class
by its module name)."""
import pytest

pytest.importorskip("triton", reason="the triton compat package is not installed")
torch = pytest.importorskip("torch")

import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def _kernel_add(a, b, o, N: tl.constexpr, type: tl.constexpr):
    idx = tl.arange(0, N)
    tl.store(o + idx, tl.load(a + idx) + tl.load(b + idx))


def test_preload_under_the_triton_name():
    with triton.knobs.runtime.scope():
        _run(triton.knobs, torch.cpu.current_device())


def _run(knobs, device):
    data = []
    knobs.runtime.jit_cache_hook = lambda *a, **kw: data.append(kw["compile"]["specialization_data"])
    warm = _kernel_add.warmup(torch.float32, torch.float32, torch.float32, 32, tl.float32, grid=(1, ))
    assert data[0] is not None
    _kernel_add.device_caches[device][0].clear()
    kernel = _kernel_add.preload(data[0])
    assert kernel.hash == warm.hash and len(_kernel_add.device_caches[device][0]) == 1
    compiled = []
    knobs.runtime.jit_cache_hook = lambda *a, **kw: compiled.append(kw["key"])
    again = _kernel_add.warmup(torch.float32, torch.float32, torch.float32, 32, tl.float32, grid=(1, ))
    assert again is kernel and compiled == []
