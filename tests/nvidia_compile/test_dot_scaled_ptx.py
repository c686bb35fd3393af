"""``tl.dot_scaled`` of fp8/fp4 operands runs on the bf16 tensor cores on sm_90a (PTX through ptxas, no GPU): its
scaled elements fit in bf16 exactly, so the frontend's emulation multiplies bf16 tiles (it multiplied fp32 tiles
with FMAs, 2048 fma.rn.f32 per 64-wide K step of a 128x128 tile). bf16 cannot hold fp16 operands, so with an fp16 operand the dot is of fp16 tiles, as Triton computes it (the scaled operand upcast to
fp16). Values: core's conformance test_dot (every backend), Triton's test_scaled_dot on the H200."""
from __future__ import annotations

import os
import re
import shutil

import pytest

import tritium
import tritium.language as tl
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")


@tritium.jit
def _scaled(A, AS, B, BS, O, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, FA: tl.constexpr,
            FB: tl.constexpr):
    KA: tl.constexpr = K // 2 if FA == "e2m1" else K
    KB: tl.constexpr = K // 2 if FB == "e2m1" else K
    a = tl.load(A + tl.arange(0, M)[:, None] * KA + tl.arange(0, KA)[None, :])
    b = tl.load(B + tl.arange(0, KB)[:, None] * N + tl.arange(0, N)[None, :])
    sa = tl.load(AS + tl.arange(0, M)[:, None] * (K // 32) + tl.arange(0, K // 32)[None, :])
    sb = tl.load(BS + tl.arange(0, N)[:, None] * (K // 32) + tl.arange(0, K // 32)[None, :])
    tl.store(O + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :], tl.dot_scaled(a, sa, FA, b, sb, FB))


@pytest.mark.parametrize("fa, fb, ta, tb, tiles", [("e4m3", "e4m3", "u8", "u8", "bf16"), ("e2m1", "e5m2", "u8", "u8", "bf16"),
                                                   ("e4m3", "fp16", "u8", "fp16", "f16"),
                                                   ("fp16", "e2m1", "fp16", "u8", "f16")])
def test_scaled_dot_on_tensor_cores(isolated_tritium, fa, fb, ta, tb, tiles):
    from tritium import plugins
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(reg):
        c = tritium.compile(ASTSource(_scaled, {"A": f"*{ta}", "AS": "*u8", "B": f"*{tb}", "BS": "*u8", "O": "*fp32"},
                                      {"M": 128, "N": 128, "K": 64, "FA": fa,
                                       "FB": fb}, {}),
                            target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
    ptx = c.asm["ptx"]
    assert set(re.findall(r"wgmma\.mma_async\S+", ptx)) == \
        {f"wgmma.mma_async.sync.aligned.m64n128k16.f32.{tiles}.{tiles}"}
    assert "fma.rn.f32" not in ptx
