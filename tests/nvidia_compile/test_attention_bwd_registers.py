"""sm_90, examples/07's backward at the tutorial's settings (BLOCK_N1 = BLOCK_M2 = 128, 4 warps, 5 stages):

- the wgmma descriptors of an operand written to shared memory before its loop (K and V in the dK/dV loop, Q and
  dO in the dQ loop) are built in the loop body (wgmma_operands.py ``_pinned``), not hoisted out of it by LLVM: hoisted,
  they were 16 64-bit registers per 128 x 128 operand live through the loop, and ptxas spilled the
  accumulators for them (D128's dQ loop stored and reloaded its 128 accumulator registers every iteration);
  D64's operands (8 descriptors each) keep LLVM's placement;
- with TRITIUM_NVIDIA_CARRY_REGISTER_A, the last dot of each loop (dK += dS^T Q, dQ += dS K: A in registers) runs
  into the next iteration, retired by its first wait, as Triton 3.6's loops (2 waits per loop instead of 3)."""
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
    spec = importlib.util.spec_from_file_location("ex07_bwd_registers", os.path.join(ROOT, "examples",
                                                                                   "07-fused-attention.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _bwd(D: int, causal: bool, carry: int = 0, pin: bool = True):
    from tritium import plugins
    from tritium_nvidia.knobs import nvidia
    ex = _example()
    sig = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "sm_scale": "fp32", "DO": "*fp16", "DQ": "*fp16",
           "DK": "*fp16", "DV": "*fp16", "M": "*fp32", "D": "*fp32", "stride_z": "i32", "stride_h": "i32",
           "stride_tok": "i32", "H": "i32", "N_CTX": "i32"}
    consts = dict(ex.BWD, HEAD_DIM=D, CAUSAL=causal)
    opts = {"num_warps": consts.pop("num_warps"), "num_stages": consts.pop("num_stages")}
    sig.update({k: "constexpr" for k in consts})
    attrs = {name: [["tt.divisibility", 16]] for name in ("Q", "K", "V", "DO", "DQ", "DK", "DV", "M", "D",
                                                           "stride_z", "stride_h", "stride_tok", "N_CTX")}
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(reg), nvidia.scope():
        nvidia.carry_register_a = int(carry)
        nvidia.pin_descriptors = pin
        return tritium.compile(ASTSource(ex.attn_bwd, sig, consts, attrs), target=GPUTarget("cuda", 90, 32),
                               options=opts)


def _dot_loops(ptx: str) -> list[str]:
    """The bodies of the PTX's loops (label .. backward branch to it) that issue wgmma."""
    out = []
    for m in re.finditer(r"^\s*@%p\d+ bra\s+(\$L__BB\d+_\d+);", ptx, re.M):
        start = ptx.find(m.group(1) + ":")
        if 0 <= start < m.start() and "wgmma.mma_async" in ptx[start:m.end()]:
            out.append(ptx[start:m.end()])
    return out


def _descriptors_built(body: str) -> int:
    # a descriptor is built from a shared address: or-ing the swizzle mode and strides (bits 62-63 set: 1 << 62
    # = 4611686018427387904) into the address field
    return len(re.findall(r"or\.b64\s+%rd\d+, %rd\d+, 46116\d+;", body))


@pytest.mark.parametrize("causal", [False, True])
def test_operands_written_before_the_loop_have_their_descriptors_built_in_it(causal):
    D = 128
    loops = _dot_loops(_bwd(D, causal).asm["ptx"])
    assert len(loops) == (4 if causal else 2)
    for body in loops:
        # every loop's three (dQ) or four (dK/dV) dots read one pipelined stage each and K/V or Q/dO: the stages'
        # descriptors and the two written before the loop (before: only the stages')
        assert _descriptors_built(body) >= 5, _descriptors_built(body)
    off = _dot_loops(_bwd(D, causal, pin=False).asm["ptx"])
    assert all(_descriptors_built(b) <= 4 for b in off), [_descriptors_built(b) for b in off]


def test_backward_d128_spills_less():
    # ptxas 13.0, bytes of spill stores: 2556 before (the dQ loop stored and reloaded its accumulator every
    # iteration), 2104 after; Triton 3.6: 2216
    assert _bwd(128, False).metadata.n_spills < 2400


@pytest.mark.parametrize("causal", [False, True])
def test_d64_operands_keep_hoisted_descriptors(causal):
    # 8 descriptors per 128 x 64 operand: left to LLVM (built in the loop, the causal D64 backward measured 4%
    # slower on the H200 with no spills either way)
    assert [_descriptors_built(b) for b in _dot_loops(_bwd(64, causal).asm["ptx"])] == \
        [_descriptors_built(b) for b in _dot_loops(_bwd(64, causal, pin=False).asm["ptx"])]


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("D", [64, 128])
def test_register_a_dots_run_into_the_next_iteration(D, causal):
    on = _dot_loops(_bwd(D, causal, carry=True).asm["ptx"])
    off = _dot_loops(_bwd(D, causal, carry=False).asm["ptx"])
    assert [b.count("wgmma.wait_group") for b in off] == [3] * len(off)
    # dK/dV: one wait for S^T, one for dV and dP^T together; dK retired by the next iteration's first wait.
    # dQ: S, dP; dQ likewise
    assert [b.count("wgmma.wait_group") for b in on] == [2] * len(on)
    for body in on:
        # nothing is waited for after the last dot's commit: the loop's end refills the stage behind a barrier
        tail = body[body.rindex("wgmma.commit_group"):]
        assert "wgmma.wait_group" not in tail and "bar.sync" in tail


def test_register_a_carry_threshold():
    # TRITIUM_NVIDIA_CARRY_REGISTER_A is the least accumulator registers per thread a loop must carry: at 256 only
    # D128's dK/dV loop (dK and dV, 128 each) qualifies; its dQ loop (128) and D64's loops (128, 64) keep 3 waits
    waits = [b.count("wgmma.wait_group") for b in _dot_loops(_bwd(128, False, carry=256).asm["ptx"])]
    assert waits == [2, 3], waits
    waits = [b.count("wgmma.wait_group") for b in _dot_loops(_bwd(64, False, carry=256).asm["ptx"])]
    assert waits == [3, 3], waits
