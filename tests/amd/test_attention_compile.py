"""examples/07-fused-attention.py (Triton's fused attention, forward and backward) compiled for AMD GPUs through the
example's own launch code, in compile-only mode (TRITIUM_AMD_COMPILE_ONLY: host tensors stand in for device memory,
nothing runs). Every kernel it launches becomes a checked code object whose dots are MFMA instructions."""
from __future__ import annotations

import importlib.util
import os
import re
import sys

import pytest

pytest.importorskip("tritium_amd", reason="tritium-amd is not installed")
torch = pytest.importorskip("torch", reason="the example's launch code uses torch tensors")
from tritium_amd import codeobj, driver as hipdrv  # noqa: E402
from tritium_amd.chips import CDNA, CHIPS  # noqa: E402
from tritium_amd.compiler import ARG_BYTES  # noqa: E402
from tritium_amd.knobs import amd as amd_knobs  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _example():
    path = os.path.join(ROOT, "examples", "07-fused-attention.py")
    spec = importlib.util.spec_from_file_location("_amd_fused_attention", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("chip", CDNA)
@pytest.mark.parametrize("causal", [False, True])
def test_fused_attention_compiles_for_amd(amd_registry, chip, causal):
    from tritium import knobs, plugins
    mod = _example()
    Z, H, N, D = 1, 2, 128, 64
    q, k, v, do = (torch.randn((Z, H, N, D), dtype=torch.float16) for _ in range(4))
    bwd = dict(mod.BWD, BLOCK_M1=32, BLOCK_N1=64, BLOCK_M2=64, BLOCK_N2=32, num_stages=2)
    with plugins.use(amd_registry), knobs.runtime.scope(), amd_knobs.scope():
        knobs.runtime.default_backend = "amd"
        amd_knobs.compile_only, amd_knobs.arch = True, chip
        start = len(hipdrv.compiled)
        o, M = mod.forward(q, k, v, causal, 0.125, (64, 64, 4, 2))
        mod.backward(q, k, v, o, M, do, causal, 0.125, bwd)
        kernels = hipdrv.compiled[start:]
    assert sorted({kk.name for kk in kernels}) == ["attn_bwd", "attn_bwd_preprocess", "attn_fwd"]
    for kk in kernels:
        md = kk.metadata_dict
        assert md["arch"] == chip
        codeobj.check(kk.asm["hsaco"], CHIPS[chip], kk.name, [ARG_BYTES.get(t, 8) for t in md["arg_types"]],
                      md["num_warps"] * 64)
        if kk.name != "attn_bwd_preprocess":
            assert re.search(r"\bv_mfma_f32_16x16x16_?f16\b", kk.asm["amdgcn"]), kk.name
