"""sm_90: the attention forward's P @ V (the loop's last dot, its result only carried) is left running into the
next iteration and retired by that iteration's Q @ K^T wait, as Triton 3.6 does (gpu/lower/carry_dot.py,
knob TRITIUM_NVIDIA_CARRY_DOTS). Each loop then has one ``wgmma.wait_group`` instead of two, and the stage P @ V
read is refilled only after a barrier that follows that wait. Loops the pattern does not fit keep their code."""
from __future__ import annotations

import importlib.util
import os
import re
import shutil

import pytest

import tritium
import tritium.language as tl
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")


def _example():
    spec = importlib.util.spec_from_file_location("ex07_carry", os.path.join(ROOT, "examples", "07-fused-attention.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _compile(fn, sig, consts, attrs, opts, carry):
    from tritium import plugins
    from tritium_nvidia.knobs import nvidia
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(reg), nvidia.scope():
        nvidia.carry_dots = carry
        return tritium.compile(ASTSource(fn, sig, consts, attrs), target=GPUTarget("cuda", 90, 32),
                               options=opts).asm["ptx"]


def _fwd_ptx(D, BM, BN, warps, causal, carry):
    ex = _example()
    sig = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "sm_scale": "fp32", "M": "*fp32", "Out": "*fp16",
           "stride_z": "i32", "stride_h": "i32", "stride_tok": "i32", "H": "i32", "N_CTX": "constexpr",
           "HEAD_DIM": "constexpr", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "STAGE": "constexpr"}
    consts = {"N_CTX": 1024, "HEAD_DIM": D, "BLOCK_M": BM, "BLOCK_N": BN, "STAGE": 3 if causal else 1}
    attrs = {n: [["tt.divisibility", 16]] for n in ("Q", "K", "V", "M", "Out", "stride_z", "stride_h", "stride_tok")}
    return _compile(ex.attn_fwd, sig, consts, attrs, {"num_warps": warps, "num_stages": 3}, carry)


def _bwd_ptx(carry):
    ex = _example()
    sig = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "sm_scale": "fp32", "DO": "*fp16", "DQ": "*fp16",
           "DK": "*fp16", "DV": "*fp16", "M": "*fp32", "D": "*fp32", "stride_z": "i32", "stride_h": "i32",
           "stride_tok": "i32", "H": "i32", "N_CTX": "i32"}
    consts = dict(ex.BWD, HEAD_DIM=64, CAUSAL=True)
    opts = {"num_warps": consts.pop("num_warps"), "num_stages": consts.pop("num_stages")}
    sig.update({k: "constexpr" for k in consts})
    attrs = {n: [["tt.divisibility", 16]] for n in ("Q", "K", "V", "DO", "DQ", "DK", "DV", "M", "D", "stride_z",
                                                     "stride_h", "stride_tok", "N_CTX")}
    return _compile(ex.attn_bwd, sig, consts, attrs, opts, carry)


def _loops(ptx: str) -> list[str]:
    """The bodies of the PTX's backward branches (label .. branch to it)."""
    out = []
    for m in re.finditer(r"^\s*@%p\d+ bra\s+(\$L__BB\d+_\d+);", ptx, re.M):
        start = ptx.find(m.group(1) + ":")
        if 0 <= start < m.start():
            out.append(ptx[start:m.end()])
    return out


@pytest.mark.parametrize("D,BM,BN,warps", [(64, 128, 64, 4), (128, 128, 128, 8)])
@pytest.mark.parametrize("causal", [False, True])
def test_pv_retired_by_next_qk_wait(isolated_tritium, D, BM, BN, warps, causal):
    loops = [b for b in _loops(_fwd_ptx(D, BM, BN, warps, causal, True)) if b.count("wgmma.commit_group") == 2]
    # (the causal diagonal loop at BLOCK_M == BLOCK_N runs once: LLVM leaves no loop)
    assert len(loops) == (2 if causal and BM > BN else 1)
    for body in loops:
        assert body.count("wgmma.wait_group") == 1, body.count("wgmma.wait_group")
        commits = [m.start() for m in re.finditer(r"wgmma\.commit_group", body)]
        wait = body.index("wgmma.wait_group")
        assert commits[0] < wait < commits[1]
        # after P @ V is issued: a barrier, then the refill of the stage the last iteration read
        tail = body[commits[1]:]
        assert "bar.sync" in tail and tail.index("bar.sync") < tail.index("cp.async.commit_group")
    # after the loop, the last P @ V is waited for before O is normalized and stored
    assert "wgmma.wait_group" in _fwd_ptx(D, BM, BN, warps, causal, True).split(loops[-1])[1]


@pytest.mark.parametrize("causal", [False, True])
def test_knob_off_waits_in_the_iteration(isolated_tritium, causal):
    loops = [b for b in _loops(_fwd_ptx(64, 128, 64, 4, causal, False)) if b.count("wgmma.commit_group") == 2]
    assert loops and all(b.count("wgmma.wait_group") == 2 for b in loops)


def test_backward_unchanged(isolated_tritium):
    # its dK/dV and dQ accumulators are already carried in flight (acc = dot(a, b, acc)): not this pattern
    assert _bwd_ptx(True) == _bwd_ptx(False)


@tritium.jit
def _carried_read_first(Q, K, V, Out, N: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rd = tl.arange(0, D)
    q = tl.load(Q + rm[:, None] * D + rd[None, :])
    acc = tl.zeros([BM, D], dtype=tl.float32)
    for start in range(0, N, BN):
        acc = acc * 0.5                   # the carried value is read before the loop's first dot
        k = tl.load(K + (start + rn)[None, :] * D + rd[:, None])
        s = tl.dot(q, k)
        v = tl.load(V + (start + rn)[:, None] * D + rd[None, :])
        acc = tl.dot(s.to(tl.float16), v, acc)
    tl.store(Out + rm[:, None] * D + rd[None, :], acc)


def test_carried_value_read_before_first_dot_keeps_its_wait(isolated_tritium):
    sig = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "Out": "*fp32", "N": "constexpr", "BM": "constexpr",
           "BN": "constexpr", "D": "constexpr"}
    consts = {"N": 512, "BM": 128, "BN": 64, "D": 64}
    attrs = {n: [["tt.divisibility", 16]] for n in ("Q", "K", "V", "Out")}
    ptx = _compile(_carried_read_first, sig, consts, attrs, {"num_warps": 4, "num_stages": 3}, True)
    loops = [b for b in _loops(ptx) if b.count("wgmma.commit_group") == 2]
    assert loops and all(b.count("wgmma.wait_group") == 2 for b in loops)
