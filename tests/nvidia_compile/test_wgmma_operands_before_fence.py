"""Every register a run of wgmma instructions reads is written before its ``wgmma.fence``: attention's P @ V
(A from registers) converted P to fp16 one k-step at a time between the instructions, and ptxas then inserted a
warpgroup.arrive before 7 of the 8 of them (its C7519 note), serializing the dot. The PTX between each fence and
its commit now holds the wgmma instructions only (the scale-d flag is an immediate); a zero accumulator is not read (scale-d false), so no register
moves set it up between them either (the backward's dK/dV dots had those, and one more warpgroup.arrive). A loop
whose dots all waited for themselves no longer waits for "the previous iteration's" at its end."""
from __future__ import annotations

import os
import re
import shutil
import sys

import pytest

import tritium
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attention07 import compile_bwd, example07  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")


#: what may sit between them: the 64-bit descriptor arithmetic (ptxas waits for no register but A's and the
#: accumulators'; Triton computes descriptors there too). The scale-d flag is an immediate (its move was there)
_DESCRIPTOR = re.compile(r"(add|or|cvt\.u64\.u32|bfe\.u32|add\.s32|shl\.b32|and\.b32)\S*\s+%(rd|r)\d+, ")


@pytest.mark.parametrize("D,BN,warps,causal", [(64, 64, 4, False), (128, 128, 8, True)])
def test_attention_forward_wgmma_runs_are_not_interrupted(isolated_tritium, D, BN, warps, causal):
    from tritium import plugins
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    sig = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "sm_scale": "fp32", "M": "*fp32", "Out": "*fp16",
           "stride_z": "i32", "stride_h": "i32", "stride_tok": "i32", "H": "i32", "N_CTX": "constexpr",
           "HEAD_DIM": "constexpr", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "STAGE": "constexpr"}
    consts = {"N_CTX": 4096, "HEAD_DIM": D, "BLOCK_M": 128, "BLOCK_N": BN, "STAGE": 3 if causal else 1}
    attrs = {(i, ): [["tt.divisibility", 16]] for i in (0, 1, 2, 4, 5, 6, 7, 8)}
    with plugins.use(reg):
        ptx = tritium.compile(ASTSource(example07().attn_fwd, sig, consts, attrs), target=GPUTarget("cuda", 90, 32),
                              options={"num_warps": warps, "num_stages": 3}).asm["ptx"]
    runs = re.findall(r"wgmma\.fence\.sync\.aligned;(.*?)wgmma\.commit_group", ptx, re.S)
    assert len(runs) == (4 if causal else 2)
    for run in runs:
        body = [ln.strip() for ln in run.splitlines()
                if ln.strip() and not ln.strip().startswith(("//", ".loc", "$L"))]
        others = [ln for ln in body if "wgmma.mma_async" not in ln and not _DESCRIPTOR.match(ln)]
        assert not others, others[:4]


def test_attention_backward_wgmma_runs_are_not_interrupted(isolated_tritium):
    ptx = compile_bwd(64, False).asm["ptx"]
    runs = re.findall(r"wgmma\.fence\.sync\.aligned;(.*?)wgmma\.commit_group", ptx, re.S)
    assert runs
    # every wait retires all that is in flight (its loops' last dots, left running into the next iteration, by
    # that iteration's first wait): no wait that leaves one dot running, which with nothing left in flight made
    # ptxas serialize every wgmma (its C7515 note)
    assert "wgmma.wait_group.sync.aligned 1;" not in ptx
    for run in runs:
        body = [ln.strip() for ln in run.splitlines()
                if ln.strip() and not ln.strip().startswith(("//", ".loc", "$L"))]
        others = [ln for ln in body if "wgmma.mma_async" not in ln and not _DESCRIPTOR.match(ln)]
        assert not others, others[:4]


def test_descriptors_are_a_base_plus_constants(isolated_tritium):
    """Each wgmma's descriptor is the dot's base descriptor plus its constant offset (one add), not rebuilt from
    the shared address (shift, mask, widen, or: 4 uniform instructions per wgmma, 64 of the D=128 inner loop)."""
    from tritium import plugins
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    sig = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "sm_scale": "fp32", "M": "*fp32", "Out": "*fp16",
           "stride_z": "i32", "stride_h": "i32", "stride_tok": "i32", "H": "i32", "N_CTX": "constexpr",
           "HEAD_DIM": "constexpr", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "STAGE": "constexpr"}
    consts = {"N_CTX": 4096, "HEAD_DIM": 128, "BLOCK_M": 128, "BLOCK_N": 128, "STAGE": 1}
    attrs = {(i, ): [["tt.divisibility", 16]] for i in (0, 1, 2, 4, 5, 6, 7, 8)}
    with plugins.use(reg):
        ptx = tritium.compile(ASTSource(example07().attn_fwd, sig, consts, attrs), target=GPUTarget("cuda", 90, 32),
                              options={"num_warps": 8, "num_stages": 3}).asm["ptx"]
    runs = re.findall(r"wgmma\.fence\.sync\.aligned;(.*?)wgmma\.commit_group", ptx, re.S)
    assert len(runs) == 2
    for run in runs:
        body = [ln.strip() for ln in run.splitlines()
                if ln.strip() and not ln.strip().startswith(("//", ".loc", "$L"))]
        n_wgmma = sum("wgmma.mma_async" in ln for ln in body)
        rebuilt = [ln for ln in body if ln.startswith(("bfe.", "or.b64", "cvt.u64"))]
        assert n_wgmma == 8 and len(rebuilt) <= 3, rebuilt
