"""sm_90: a wgmma dot whose accumulator nothing reads before the loop's yield finishes at the next dot's wait
(one ``wgmma.wait_group`` for both), as Triton does: the attention backward's dV += P^T dO is issued, then
dP^T = V dO^T, then both are waited for, so the tensor cores run them back to back. Before, dV waited for
itself first (dK/dV loop: 4 waits, Triton 2; now 3)."""
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


def _bwd_ptx(causal: bool) -> str:
    # dK left running into the next iteration takes the third wait away (test_attention_bwd_carry_exit.py);
    # here the joined wait of dV and dP^T alone
    return compile_bwd(64, causal, carry_register_a=0).asm["ptx"]


@pytest.mark.parametrize("causal", [False, True])
def test_dv_waits_with_dpt(isolated_tritium, causal):
    loops = [body for body in dot_loops(_bwd_ptx(causal)) if body.count("wgmma.commit_group") == 4]
    # the dK/dV loops (four dots each): dV's commit is followed by dP^T's, then one wait covers both
    assert loops, "no dK/dV loop found"
    for body in loops:
        assert body.count("wgmma.wait_group") == 3, body.count("wgmma.wait_group")
        second, third = [m.start() for m in re.finditer("wgmma.commit_group", body)][1:3]
        assert "wgmma.wait_group" not in body[second:third]
