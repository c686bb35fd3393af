"""sm_90: a wgmma dot whose accumulator nothing reads before the loop's yield finishes at the next dot's wait
(one ``wgmma.wait_group`` for both), as Triton does: the attention backward's dV += P^T dO is issued, then
dP^T = V dO^T, then both are waited for, so the tensor cores run them back to back. Before, dV waited for
itself first (dK/dV loop: 4 waits, Triton 2; now 3)."""
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


def _example():
    spec = importlib.util.spec_from_file_location("ex07_joined_wait", os.path.join(ROOT, "examples",
                                                                                 "07-fused-attention.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _bwd_ptx(causal: bool) -> str:
    from tritium import plugins
    ex = _example()
    sig = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "sm_scale": "fp32", "DO": "*fp16", "DQ": "*fp16",
           "DK": "*fp16", "DV": "*fp16", "M": "*fp32", "D": "*fp32", "stride_z": "i32", "stride_h": "i32",
           "stride_tok": "i32", "H": "i32", "N_CTX": "i32"}
    consts = dict(ex.BWD, HEAD_DIM=64, CAUSAL=causal)
    opts = {"num_warps": consts.pop("num_warps"), "num_stages": consts.pop("num_stages")}
    sig.update({k: "constexpr" for k in consts})
    attrs = {name: [["tt.divisibility", 16]] for name in ("Q", "K", "V", "DO", "DQ", "DK", "DV", "M", "D",
                                                           "stride_z", "stride_h", "stride_tok", "N_CTX")}
    from tritium_nvidia.knobs import nvidia
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    # dK left running into the next iteration takes the third wait away (test_attention_bwd_carry_exit.py); here
    # the joined wait of dV and dP^T alone
    with plugins.use(reg), nvidia.scope():
        nvidia.carry_register_a = 0
        k = tritium.compile(ASTSource(ex.attn_bwd, sig, consts, attrs), target=GPUTarget("cuda", 90, 32),
                            options=opts)
    return k.asm["ptx"]


def _loops(ptx: str) -> list[str]:
    """The bodies of the PTX's backward branches (label .. branch to it)."""
    out = []
    for m in re.finditer(r"^\s*@%p\d+ bra\s+(\$L__BB\d+_\d+);", ptx, re.M):
        start = ptx.find(m.group(1) + ":")
        if 0 <= start < m.start():
            out.append(ptx[start:m.end()])
    return out


@pytest.mark.parametrize("causal", [False, True])
def test_dv_waits_with_dpt(isolated_tritium, causal):
    loops = [body for body in _loops(_bwd_ptx(causal)) if body.count("wgmma.commit_group") == 4]
    # the dK/dV loops (four dots each): dV's commit is followed by dP^T's, then one wait covers both
    assert loops, "no dK/dV loop found"
    for body in loops:
        assert body.count("wgmma.wait_group") == 3, body.count("wgmma.wait_group")
        second, third = [m.start() for m in re.finditer("wgmma.commit_group", body)][1:3]
        assert "wgmma.wait_group" not in body[second:third]
