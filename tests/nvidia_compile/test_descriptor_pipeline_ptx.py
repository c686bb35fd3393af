"""A loop whose tensor-descriptor loads are pipelined commits one group of copies per iteration (the loop
waits for all but the newest S - 2 groups: a group per load made that wait for the copies just started,
and the persistent descriptor matmul ran at half Triton's speed). Its B stage is read transposed (b.T) by wgmma."""
from __future__ import annotations

import os
import re
import shutil
import sys

import pytest

import tritium
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "tests", "gpu"))
from test_descriptor_pipeline import desc_matmul  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")


@pytest.mark.parametrize("stages", [2, 3, 4])
def test_one_commit_group_per_iteration(isolated_tritium, stages):
    from tritium import plugins
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    sig = {"a_desc": "tensordesc<fp16[128, 64]>", "b_desc": "tensordesc<fp16[128, 64]>", "c_ptr": "*fp32",
           "M": "i32", "N": "i32", "K": "i32", "stride_cm": "i32", "BM": "constexpr", "BN": "constexpr",
           "BK": "constexpr", "B_T": "constexpr"}
    from tritium_nvidia.knobs import nvidia
    # the cp.async path (sm_80, and sm_90 with TMA off; test_descriptor_tma_ptx.py has the TMA one)
    with plugins.use(reg), nvidia.scope():
        nvidia.tma = False
        k = tritium.compile(ASTSource(desc_matmul, sig, {"BM": 128, "BN": 128, "BK": 64, "B_T": True}, {}),
                            target=GPUTarget("cuda", 90, 32), options={"num_warps": 8, "num_stages": stages})
    ptx = k.asm["ptx"]
    # S - 1 groups before the loop, one in it
    assert ptx.count("cp.async.commit_group") == stages, ptx.count("cp.async.commit_group")
    assert re.search(r"cp\.async\.cg\.shared\.global \[%r\d+\], \[%rd\d+\], 16, %r\d+;", ptx)
    assert "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16" in ptx
