"""TRITIUM_NVIDIA_BULK_LOOP_TOP_BARRIER=0 (gpu/lower/pipeline.py): a pipelined loop whose stages are all bulk
tensor copies and whose dots run on keeps one barrier per iteration, the one after the dots' wait that frees
the stage the refill takes; the stages' mbarriers tell the copies' landing. examples/08's K loop: two barriers
per iteration with the knob on (the default), one off; zeros written for an empty tensor are followed by a
barrier of their own (in their branch). A loop whose dots wait for themselves keeps its top barrier."""
from __future__ import annotations

import os
import re
import shutil
import sys

import pytest

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from persistent08 import compile08, k_loop as _k_loop  # noqa: E402


def _compile(top: bool, prefetch: int):
    return compile08(bulk_loop_top_barrier=top, prefetch_tiles=prefetch, defer_store_wait=bool(prefetch))


def _unconditional_barriers(ptx: str) -> int:
    # bar.sync outside the zero-fill branches of empty tensors
    return sum(b.count("bar.sync") for b in re.split(r"\n\$L__BB\d+_\d+:", ptx) if "st.shared.v4.b32" not in b)


@pytest.mark.parametrize("prefetch", [0, 2])
def test_one_barrier_per_k_step(isolated_tritium, prefetch):
    on, off = _compile(True, prefetch).asm["ptx"], _compile(False, prefetch).asm["ptx"]
    # the barrier at the top of the K loop is gone: two per step before, one after
    loop_on, loop_off = _k_loop(on), _k_loop(off)
    assert "wgmma.wait_group.sync.aligned 1" in loop_off and "mbarrier.try_wait.parity" in loop_off
    assert _unconditional_barriers(loop_on) == 2 and _unconditional_barriers(loop_off) == 1
    # the zeros of an empty tensor's stage are followed by a barrier in their own branch
    zero_blocks = [b for b in re.split(r"\n\$L__BB\d+_\d+:", loop_off) if "st.shared.v4.b32" in b]
    assert zero_blocks and all("bar.sync" in b for b in zero_blocks)
    assert "cp.async.wait_group 1" not in loop_off       # nor the (empty) cp.async wait at the top
    # the stage barriers' init (thread 0) is followed by a barrier before the loop's first wait on them
    lines = [" ".join(ln.split()) for ln in off.splitlines()]
    init = max(i for i, ln in enumerate(lines) if ln.startswith("mbarrier.init") or ln.startswith("fence.mbarrier_init"))
    wait = next(i for i, ln in enumerate(lines) if "mbarrier.try_wait.parity" in ln)
    assert init < wait and any(ln == "bar.sync 0;" for ln in lines[init:wait])
