"""``tl.dot(..., max_num_imprecise_acc=n)`` on fp8 wgmma dots (sm_90a PTX, no GPU): the accumulator is promoted
every n products along K, as in Triton: each chunk runs into a fresh accumulator (scale-d 0), is waited for and
added to the fp32 accumulator in registers (one add per accumulator element and chunk: Triton's test_core.py
test_dot_max_num_imprecise_acc counts BLOCK_M * BLOCK_N / threads * BLOCK_K / n). Without it (n = 0, the default)
the tensor cores accumulate the whole K. tests/gpu/test_wgmma_promotion.py checks the values on an H200."""
from __future__ import annotations

import os
import re
import shutil
import sys

import pytest

import tritium
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "gpu"))
from found_kernels import promoted_matmul  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")




def _ptx(low, dtype="fp8e4nv", BM=128, BN=256, BK=128, warps=8):
    from tritium import plugins
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(reg):
        k = tritium.compile(ASTSource(promoted_matmul, {"A": f"*{dtype}", "B": f"*{dtype}", "C": "*fp32", "K": "i32"},
                                      {"BM": BM, "BN": BN, "BK": BK, "LOW": low}, {}),
                            target=GPUTarget("cuda", 90, 32), options={"num_warps": warps, "num_stages": 3})
    return k.asm["ptx"]


@pytest.mark.parametrize("low", [32, 64, 128])
@pytest.mark.parametrize("dtype", ["fp8e4nv", "fp8e5"])
def test_one_promotion_per_chunk(isolated_tritium, low, dtype):
    ptx = _ptx(low, dtype)
    # Triton's test counts the text "add.f32": with fp fusion on (the default) the adds are not add.rn.f32
    assert ptx.count("add.f32") == (128 * 256) // (32 * 8) * (128 // low)
    assert "add.rn.f32" not in ptx
    # every chunk starts from a fresh accumulator: scale-d 0 once per chunk
    assert len(re.findall(r"setp\.ne\.b32 p, 0, 0; wgmma", ptx)) == 128 // low


@pytest.mark.parametrize("low", [32, 64])
def test_promotion_at_64_rows_8_warps(isolated_tritium, low):
    """64x64 at 8 warps: the warpgroups split N into 32-column halves (fp8 B is K-major), each promoting its part."""
    ptx = _ptx(low, BM=64, BN=64, BK=64)
    assert set(re.findall(r"wgmma\.mma_async\.sync\.aligned\.(m64n\d+k32)", ptx)) == {"m64n32k32"}
    assert ptx.count("add.f32") == (64 * 64) // (32 * 8) * (64 // low)


def test_no_fusion_keeps_adds_apart(isolated_tritium):
    from tritium import plugins
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(reg):
        k = tritium.compile(ASTSource(promoted_matmul, {"A": "*fp8e4nv", "B": "*fp8e4nv", "C": "*fp32", "K": "i32"},
                                      {"BM": 128, "BN": 256, "BK": 128, "LOW": 32}, {}),
                            target=GPUTarget("cuda", 90, 32),
                            options={"num_warps": 8, "num_stages": 3, "enable_fp_fusion": False})
    assert k.asm["ptx"].count("add.rn.f32") == 512


def test_no_promotion_by_default(isolated_tritium):
    ptx = _ptx(None)
    assert not re.findall(r"\badd(?:\.rn)?\.f32\b", ptx)
    assert len(re.findall(r"setp\.ne\.b32 p, 1, 0; wgmma", ptx)) == 4
