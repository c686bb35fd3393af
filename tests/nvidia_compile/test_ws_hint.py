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
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "gpu"))
from hopper import two_k_loops  # noqa: E402
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


def _two_loops_ptx(ws: bool, knob: int) -> tuple:
    import tritium
    from tritium import plugins
    from tritium.backends.compiler import GPUTarget
    from tritium.compiler import ASTSource
    from tritium_nvidia.knobs import nvidia

    two_k = two_k_loops()
    sig = {"a_desc": "tensordesc<fp16[128, 64]>", "b_desc": "tensordesc<fp16[128, 64]>",
           "c_desc": "tensordesc<fp16[128, 128]>", "M": "i32", "N": "i32", "K": "i32", "BM": "constexpr",
           "BN": "constexpr", "BK": "constexpr", "NUM_SMS": "constexpr", "WS": "constexpr"}
    attrs = {(2, 2): [["tt.divisibility", 16]], (3, ): [["tt.divisibility", 16]],
             (4, ): [["tt.divisibility", 16]], (5, ): [["tt.divisibility", 16]]}
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(reg), nvidia.scope():
        nvidia.ws_producer_warps = knob
        k = tritium.compile(ASTSource(two_k, sig, dict(BM=128, BN=128, BK=64, NUM_SMS=132, WS=ws), attrs),
                            target=GPUTarget("cuda", 90, 32), options={"num_warps": 8, "num_stages": 3})
    return k.asm["ptx"], k.metadata.num_warps


def test_two_k_loops_one_producer(isolated_tritium):
    ptx, warps = _two_loops_ptx(True, 1)
    assert warps == 9 and ".maxntid 288" in ptx
    lines = [" ".join(ln.split()) for ln in ptx.splitlines()]
    named = [i for i, ln in enumerate(lines) if ln == "bar.sync 1, 256;"]
    whole = [i for i, ln in enumerate(lines) if ln == "bar.sync 0;"]
    # one loop's stages with empty barriers (the producer's), the other's without; after the split, every CTA
    # barrier is the consumers' (a bar.sync 0 there would wait for the producer warp, which has left)
    assert sum(ln.startswith("mbarrier.init.shared::cta.b64") for ln in lines) == 9
    assert named and whole and max(whole) < min(named)
    # without the hint: no producer
    assert _two_loops_ptx(False, 1)[1] == 8
