"""The PTX of descriptor stores inside loops with TRITIUM_NVIDIA_DEFER_STORE_WAIT (descriptor_store_deferred.py):
examples/08's tile store commits its bulk copies without waiting, waits for the previous tile's read (thread 0)
before the barrier ahead of the next write, once more after the tile loop, and stages the tile in its own shared
buffer (the pipeline stages no longer share its bytes); off, the PTX is the one before the knob. A store whose
buffer would not fit next to the loop's others waits at once, as before. The GPU side is
tests/gpu/test_persistent_store_wait.py."""
from __future__ import annotations

import os
import shutil
import sys

import pytest

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from persistent08 import compile08  # noqa: E402


def _compile(defer, stages=3, bm=128, bn=256, bk=64):
    # prefetch off: the stages share the tile's bytes when the store waits at once
    return compile08(bm=bm, bn=bn, bk=bk, stages=stages, defer_store_wait=defer, prefetch_tiles=0)


def _asm_lines(ptx: str) -> list[str]:
    return [" ".join(ln.split()) for ln in ptx.splitlines() if ln.strip() and not ln.strip().startswith("//")]


def test_tile_store_waits_before_the_next_write(isolated_tritium):
    on, off = _compile(True), _compile(False)
    lines = _asm_lines(on.asm["ptx"])
    commit = lines.index("cp.async.bulk.commit_group;")
    # no wait right after the copies' commit: the tile loop goes on to its next tile
    assert not lines[commit + 1].startswith("cp.async.bulk.wait_group")
    waits = [i for i, ln in enumerate(lines) if ln == "cp.async.bulk.wait_group.read 0;"]
    assert len(waits) == 2
    # one before the tile is written to shared memory (then the barrier), one after the loop, before ret
    # the epilogue's first write of the tile (element-wise, or stmatrix with TRITIUM_NVIDIA_STMATRIX)
    first_st = next(i for i, ln in enumerate(lines) if ln.startswith(("st.shared.b32", "stmatrix.")))
    assert waits[0] < first_st and any(ln == "bar.sync 0;" for ln in lines[waits[0]:first_st])
    assert waits[1] > commit and lines.index("ret;") > waits[1]
    # the tile has a buffer of its own next to the three 48 KB stages (and their barriers)
    assert on.metadata_dict["shared"] - off.metadata_dict["shared"] >= 128 * 256 * 2
    assert on.metadata_dict["shared"] <= 227 * 1024
    # off: every store waits at once, and the tile reuses the stages' bytes
    lines_off = _asm_lines(off.asm["ptx"])
    c = lines_off.index("cp.async.bulk.commit_group;")
    assert lines_off[c + 1] == "cp.async.bulk.wait_group.read 0;"
    assert off.metadata_dict["shared"] < 150 * 1024


def test_store_that_would_not_fit_waits_at_once(isolated_tritium):
    # 4 stages of 256 x 64 + 256 x 64 fp16 (64 KB each) leave no room for a 128 KB tile of its own
    k = _compile(True, stages=3, bm=256, bn=256, bk=64)
    lines = _asm_lines(k.asm["ptx"])
    c = lines.index("cp.async.bulk.commit_group;")
    assert lines[c + 1] == "cp.async.bulk.wait_group.read 0;"
    assert k.metadata_dict["shared"] <= 227 * 1024
