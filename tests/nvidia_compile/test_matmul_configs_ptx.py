"""examples/03's pointer matmul at the configurations an autotuner picks among, sm_90a, checked in the PTX without a
GPU. A 64-row tile at 8 warps has two warpgroups for one 64-row block: they split N, each issuing wgmma on its
half (m64n64 for 64x128, m64n128 for 64x256, as Triton 3.6's warpsPerCTA [4, 2]) instead of falling back to
mma.sync; an fp16/bf16 half narrower than a 64-column panel (64x64 at 8 warps) keeps mma.sync (the other types:
test_wgmma_types.py). The fence after each cp.async
wait follows TRITIUM_NVIDIA_CP_ASYNC_FENCE (default off). tests/gpu/test_matmul_configs.py runs them on an H200."""
from __future__ import annotations

import importlib.util
import os
import re
import shutil

import pytest

import tritium
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")


def _ex03():
    spec = importlib.util.spec_from_file_location("ex03_configs", os.path.join(ROOT, "examples",
                                                                              "03-matrix-multiplication.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _compile(BM, BN, BK, warps, stages, dt="fp16", fence=None):
    from tritium import plugins
    from tritium_nvidia.knobs import nvidia
    fn, sig, consts = _ex03().COMPILE_CASES[0]
    sig = {k: (f"*{dt}" if v.startswith("*") else v) for k, v in sig.items()}
    consts = {**consts, "BLOCK_M": BM, "BLOCK_N": BN, "BLOCK_K": BK}
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(reg), nvidia.scope():
        if fence is not None:
            nvidia.cp_async_fence = fence
        return tritium.compile(ASTSource(fn, sig, consts, {}), target=GPUTarget("cuda", 90, 32),
                               options={"num_warps": warps, "num_stages": stages})


@pytest.mark.parametrize("BM,BN,BK,stages,inst", [(64, 128, 32, 3, "m64n64k16"), (64, 256, 32, 3, "m64n128k16"),
                                                  (64, 128, 64, 4, "m64n64k16"), (64, 256, 64, 3, "m64n128k16")])
def test_64_rows_at_8_warps_split_n_across_warpgroups(isolated_tritium, BM, BN, BK, stages, inst):
    ptx = _compile(BM, BN, BK, 8, stages).asm["ptx"]
    assert re.search(rf"wgmma\.mma_async\.sync\.aligned\.{inst}\.f32\.f16\.f16", ptx)
    assert "mma.sync" not in ptx
    # every warpgroup issues its own N / 64 / ... instructions per K step of 16
    assert len(re.findall(r"wgmma\.mma_async", ptx)) == BK // 16


def test_bf16_and_too_narrow_halves(isolated_tritium):
    assert "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16" in _compile(64, 256, 32, 8, 4, "bf16").asm["ptx"]
    # halves of 32 columns would start inside a 64-column panel of B: mma.sync, as before
    ptx = _compile(64, 64, 32, 8, 3).asm["ptx"]
    assert "wgmma.mma_async" not in ptx and "mma.sync.aligned.m16n8k16" in ptx
    # 4 warps, or 128 rows at 8 warps: warpgroups split M only, unchanged
    assert "m64n128k16" in _compile(128, 128, 64, 8, 3).asm["ptx"]
    assert "m64n128k16" in _compile(64, 128, 32, 4, 4).asm["ptx"]


@pytest.mark.parametrize("fence", [True, False, None])
def test_cp_async_fence_knob(isolated_tritium, fence):
    """None: the default, no fence (as Triton 3.6; measured 1-9% faster on the H200, PERF.md)."""
    ptx = _compile(128, 128, 64, 8, 3, fence=fence).asm["ptx"]
    loop = ptx[ptx.index("cp.async.wait_group 1"):ptx.index("cp.async.wait_group 0")]
    assert ("fence.proxy.async.shared::cta" in loop) == bool(fence)
