"""TRITIUM_NVIDIA_WS_PRODUCER_WARPS on the GPU: examples/08 written with ``tl.range(..., warp_specialize=True)``
takes a producer warp (gpu/lower/pipeline_producer.py ``asked``) and must compute exactly what the kernel without
the hint computes with every knob at its default (same dots in the same order; only who issues the copies
changes), on NaN-poisoned C: the tile configs, dtypes, shapes and grids of test_ws_producer.py. A wrong phase
hangs or reads a stage early: the comparison is bit for bit. The same source without the hint, knob on, must
keep the consumers' warps only. NVIDIA sm_90 only."""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hopper import (CONFIGS08, SHAPE08_IDS, SHAPES08, assert_same_and_close08, operands08,  # noqa: E402
                    require_sm90, run08, two_k_loops)

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("cfg", CONFIGS08, ids=lambda c: "x".join(map(str, c[:3])) + f"-w{c[3]}-s{c[4]}")
@pytest.mark.parametrize("name", ["float16", "bfloat16", "float8_e4m3fn", "float32"])
@pytest.mark.parametrize("shape,programs", SHAPES08, ids=SHAPE08_IDS)
def test_warp_specialize_hint_is_bit_identical(cuda, cfg, name, shape, programs):
    pytest.importorskip("torch")
    require_sm90("producer warps")
    warps = cfg[3]
    a, b, out, cfg = operands08(name, cfg, shape)
    got, k_on = run08(a, b, out, cfg, programs, ws=True, ws_producer_warps=1)
    plain, k_plain = run08(a, b, out, cfg, programs, ws=False, ws_producer_warps=1)
    want, k_off = run08(a, b, out, cfg, programs, ws=False)
    assert (k_off.metadata.num_warps, k_plain.metadata.num_warps, k_on.metadata.num_warps) == \
        (warps, warps, warps + 1)
    assert_same_and_close08(got, want, a, b)
    assert_same_and_close08(plain, want, a, b)


@pytest.mark.parametrize("M,N,K,programs", [(776, 776, 400, 5), (1024, 1024, 512, 132), (256, 256, 64, 9)])
def test_two_k_loops_in_a_specialized_tile_loop(cuda, M, N, K, programs):
    torch = pytest.importorskip("torch")
    require_sm90("producer warps")
    from tritium.tools.tensor_descriptor import TensorDescriptor
    from tritium_nvidia.knobs import nvidia
    kernel = two_k_loops()
    a = torch.randn(M, K, device="cuda").half()
    b = torch.randn(N, K, device="cuda").half()
    outs, warps = [], []
    for ws, knob in ((True, 1), (False, 0)):
        c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
        d = [TensorDescriptor(x, list(x.shape), list(x.stride()), blk)
             for x, blk in ((a, [128, 64]), (b, [128, 64]), (c, [128, 128]))]
        with nvidia.scope():
            nvidia.ws_producer_warps = knob
            k = kernel[(programs, )](*d, M, N, K, BM=128, BN=128, BK=64, NUM_SMS=programs, WS=ws, num_warps=8,
                                     num_stages=3)
        torch.cuda.synchronize()
        outs.append(c)
        warps.append(k.metadata.num_warps)
    assert warps == [9, 8]
    assert not torch.isnan(outs[0]).any() and torch.equal(outs[0], outs[1])
    ref = a.double() @ b.double().T - 0.5 * (b.double() @ a.double().T)
    assert ((outs[0].double() - ref).norm() / ref.norm()).item() < 1e-2
