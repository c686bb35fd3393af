"""The PTX of examples/08's persistent matmul with TRITIUM_NVIDIA_PREFETCH_TILES (gpu/lower/pipeline_prefetch.py):
the K loop's barriers are initialized before the tile loop, which issues the first tile's two stages there;
after each K loop (its dots retired, a barrier) the next tile's two stages are issued, before the epilogue's
first shared store, on barriers restarted (mode 1) or whose phases carry on (mode 2); the barriers are
invalidated after the tile loop. The stages live
through the tile loop (the epilogue's tile has bytes of its own). A kernel without an outer loop is unchanged,
and so is a configuration whose stages and tile would not fit together (lowered again without the prefetch).
The GPU side is tests/gpu/test_persistent_store_wait.py."""
from __future__ import annotations

import os
import shutil
import sys

import pytest

import tritium
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from persistent08 import compile08  # noqa: E402

LOAD = "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"


def _compile(fn, sig, consts, attrs, prefetch: int, stages=3):
    from tritium import plugins
    from tritium_nvidia.knobs import nvidia
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(reg), nvidia.scope():
        nvidia.prefetch_tiles = prefetch
        nvidia.defer_store_wait = False     # the tile in the scratch buffer: what the prefetch alone adds
        return tritium.compile(ASTSource(fn, sig, consts, attrs), target=GPUTarget("cuda", 90, 32),
                               options={"num_warps": 8, "num_stages": stages})


def _compile08(prefetch: int, bm=128, bn=256, bk=64):
    # the tile in the scratch buffer (store waited at once): what the prefetch alone adds
    return compile08(bm=bm, bn=bn, bk=bk, prefetch_tiles=prefetch, defer_store_wait=False)


def _lines(ptx: str) -> list[str]:
    return [" ".join(ln.split()) for ln in ptx.splitlines() if ln.strip() and not ln.strip().startswith("//")]


@pytest.mark.parametrize("mode", [1, 2], ids=["restarted-barriers", "carried-phases"])
def test_next_tile_stages_before_the_epilogue(isolated_tritium, mode):
    on, off = _compile08(mode), _compile08(0)
    lines = _lines(on.asm["ptx"])
    ptx_off = off.asm["ptx"]
    # off: three barriers initialized and invalidated per K loop; two stages of A and B before it, one in it
    assert ptx_off.count("mbarrier.init.shared::cta.b64") == 3 and ptx_off.count(LOAD) == 6
    # on: three before the tile loop (and, mode 1, three after each K loop; mode 2 carries the read stage and
    # its phase from one K loop to the next, so the barriers are never restarted); the first tile's two
    # stages, the loop's, the next tile's two
    restarts = {1: 6, 2: 3}[mode]
    assert sum(ln.startswith("mbarrier.init.shared::cta.b64") for ln in lines) == restarts
    assert sum(ln.startswith("mbarrier.inval.shared::cta.b64") for ln in lines) == restarts
    assert "ld.local" not in on.asm["ptx"]          # the carried stage and phase are registers
    loads = [i for i, ln in enumerate(lines) if ln.startswith(LOAD)]
    assert len(loads) == 10
    retire = lines.index("wgmma.wait_group.sync.aligned 0;")
    # the epilogue's first write of the tile (element-wise, or stmatrix with TRITIUM_NVIDIA_STMATRIX)
    first_st = next(i for i, ln in enumerate(lines) if ln.startswith(("st.shared.b32", "stmatrix.")))
    # the next tile's four copies come after the K loop's last dots are retired and before the epilogue writes
    ahead = [i for i in loads if retire < i < first_st]
    assert len(ahead) == 4
    if mode == 1:       # ... after the barriers restart
        inits = [i for i, ln in enumerate(lines) if ln.startswith("mbarrier.init")]
        assert retire < inits[3] < inits[5] < ahead[0]
    # the stages are not the epilogue's: 64 KB more, within the H200's 227 KB
    assert on.metadata_dict["shared"] >= off.metadata_dict["shared"] + 128 * 256 * 2
    assert on.metadata_dict["shared"] <= 227 * 1024


def test_a_tile_too_large_keeps_the_prologue(isolated_tritium):
    # 3 stages of 256 x 64 + 256 x 64 fp16 (192 KB) and a 256 x 256 fp16 tile (128 KB) do not fit together:
    # lowered again without the prefetch, the PTX is the knob-off one
    on, off = _compile08(2, bm=256, bn=256), _compile08(0, bm=256, bn=256)
    assert on.asm["ptx"] == off.asm["ptx"]


def test_kernel_without_outer_loop_unchanged(isolated_tritium):
    import sys
    sys.path.insert(0, os.path.join(ROOT, "tests", "gpu"))
    from test_descriptor_tma import _mm
    sig = {"a_desc": "tensordesc<fp16[128, 64]>", "b_desc": "tensordesc<fp16[128, 64]>", "c_ptr": "*fp32",
           "M": "i32", "N": "i32", "K": "i32", "shift_m": "i32", "BM": "constexpr", "BN": "constexpr",
           "BK": "constexpr"}
    consts = {"BM": 128, "BN": 128, "BK": 64}
    assert _compile(_mm, sig, consts, {}, 2).asm["ptx"] == _compile(_mm, sig, consts, {}, 0).asm["ptx"]
