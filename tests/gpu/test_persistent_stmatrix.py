"""TRITIUM_NVIDIA_STMATRIX on the GPU: a descriptor store's 16-bit block written to shared memory with
``stmatrix .x4`` (tritium_nvidia/stmatrix.py) must put every element where the element-wise stores put it. The
kernel's result with the knob on must be bit-identical to the knob-off result (the conversions are the same
instructions; only the shared-memory writes differ), over the accumulator layouts of several tile shapes and
warp counts (wgmma of one or two warpgroups along M, split along N; mma.sync's for 64x64 at 8 warps), partial
tiles, and both store paths (the loop's own buffer, the scratch buffer). NVIDIA sm_90 only."""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hopper import require_sm90, run08  # noqa: E402

pytestmark = pytest.mark.gpu


def _run(a, b, out_dtype, cfg, stm, defer, programs):
    c, k = run08(a, b, out_dtype, cfg, programs, stmatrix=stm, defer_store_wait=defer)
    return c, k.asm["ptx"].count("stmatrix.sync.aligned.m8n8.x4")


@pytest.mark.parametrize("cfg", [(128, 256, 64, 8, 3), (128, 128, 64, 8, 3), (64, 128, 64, 4, 3),
                                 (64, 256, 64, 8, 3), (256, 128, 64, 8, 3), (64, 64, 64, 8, 3)],
                         ids=lambda c: "x".join(map(str, c[:3])) + f"-w{c[3]}")
@pytest.mark.parametrize("name", ["float16", "bfloat16", "float8_e4m3fn"])
@pytest.mark.parametrize("defer", [True, False], ids=["loop-buffer", "scratch"])
@pytest.mark.parametrize("shape", [(776, 904, 400), (2048, 2048, 256)], ids=["partial", "whole"])
def test_stmatrix_store_is_bit_identical(cuda, cfg, name, defer, shape):
    torch = pytest.importorskip("torch")
    require_sm90("stmatrix")
    dtype = getattr(torch, name)
    if dtype.itemsize == 1:
        cfg = (cfg[0], cfg[1], 128, cfg[3], cfg[4])
    M, N, K = shape
    a = torch.randn((M, K), device="cuda").to(dtype)
    b = torch.randn((N, K), device="cuda").to(dtype)
    out = torch.float16 if dtype.itemsize == 1 else dtype
    got, n_on = _run(a, b, out, cfg, True, defer, 5)
    want, n_off = _run(a, b, out, cfg, False, defer, 5)
    assert n_off == 0
    assert n_on > 0
    assert not torch.isnan(got).any()
    assert torch.equal(got, want)
    ref = a.double() @ b.double().T
    assert ((got.double() - ref).norm() / ref.norm()).item() < 1e-2
