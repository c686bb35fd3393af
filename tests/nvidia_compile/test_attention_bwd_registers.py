"""sm_90, examples/07's backward at the tutorial's settings (BLOCK_N1 = BLOCK_M2 = 128, 4 warps, 5 stages):

- the wgmma descriptors of an operand written to shared memory before its loop (K and V in the dK/dV loop, Q and
  dO in the dQ loop) are built in the loop body (wgmma_operands.py ``_pinned``), not hoisted out of it by LLVM: hoisted,
  they were 16 64-bit registers per 128 x 128 operand live through the loop, and ptxas spilled the
  accumulators for them (D128's dQ loop stored and reloaded its 128 accumulator registers every iteration);
  D64's operands (8 descriptors each) keep LLVM's placement;
- with TRITIUM_NVIDIA_CARRY_REGISTER_A, the last dot of each loop (dK += dS^T Q, dQ += dS K: A in registers) runs
  into the next iteration, retired by its first wait, as Triton 3.6's loops (2 waits per loop instead of 3)."""
from __future__ import annotations

import os
import re
import shutil
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attention07 import compile_bwd, dot_loops  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")


def _bwd(D: int, causal: bool, carry: int = 0, pin: bool = True):
    return compile_bwd(D, causal, carry_register_a=int(carry), pin_descriptors=pin)


def _descriptors_built(body: str) -> int:
    # a descriptor is built from a shared address: or-ing the swizzle mode and strides (bits 62-63 set: 1 << 62
    # = 4611686018427387904) into the address field
    return len(re.findall(r"or\.b64\s+%rd\d+, %rd\d+, 46116\d+;", body))


@pytest.mark.parametrize("causal", [False, True])
def test_operands_written_before_the_loop_have_their_descriptors_built_in_it(causal):
    D = 128
    loops = dot_loops(_bwd(D, causal).asm["ptx"])
    assert len(loops) == (4 if causal else 2)
    for body in loops:
        # every loop's three (dQ) or four (dK/dV) dots read one pipelined stage each and K/V or Q/dO: the stages'
        # descriptors and the two written before the loop (before: only the stages')
        assert _descriptors_built(body) >= 5, _descriptors_built(body)
    off = dot_loops(_bwd(D, causal, pin=False).asm["ptx"])
    assert all(_descriptors_built(b) <= 4 for b in off), [_descriptors_built(b) for b in off]


def test_backward_d128_spills_less():
    # ptxas 13.0, bytes of spill stores: 2556 before (the dQ loop stored and reloaded its accumulator every
    # iteration), 2104 after; Triton 3.6: 2216
    assert _bwd(128, False).metadata.n_spills < 2400


@pytest.mark.parametrize("causal", [False, True])
def test_d64_operands_keep_hoisted_descriptors(causal):
    # 8 descriptors per 128 x 64 operand: left to LLVM (built in the loop, the causal D64 backward measured 4%
    # slower on the H200 with no spills either way)
    assert [_descriptors_built(b) for b in dot_loops(_bwd(64, causal).asm["ptx"])] == \
        [_descriptors_built(b) for b in dot_loops(_bwd(64, causal, pin=False).asm["ptx"])]


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("D", [64, 128])
def test_register_a_dots_run_into_the_next_iteration(D, causal):
    on = dot_loops(_bwd(D, causal, carry=True).asm["ptx"])
    off = dot_loops(_bwd(D, causal, carry=False).asm["ptx"])
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
    waits = [b.count("wgmma.wait_group") for b in dot_loops(_bwd(128, False, carry=256).asm["ptx"])]
    assert waits == [2, 3], waits
    waits = [b.count("wgmma.wait_group") for b in dot_loops(_bwd(64, False, carry=256).asm["ptx"])]
    assert waits == [3, 3], waits
