"""TRITIUM_NVIDIA_EMPTY_BARRIERS on the GPU: examples/08's K loop freeing its stages through per-stage empty
mbarriers (gpu/lower/pipeline_empty.py) instead of CTA barriers must compute exactly what the knob-off kernel
computes (the same dots in the same order; only who waits for whom changes), on NaN-poisoned C: several tile
configs (one or two warpgroups, mma.sync at 64x64), fp16/bf16/fp8/tf32, partial and whole tiles, K shorter than
the pipeline (fewer K steps than stages) and long, persistent grids smaller than the tile count (each program
walks several tiles, the stages' phases carried from tile to tile) and larger (programs without a tile), with the
tile prefetch in each mode. A wrong phase hangs or reads a stage early: the comparison is bit for bit. NVIDIA
sm_90 only."""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hopper import require_sm90, run08  # noqa: E402

pytestmark = pytest.mark.gpu


def _run(a, b, out_dtype, cfg, empties, prefetch, programs):
    c, k = run08(a, b, out_dtype, cfg, programs, empty_barriers=empties, prefetch_tiles=prefetch)
    return c, k.asm["ptx"].count("mbarrier.arrive.shared::cta.b64 _,")


CFGS = [(128, 256, 64, 8, 3), (128, 128, 64, 8, 4), (64, 128, 64, 4, 3), (256, 128, 64, 8, 3), (64, 64, 64, 8, 3)]


@pytest.mark.parametrize("cfg", CFGS, ids=lambda c: "x".join(map(str, c[:3])) + f"-w{c[3]}-s{c[4]}")
@pytest.mark.parametrize("name", ["float16", "bfloat16", "float8_e4m3fn", "float32"])
@pytest.mark.parametrize("prefetch", [2, 1, 0], ids=["carried", "restarted", "no-prefetch"])
@pytest.mark.parametrize("shape,programs", [((776, 904, 400), 5), ((2048, 2048, 512), 7), ((300, 200, 64), 16),
                                            ((1000, 1304, 96), 200)],
                         ids=["partial-few", "whole-few", "short-k-more-programs", "partial-grid-too-large"])
def test_empty_barriers_are_bit_identical(cuda, cfg, name, prefetch, shape, programs):
    torch = pytest.importorskip("torch")
    require_sm90("empty barriers")
    dtype = getattr(torch, name)
    BM, BN, BK, warps, stages = cfg
    if dtype.itemsize == 1:
        BK = 128
    elif dtype.itemsize == 4:
        BK = 32
        if BM * BN > 128 * 128:
            pytest.skip("tf32 at 128x256: the example's config is 128x128")
    cfg = (BM, BN, BK, warps, stages)
    M, N, K = shape
    a = torch.randn((M, K), device="cuda").to(dtype)
    b = torch.randn((N, K), device="cuda").to(dtype)
    out = torch.float16 if dtype.itemsize == 1 else dtype
    got, n_on = _run(a, b, out, cfg, True, prefetch, programs)
    want, n_off = _run(a, b, out, cfg, False, prefetch, programs)
    assert n_off == 0
    assert n_on >= 2
    assert not torch.isnan(got).any()
    assert torch.equal(got, want)
    ref = a.double() @ b.double().T
    tol = 2e-3 if dtype.itemsize != 2 else 1e-2
    assert ((got.double() - ref).norm() / ref.norm()).item() < tol
