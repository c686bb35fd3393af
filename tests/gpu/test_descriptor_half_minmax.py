"""fp16/bf16 descriptor ``atomic_min``/``atomic_max`` on an H200 (TMA bulk reductions; a box that is not aligned for
TMA takes per-element atomics): the values against torch. The instructions are checked without a GPU in
tests/nvidia_compile/test_descriptor_half_minmax_ptx.py."""
from __future__ import annotations

import os
import sys

import pytest

import tritium as triton

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from found_kernels import descriptor_minmax  # noqa: E402




@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("kind", ["min", "max"])
@pytest.mark.parametrize("shift", [0, 1])
def test_half_minmax_reduction(cuda, dtype, kind, shift):
    import torch
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    MB, NB = 8, 32
    M, N = 2 * MB, 4 * NB
    g = torch.Generator().manual_seed(3)
    dt = getattr(torch, dtype)
    a = torch.randn((M, N), generator=g).to(dt).cuda()
    out = torch.randn((M, N), generator=g).to(dt).cuda()
    expect = out.clone()
    # the program at column block j reduces its block of a into columns [j*NB + shift, (j+1)*NB + shift)
    for j in range(N // NB):
        lo, hi = j * NB + shift, min((j + 1) * NB + shift, N)
        src = a[:, j * NB: j * NB + (hi - lo)]
        expect[:, lo:hi] = torch.minimum(expect[:, lo:hi], src) if kind == "min" else \
            torch.maximum(expect[:, lo:hi], src)
    descriptor_minmax[(M // MB, N // NB)](out, a, M, N, MB=MB, NB=NB, KIND=kind, SHIFT=shift)
    torch.testing.assert_close(out, expect, rtol=0, atol=0)
