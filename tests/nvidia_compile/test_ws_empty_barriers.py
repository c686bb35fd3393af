"""TRITIUM_NVIDIA_EMPTY_BARRIERS (gpu/lower/pipeline_empty.py): examples/08's K loop frees each stage through an
mbarrier of its own instead of CTA barriers. In the loop: no bar.sync outside an empty tensor's zero-fill branch
(which keeps one before and one after its zeros), lane 0 of each warp arrives on the previous stage's empty
barrier after ``wgmma.wait_group 1``, and the issuing thread waits on that barrier before it re-arms the stage's
full barrier and issues the copies. Six barriers per K loop (three full, three empty, the empty ones for one
arrival per warp); the stage the last iteration read is released after the loop's ``wait_group 0``, before its
barrier. A loop whose dots wait for themselves (mma.sync) releases its stages the same way. Off by default. The GPU side is tests/gpu/test_ws_empty_barriers.py."""
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

RELEASE = "mbarrier.arrive.shared::cta.b64 _,"
ARM = "mbarrier.arrive.expect_tx"
WAIT = "mbarrier.try_wait.parity"


def _lines(ptx: str) -> list[str]:
    return [" ".join(ln.split()) for ln in ptx.splitlines() if ln.strip() and not ln.strip().startswith("//")]


def _outside_zero_fill(loop: str) -> str:
    return "\n".join(b for b in re.split(r"\n\$L__BB\d+_\d+:", loop) if "st.shared.v4.b32" not in b)


def test_knob_is_off_by_default():
    from tritium_nvidia.knobs import nvidia
    assert nvidia.empty_barriers is False


@pytest.mark.parametrize("prefetch", [0, 2], ids=["fill-per-tile", "carried-phases"])
@pytest.mark.parametrize("dt,bn,bk", [("fp16", 256, 64), ("fp8e4nv", 256, 128), ("fp32", 128, 32)])
def test_k_loop_frees_stages_through_empty_barriers(isolated_tritium, prefetch, dt, bn, bk):
    c_dt = "fp16" if dt.startswith("fp8") else None
    off = compile08(dt, bn=bn, bk=bk, c_dt=c_dt, prefetch_tiles=prefetch).asm["ptx"]
    on = compile08(dt, bn=bn, bk=bk, c_dt=c_dt, prefetch_tiles=prefetch, empty_barriers=True).asm["ptx"]
    loop_off, loop_on = k_loop(off), k_loop(on)
    # before: a CTA barrier at the top and one after the dots' wait; no arrival but the copies' arming
    assert _outside_zero_fill(loop_off).count("bar.sync") == 2 and RELEASE not in loop_off
    # after: none outside the zero fill (two barriers there: the readers done, then the zeros written)
    assert _outside_zero_fill(loop_on).count("bar.sync") == 0
    zero = [b for b in re.split(r"\n\$L__BB\d+_\d+:", loop_on) if "st.shared.v4.b32" in b]
    assert zero and all(b.count("bar.sync") == 2 for b in zero)
    lines = _lines(loop_on)
    at = {k: [i for i, ln in enumerate(lines) if k in ln] for k in
          ("wgmma.wait_group.sync.aligned 1", RELEASE, ARM, WAIT)}
    # one release per step, after the dots' wait; two waits (the stage's landing, then its refill's release)
    assert len(at["wgmma.wait_group.sync.aligned 1"]) == 1 and len(at[RELEASE]) == 1 and len(at[ARM]) == 1
    assert len(at[WAIT]) == 2
    assert at[WAIT][0] < at["wgmma.wait_group.sync.aligned 1"][0] < at[RELEASE][0] < at[WAIT][1] < at[ARM][0]
    # three full and three empty barriers per K loop (initialized once for the tile loop with the prefetch)
    assert on.count("mbarrier.init.shared::cta.b64") == 6 and off.count("mbarrier.init.shared::cta.b64") == 3
    assert on.count("mbarrier.inval.shared::cta.b64") == 6
    # after the loop: the last stage released once its dots retired, before the barrier that ends the loop
    after = _lines(on[on.index(loop_on) + len(loop_on):])
    w0 = next(i for i, ln in enumerate(after) if ln.startswith("wgmma.wait_group.sync.aligned 0"))
    rel = next(i for i, ln in enumerate(after) if ln.startswith(RELEASE))
    bar = next(i for i, ln in enumerate(after) if ln.startswith("bar.sync"))
    assert w0 < rel < bar


def test_empty_barriers_count_warps(isolated_tritium):
    """The empty barriers are initialized for one arrival per warp (8), the full ones for one."""
    ptx = compile08(empty_barriers=True).asm["ptx"]
    counts = []
    lines = _lines(ptx)
    for i, ln in enumerate(lines):
        m = re.match(r"mbarrier\.init\.shared::cta\.b64 \[%r\d+\], (%r\d+);", ln)
        if m:
            reg = m.group(1)
            mov = [x for x in lines[:i] if re.match(rf"mov\.(?:b|u|s)32 {re.escape(reg)}, \d+;", x)]
            counts.append(int(mov[-1].split(", ")[1].rstrip(";")))
    assert sorted(counts) == [1, 1, 1, 8, 8, 8]


def test_loop_of_self_waiting_dots(isolated_tritium):
    # 64x64 at 8 warps: mma.sync, every dot waits for itself; the stages are released all the same (the
    # decision is made before the body is lowered)
    on = compile08(bm=64, bn=64, empty_barriers=True).asm["ptx"]
    off = compile08(bm=64, bn=64).asm["ptx"]
    assert "wgmma.mma_async" not in on and RELEASE not in off and on.count(RELEASE) == 2
    assert on.count("mbarrier.init.shared::cta.b64") == 6
