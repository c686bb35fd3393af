"""``tl.range(..., warp_specialize=True)`` on sm_90 (TRITIUM_NVIDIA_WS_PRODUCER_WARPS): the frontend tags the
loop's ``scf.for`` (``tt.warp_specialize``), and with the knob at 1 or 4 the K loops of a tagged tile loop take
the producer warp of gpu/lower/pipeline_producer.py with its empty barriers, whatever
TRITIUM_NVIDIA_EMPTY_BARRIERS says; loops without the hint compile as before. Knob at 0 (default): the hint
changes nothing, as in Triton 3.6 on sm_90. The GPU side is tests/gpu/test_ws_hint.py."""
from __future__ import annotations

import os
import shutil
import sys

import pytest

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from persistent08 import compile08, k_loop  # noqa: E402

LOAD = "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"


def test_knob_is_off_by_default():
    from tritium_nvidia.knobs import nvidia
    assert nvidia.ws_producer_warps == 0


def test_frontend_tags_the_loop(isolated_tritium):
    on, off = compile08(ws=True).asm["ttir"], compile08().asm["ttir"]
    assert on.count("tt.warp_specialize") == 1 and "tt.warp_specialize" not in off


def test_hint_alone_changes_nothing(isolated_tritium):
    assert compile08(ws=True).asm["ptx"] == compile08().asm["ptx"]


def test_knob_without_the_hint_changes_nothing(isolated_tritium):
    assert compile08(ws_producer_warps=1).asm["ptx"] == compile08().asm["ptx"]


@pytest.mark.parametrize("warps", [1, 4])
@pytest.mark.parametrize("dt,bn,bk", [("fp16", 256, 64), ("bf16", 256, 64), ("fp8e4nv", 256, 128),
                                      ("fp32", 128, 32)])
def test_hint_takes_the_producer_warps(isolated_tritium, warps, dt, bn, bk):
    c_dt = "fp16" if dt.startswith("fp8") else None
    k = compile08(dt, bn=bn, bk=bk, c_dt=c_dt, ws=True, ws_producer_warps=warps)
    ptx = k.asm["ptx"]
    assert f".maxntid {256 + 32 * warps}" in ptx and k.metadata.num_warps == 8 + warps
    # the empty barriers came with it (3 full + 3 empty), though TRITIUM_NVIDIA_EMPTY_BARRIERS is off
    assert ptx.count("mbarrier.init.shared::cta.b64") == 6
    # the consumers' K loop issues no copy; the producer's loop does
    assert LOAD not in k_loop(ptx) and LOAD in ptx
    # the same kernel the forced knobs make of every such loop
    forced = compile08(dt, bn=bn, bk=bk, c_dt=c_dt, empty_barriers=True, producer_warps=warps).asm["ptx"]
    assert ptx == forced
