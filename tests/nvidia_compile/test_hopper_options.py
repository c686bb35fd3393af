"""Hopper options tritium-nvidia does not implement are handled as SUPPORT.md says: ``num_ctas`` past 8
(non-portable cluster sizes) is refused with the reason and what to do; ``warp_specialize=True`` on ``tl.range``
is accepted and compiles to the same code as without it (the loop is software-pipelined either way)."""
from __future__ import annotations

import importlib.util
import os
import shutil

import pytest

import tritium
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")


def _example():
    spec = importlib.util.spec_from_file_location("ex08", os.path.join(ROOT, "examples",
                                                                       "08-persistent-matmul-descriptors.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _compile(ws: bool, **options):
    from tritium import plugins
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    sig = {"a_desc": "tensordesc<fp16[128, 64]>", "b_desc": "tensordesc<fp16[128, 64]>",
           "c_desc": "tensordesc<fp16[128, 128]>", "M": "i32", "N": "i32", "K": "i32", "BLOCK_M": "constexpr",
           "BLOCK_N": "constexpr", "BLOCK_K": "constexpr", "GROUP_M": "constexpr", "NUM_SMS": "constexpr",
           "WARP_SPECIALIZE": "constexpr"}
    consts = dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8, NUM_SMS=132, WARP_SPECIALIZE=ws)
    with plugins.use(reg):
        return tritium.compile(ASTSource(_example().matmul_persistent, sig, consts, {}),
                               target=GPUTarget("cuda", 90, 32), options={"num_warps": 8, "num_stages": 3, **options})


def test_warp_specialize_compiles_to_the_same_code(isolated_tritium):
    plain, ws = _compile(False), _compile(True)
    # the descriptor loads are TMA copies on sm_90
    assert "wgmma.mma_async" in plain.asm["ptx"] and "cp.async.bulk.tensor.2d" in plain.asm["ptx"]
    assert ws.asm["ptx"] == plain.asm["ptx"]


def test_clusters_past_the_portable_size_are_refused_with_the_reason(isolated_tritium):
    # num_ctas 2, 4 and 8 run (tests/nvidia_compile/test_clusters_ptx.py); 16 needs a non-portable opt-in
    with pytest.raises(Exception) as info:
        _compile(False, num_ctas=16)
    text = str(info.value)
    assert "num_ctas=16" in text and "cluster" in text and "use num_ctas=1" in text
