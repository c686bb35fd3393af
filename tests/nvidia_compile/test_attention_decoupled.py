"""sm_90, examples/07's forward with TRITIUM_NVIDIA_DECOUPLED_STAGES (gpu/lower/pipeline_decoupled.py): in kernels
of at least that many warps the pipelined loop has no CTA barrier and no cp.async.wait_group; each iteration waits
for its stage's mbarrier phase, starts the copies of the next iteration only (16 per thread at D128 / 8 warps) and
arrives through cp.async.mbarrier.arrive.noinc. The prologue starts one iteration instead of S - 1. Registers
stay without spills; below the warp count, and with the knob at 0 (default), the PTX is the plain pipeline's."""
from __future__ import annotations

import os
import re
import shutil
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attention07  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")
ARRIVE = "cp.async.mbarrier.arrive.noinc.shared::cta.b64"
WAIT = "mbarrier.try_wait.parity.shared::cta.b64"


def _compile(D: int, causal: bool, warps: int, turns: bool = False) -> tuple[str, dict]:
    k = attention07.compile_fwd(D, causal, decoupled_stages=warps, warpgroup_turns=turns)
    md = k.metadata
    return k.asm["ptx"], {"n_spills": md["n_spills"] if isinstance(md, dict) else getattr(md, "n_spills", 0)}


def _copy_loops(ptx: str) -> list[tuple[int, str]]:
    """(offset, body) of each loop (a label .. a later branch back to it) that issues cp.async copies and has no
    inner loop of its own except mbarrier waits."""
    out = []
    for m in re.finditer(r"^\s*(?:@%p\d+ )?bra(?:\.uni)?\s+(\$L__BB\d+_\d+);", ptx, re.M):
        start = ptx.find(m.group(1) + ":")
        body = ptx[start:m.end()]
        if 0 <= start < m.start() and "cp.async.cg" in body and "wgmma.mma_async" in body:
            out.append((start, body))
    return out


@pytest.mark.parametrize("causal", [False, True])
def test_d128_loops_wait_on_stage_barriers(causal):
    ptx, md = _compile(128, causal, 8)
    loops = _copy_loops(ptx)
    assert len(loops) == (2 if causal else 1)
    for _, body in loops:
        assert "bar.sync" not in body and "cp.async.wait_group" not in body
        assert body.count(ARRIVE) == 1 and body.count(WAIT) == 1
        assert body.count("cp.async.cg.shared.global") == 16      # K and V of one iteration, 128 x 128 fp16
    # the prologue of the first loop: one iteration of copies (the plain pipeline: two)
    assert ptx[:loops[0][0]].count("cp.async.cg.shared.global") == 16
    assert md.get("n_spills", 0) == 0


def test_d128_default_keeps_the_cta_barrier():
    ptx, _ = _compile(128, False, 0)
    assert ARRIVE not in ptx and WAIT not in ptx
    assert "bar.sync" in attention07.loops_issuing(ptx, "cp.async.cg")[0]


def test_fewer_warps_than_asked_keep_the_plain_pipeline():
    # D64's config runs 4 warps: with the knob at 8 its PTX is the default's
    assert _compile(64, True, 8)[0] == _compile(64, True, 0)[0]


@pytest.mark.parametrize("causal", [False, True])
def test_d128_warpgroups_take_turns(causal):
    # TRITIUM_NVIDIA_WARPGROUP_TURNS (gpu/lower/pipeline_turns.py): per loop, warpgroup 1 lets warpgroup 0 go first
    # (an arrive before the loop), each waits for its turn in the first iteration (before Q K^T) and before P @ V,
    # hands over after Q K^T (an arrive), and warpgroup 0 hands the last turn over after the loop
    ptx, md = _compile(128, causal, 8, turns=True)
    assert len(re.findall(r"bar\.sync %r\d+, 256;", ptx)) == 2 * (2 if causal else 1)
    assert len(re.findall(r"bar\.arrive %r\d+, 256;", ptx)) == 3 * (2 if causal else 1)
    for _, body in _copy_loops(ptx):
        assert "bar.sync \t0;" not in body
    assert md.get("n_spills", 0) == 0
    # off by default, and nothing without the stage barriers
    assert "bar.arrive" not in _compile(128, causal, 8)[0] and "bar.arrive" not in _compile(128, causal, 0, True)[0]


def test_default_takes_eight_warps(monkeypatch):
    # on by default for kernels of 8 warps and more since the H200 measured the D128 forward +10-12% (PERF.md, ninth
    # session, HC); the ping-pong stays off (16-17% slower)
    monkeypatch.delenv("TRITIUM_NVIDIA_DECOUPLED_STAGES", raising=False)
    monkeypatch.delenv("TRITIUM_NVIDIA_WARPGROUP_TURNS", raising=False)
    from tritium_nvidia.knobs import nvidia
    with nvidia.scope():
        assert nvidia.decoupled_stages == 8 and nvidia.warpgroup_turns is False
