"""TRITIUM_NVIDIA_PRODUCER_WARPS (gpu/lower/pipeline_producer.py, tritium_nvidia/warp_roles.py): with the empty
barriers on, examples/08 runs 1 or 4 more warps (``.maxntid`` and the launch's ``num_warps``); they branch off
before the tile loop, after the stages' barriers are initialized and a barrier of every thread, and one thread of
them issues every copy (each after a wait on the stage's empty barrier); the consumers' K loop issues none (it
waits for the stage's landing, runs the dots, releases the stage), and every CTA barrier after the split is a
named barrier of the consumers' 256 threads. Off (0) by default, and without the empty barriers it changes
nothing. The GPU side is tests/gpu/test_ws_producer.py."""
from __future__ import annotations

import os
import re
import shutil
import sys

import pytest

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from persistent08 import compile08, k_loop  # noqa: E402

LOAD = "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
WAIT = "mbarrier.try_wait.parity"


def _outside_zero_fill(loop: str) -> str:
    return "\n".join(b for b in re.split(r"\n\$L__BB\d+_\d+:", loop) if "st.shared.v4.b32" not in b)


def test_knob_is_off_by_default():
    from tritium_nvidia.knobs import nvidia
    assert nvidia.producer_warps == 0


def test_without_empty_barriers_nothing_changes(isolated_tritium):
    assert compile08(producer_warps=1).asm["ptx"] == compile08().asm["ptx"]


@pytest.mark.parametrize("warps", [1, 4])
@pytest.mark.parametrize("dt,bn,bk", [("fp16", 256, 64), ("fp8e4nv", 256, 128), ("fp32", 128, 32)])
def test_producer_warps_issue_every_copy(isolated_tritium, warps, dt, bn, bk):
    c_dt = "fp16" if dt.startswith("fp8") else None
    k = compile08(dt, bn=bn, bk=bk, c_dt=c_dt, empty_barriers=True, producer_warps=warps)
    ptx = k.asm["ptx"]
    threads = 256 + 32 * warps
    assert f".maxntid {threads}" in ptx and k.metadata.num_warps == 8 + warps
    lines = [" ".join(ln.split()) for ln in ptx.splitlines()]
    named = [i for i, ln in enumerate(lines) if ln == "bar.sync 1, 256;"]
    whole = [i for i, ln in enumerate(lines) if ln == "bar.sync 0;"]
    # every thread's barriers come before the split, the consumers' after it
    assert named and whole and max(whole) < min(named)
    # the consumers' K loop: no copy, no arming, no CTA barrier; waits for the landing, releases the stage
    loop = k_loop(ptx)
    assert LOAD not in loop and "expect_tx" not in loop
    assert loop.count(WAIT) == 1 and loop.count("mbarrier.arrive.shared::cta.b64 _,") == 1
    assert _outside_zero_fill(loop).count("bar.sync") == 0
    # the copies are the producer's: between the split and the consumers' first barrier, each armed after a
    # wait on the stage's empty barrier
    split = next(i for i, ln in enumerate(lines) if re.match(rf"setp\.(?:lt|ge)\.u32 %p\d+, %r\d+, 256;", ln))
    producer = lines[split:min(named)]
    loads = [i for i, ln in enumerate(producer) if ln.startswith(LOAD)]
    arms = [i for i, ln in enumerate(producer) if ln.startswith("mbarrier.arrive.expect_tx")]
    assert loads and arms and len(loads) == 2 * len(arms)
    assert all(any(WAIT in ln for ln in producer[:a]) for a in arms)
    assert not any(ln.startswith(LOAD) for ln in lines[min(named):])
