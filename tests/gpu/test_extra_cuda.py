"""``tl.extra.cuda`` on an NVIDIA GPU, as Triton 3.6's test_core.py uses it (test_num_threads, test_globaltimer,
test_smid): the timer advances over a loop, the SM ids are ids of this GPU's SMs, and ``num_threads`` is the launch's
threads. The PTX is checked without a GPU in tests/nvidia_compile/test_extra_cuda_ptx.py."""
from __future__ import annotations

import os
import sys

import pytest

import tritium as triton
import tritium.language as tl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from found_kernels import timed_loop, smid_per_program  # noqa: E402


@triton.jit
def _threads(Out):
    num_threads: tl.constexpr = tl.extra.cuda.num_threads()
    offs = tl.arange(0, num_threads)
    tl.store(Out + offs, 1)






@pytest.mark.parametrize("warps", [1, 8])
def test_num_threads(cuda, warps):
    import torch
    out = torch.zeros(32 * warps + 32, dtype=torch.int32, device="cuda")
    _threads[(1, )](out, num_warps=warps)
    assert int(out.sum()) == 32 * warps and int(out[32 * warps:].sum()) == 0


def test_globaltimer(cuda):
    import torch
    out1 = torch.zeros(128, dtype=torch.int64, device="cuda")
    out2 = torch.zeros(2, dtype=torch.int64, device="cuda")
    h = timed_loop[(1, )](out1, out2, tl.extra.cuda.globaltimer)
    torch.cuda.synchronize()
    assert int(out2[1]) - int(out2[0]) > 0 and int(out2[0]) > 0
    assert bool((out1 == 10000).all())
    assert h.asm["ptx"].count("%globaltimer") == 2


def test_smid(cuda):
    import torch
    out = torch.full((1024, ), -1, dtype=torch.int32, device="cuda")
    h = smid_per_program[(out.shape[0], )](out)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    assert int(out.min()) >= 0 and int(out.max()) < sms
    assert out.unique().shape[0] > 1          # 1024 programs do not all run on one SM
    assert h.asm["ptx"].count("%smid") == 1
