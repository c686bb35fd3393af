"""Attention's P @ V on sm_90 stays in flight across the loop's back edge, as in Triton: the wgmma that adds
P @ V to acc * alpha is committed and the iteration goes on to start the next stage's copies; the next
iteration waits for it (wgmma.wait_group 0 after Q @ K^T) before it reads acc. Before, each iteration waited for
its P @ V right after issuing it (wgmma.wait_group 0), so the tensor cores idled while the copies were issued."""
from __future__ import annotations

import os
import re
import shutil
import sys

import pytest

import tritium
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "gpu"))
import attention as A  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")


def _llir(causal: bool, D: int, BN: int, warps: int) -> str:
    from tritium import plugins
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    kernel = A.attn_fwd_ptr
    consts = {"N_CTX": 1024, "HEAD_DIM": D, "BLOCK_M": 128, "BLOCK_N": BN, "STAGE": 3 if causal else 1}
    sig, attrs = {}, {}
    for name in kernel.arg_names:
        if name in ("stride_qk", "stride_kk", "stride_vn", "stride_on"):
            sig[name], consts[name] = "constexpr", 1     # specialized to 1, as at a launch
        elif name in consts:
            sig[name] = "constexpr"
        elif name in ("Q", "K", "V", "Out"):
            sig[name] = "*fp16"
        elif name == "M":
            sig[name] = "*fp32"
        elif name == "sm_scale":
            sig[name] = "fp32"
        else:
            sig[name] = "i32"
        if sig[name].startswith("*") or sig[name] == "i32" and name.startswith("stride_"):
            attrs[name] = [["tt.divisibility", 16]]
    with plugins.use(reg):
        return tritium.compile(ASTSource(kernel, sig, consts, attrs), target=GPUTarget("cuda", 90, 32),
                               options={"num_warps": warps, "num_stages": 3}).asm["llir"]


def _loop_bodies(llir: str) -> list[list[str]]:
    """The asm strings of each pipelined loop body, in order."""
    lines = llir.splitlines()
    out = []
    for i, ln in enumerate(lines):
        if re.match(r"pforbody\d+:", ln):
            end = next(j for j in range(i, len(lines)) if lines[j].startswith("pforexit"))
            out.append([m for x in lines[i:end] for m in re.findall(r'asm sideeffect "([^"]*)"', x)])
    return out


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("D,BN,warps", [(64, 64, 4), (128, 128, 8)])
def test_p_at_v_runs_on_while_the_next_copies_start(isolated_tritium, causal, D, BN, warps):
    bodies = _loop_bodies(_llir(causal, D, BN, warps))
    # causal: a second loop over the diagonal block, which LLVM unrolls away when it has one iteration (BN = BM)
    assert len(bodies) == (2 if causal and BN < 128 else 1)
    for asm in bodies:
        commits = [i for i, a in enumerate(asm) if a.startswith("wgmma.commit_group")]
        assert len(commits) == 2, asm                      # Q @ K^T, then P @ V
        qk, pv = commits
        waits = [(i, a) for i, a in enumerate(asm) if a.startswith("wgmma.wait_group")]
        # Q @ K^T is waited for (all groups: also the previous iteration's P @ V) before the softmax
        assert waits[0][0] > qk and waits[0][1].endswith(" 0;") and waits[0][0] < pv
        after = [a for i, a in waits if i > pv]
        assert after and after[0].endswith(" 1;"), after   # P @ V left in flight
        copies = [i for i, a in enumerate(asm) if a.startswith("cp.async.cg") or a.startswith("cp.async.ca")]
        assert copies and min(copies) > pv                 # the next stage's copies start while it runs
