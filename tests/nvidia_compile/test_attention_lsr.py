"""sm_90, examples/07's forward at the tutorial's configurations (3 stages): the copies of the pipelined loop read
the pointers the pipeline carries (one 64-bit add each per iteration). LLVM's loop strength reduction (LSR)
rewrote them as "a pointer one iteration behind plus a loop-invariant offset", a second 64-bit add per copy
(SASS: loop 523 -> 493 instructions at D64, 551 -> 490 at D128 without it; tritium_nvidia/lsr.py). Kernels
without a register-A wgmma (matmuls, where LSR's form is the shorter one) and 2-stage loops keep LSR."""
from __future__ import annotations

import os
import re
import shutil
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attention07  # noqa: E402
from attention07 import loops_issuing  # noqa: E402
from example_modules import example  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")


def _compile(fn, sig, consts, attrs, opts, lsr: str):
    # the plain pipeline's loop (conditional back edge); the D128 loop on stage barriers (the default since the
    # ninth session) is test_attention_decoupled.py's
    return attention07._compile(fn, sig, consts, attrs, opts, {"lsr": lsr, "decoupled_stages": 0}).asm["ptx"]


def _fwd(D: int, causal: bool, lsr: str = "auto", stages: int | None = None) -> str:
    return attention07.compile_fwd(D, causal, stages, lsr=lsr, decoupled_stages=0).asm["ptx"]


def _copies_from_carried_pointers(body: str) -> tuple[int, int]:
    """(copies, those whose global address is a pointer advanced in place in the loop: add.s64 %rdN, %rdN, ...)"""
    srcs = re.findall(r"cp\.async\.cg\.shared\.global \[%r\d+\], \[(%rd\d+)\]", body)
    in_place = {m.group(1) for m in re.finditer(r"add\.s64\s+(%rd\d+), (%rd\d+), %rd\d+;", body)
                if m.group(1) == m.group(2)}
    return len(srcs), sum(s in in_place for s in srcs)


@pytest.mark.parametrize("D,causal", [(64, False), (64, True), (128, False)])
def test_forward_copies_read_the_carried_pointers(D, causal):
    loops = loops_issuing(_fwd(D, causal), "cp.async.cg")
    assert len(loops) == (2 if causal else 1)
    for body in loops:
        copies, carried = _copies_from_carried_pointers(body)
        # K's and V's copies of the iteration S - 1 ahead: 8 per loop at D64 / 4 warps, 16 at D128 / 8 warps
        assert copies >= 8 and carried == copies, (copies, carried)


def test_lsr_on_rewrites_them():
    # the knob's other side, so that the test above checks what it means to: LLVM's LSR form
    body = loops_issuing(_fwd(64, False, lsr="1"), "cp.async.cg")[0]
    copies, carried = _copies_from_carried_pointers(body)
    assert copies == 8 and carried == 0, (copies, carried)


def test_two_stages_and_matmuls_keep_lsr():
    assert _fwd(128, True, stages=2) == _fwd(128, True, lsr="1", stages=2)
    ex = example("03-matrix-multiplication.py")
    sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
           "stride_am": "i32", "stride_ak": "constexpr", "stride_bk": "i32", "stride_bn": "constexpr",
           "stride_cm": "i32", "stride_cn": "constexpr", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr",
           "BLOCK_K": "constexpr", "GROUP_M": "constexpr"}
    consts = {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1, "BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64,
              "GROUP_M": 8}
    attrs = {k: [["tt.divisibility", 16]] for k in ("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am",
                                                     "stride_bk", "stride_cm")}
    opts = {"num_warps": 8, "num_stages": 3}
    assert _compile(ex.matmul_kernel, sig, consts, attrs, opts, "auto") == \
        _compile(ex.matmul_kernel, sig, consts, attrs, opts, "1")
