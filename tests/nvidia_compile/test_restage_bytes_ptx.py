"""sm_90: an fp8/int8 dot operand staged along its other dimension (B stored (K, N); A stored (K, M)) is rewritten
K-major for wgmma in 4 x 4-byte blocks (tritium_nvidia/restage.py): 4-byte shared loads and stores, no one-byte
stores (there were 128 per thread and iteration for a 128 x 128 B tile, and 4x more shared-store instructions
than the blocks need). Results on the H200: tests/gpu/test_wgmma_types.py (N-major rows) and
tests/gpu/test_restage_bytes.py."""
from __future__ import annotations

import os
import re
import shutil
import sys

import pytest

import tritium
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "tests", "gpu"))
from typed_dots import typed_matmul  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")


def _compile(elem: str, acc: str, m_major_a: bool, BM: int = 128, BN: int = 128, BK: int = 128, warps: int = 8):
    from tritium import plugins
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    sig = {"a_ptr": f"*{elem}", "b_ptr": f"*{elem}", "c_ptr": f"*{acc}", "M": "i32", "N": "i32", "K": "i32",
           "stride_am": "i32", "stride_ak": "i32", "stride_bk": "i32", "stride_bn": "constexpr", "stride_cm": "i32",
           "BM": "constexpr", "BN": "constexpr", "BK": "constexpr", "ACC_INT": "constexpr"}
    consts = {"stride_bn": 1, "BM": BM, "BN": BN, "BK": BK, "ACC_INT": acc == "i32"}
    unit = "stride_am" if m_major_a else "stride_ak"
    sig[unit], consts[unit] = "constexpr", 1
    attrs = {n: [["tt.divisibility", 16]] for n, t in sig.items() if t != "constexpr"}
    with plugins.use(reg):
        return tritium.compile(ASTSource(typed_matmul, sig, consts, attrs), target=GPUTarget("cuda", 90, 32),
                               options={"num_warps": warps, "num_stages": 3})


def _stores(ptx: str) -> dict[str, int]:
    kinds = re.findall(r"st\.shared\.(\w+(?:\.\w+)?)", ptx)
    return {k: kinds.count(k) for k in set(kinds)}


@pytest.mark.parametrize("elem,acc", [("fp8e4nv", "fp32"), ("i8", "i32")])
def test_n_major_b_is_restaged_in_words(isolated_tritium, elem, acc):
    k = _compile(elem, acc, m_major_a=False)
    st = _stores(k.asm["ptx"])
    assert "b8" not in st, st
    # B: 128 x 128 bytes over 256 threads = 4 blocks of 4 x 4 bytes each, 4 word stores per block
    assert st.get("b32", 0) >= 16, st
    assert re.search(r"wgmma\.mma_async\.sync\.aligned\.m64n128k32", k.asm["ptx"])
    assert k.metadata_dict["n_spills"] == 0


def test_m_major_a_and_n_major_b_at_four_warps(isolated_tritium):
    k = _compile("fp8e4nv", "fp32", m_major_a=True, BM=64, BN=64, BK=64, warps=4)
    st = _stores(k.asm["ptx"])
    assert "b8" not in st, st


def test_knob_off_keeps_byte_stores(isolated_tritium):
    from tritium_nvidia.knobs import nvidia
    with nvidia.scope():
        nvidia.restage_bytes = False
        k = _compile("fp8e4nv", "fp32", m_major_a=False)
    assert _stores(k.asm["ptx"]).get("b8", 0) == 64      # 128 x 128 bytes over 256 threads


def test_shapes_off_the_region_keep_the_byte_rewrite(isolated_tritium):
    """K = 32 bytes is not a multiple of the 64-byte region the lane pattern tiles: the general rewrite (one byte
    per store) stays, and the kernel still compiles."""
    from tritium_nvidia.restage import can_restage
    from tritium.gpu.lower.shared import SmemLayout
    assert can_restage(SmemLayout((128, 256), 1, 1), 0, 8)
    assert not can_restage(SmemLayout((32, 128), 1, 1), 0, 8)        # K 32
    assert not can_restage(SmemLayout((128, 128), 0, 1), 0, 8)       # already K-major
    assert not can_restage(SmemLayout((128, 128), 1, 2), 0, 8)       # 16-bit: wgmma reads it transposed
    k = _compile("fp8e4nv", "fp32", m_major_a=False, BM=64, BN=64, BK=32, warps=4)
    assert _stores(k.asm["ptx"]).get("b8", 0) > 0
