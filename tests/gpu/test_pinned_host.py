"""Triton 3.6's test_pointer_arguments on an NVIDIA GPU: a CUDA tensor and a pinned CPU tensor (``pin_memory``,
addressed by the kernel through unified addressing) are kernel arguments, a pageable CPU tensor is a ValueError
(tritium's ArgumentDeviceError, also a TypeError). The kernel's writes to pinned memory land in it. The host-side
keying is checked without a GPU in tests/nvidia_compile/test_pinned_host_launch.py."""
from __future__ import annotations

import pytest

import tritium as triton
import tritium.language as tl


@triton.jit
def _nothing(x):
    pass


@triton.jit
def _add_one(X, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(X + offs, tl.load(X + offs) + 1.0)


@pytest.mark.parametrize("device", ["cuda", "cpu", "cpu_pinned"])
def test_pointer_arguments(cuda, device):
    import torch
    x = torch.empty(1024, device=device.split("_")[0], pin_memory="pinned" in device)
    if device == "cpu":
        with pytest.raises(ValueError, match="lives on device 'cpu'"):
            _nothing[(1, )](x)
    else:
        _nothing[(1, )](x)


def test_pinned_memory_is_written_in_place(cuda):
    import torch
    x = torch.arange(256, dtype=torch.float32).pin_memory()
    for _ in range(2):           # the first launch, then the cached one
        _add_one[(1, )](x, N=256)
    torch.cuda.synchronize()
    assert torch.equal(x, torch.arange(256, dtype=torch.float32) + 2)
    with pytest.raises(TypeError):      # a pageable tensor is still refused on the cached kernel's launches
        _add_one[(1, )](torch.zeros(256), N=256)
