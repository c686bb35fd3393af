"""sm_90, examples/07's backward (tutorial settings, D64): with TRITIUM_NVIDIA_EARLY_ROW_READS the dK/dV loop's
staged row vectors (M and Di, read only through ``expand_dims``) are read from their stage before the dot that
precedes their first use (gpu/lower/pipeline_rows.py), as Triton 3.6's SASS has them: M's four 8-byte shared loads
before the iteration's first wgmma fence (they run beside Q K^T), Di's before the fence of the dots that precede
dS (dV, dP^T). Off (default), each is read at its ``expand_dims``, after the wait of the dot before it."""
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


def _ptx(**knobs) -> str:
    return compile_bwd(64, False, **knobs).asm["ptx"]


def _row_reads(ptx: str) -> list[list[int]]:
    """Per dK/dV loop (four dots): for each wgmma fence, the 8-byte shared loads since the previous fence."""
    out = []
    for body in dot_loops(ptx):
        if body.count("wgmma.fence") != 4:
            continue
        parts = body.split("wgmma.fence")
        out.append([len(re.findall(r"ld\.shared\.v2\.b32", p)) for p in parts[:-1]])
    return out


@pytest.mark.parametrize("carry", [0, 1])
def test_row_vectors_are_read_before_the_dot_ahead_of_their_use(carry):
    on = _row_reads(_ptx(carry_register_a=carry, early_row_reads=True))
    off = _row_reads(_ptx(carry_register_a=carry, early_row_reads=False))
    assert on and off
    # fences: Q K^T, dV, dP^T, dK. On: M before Q K^T's, Di before dP^T's (dV and dP^T are waited for together);
    # off: nothing before Q K^T's, M after its wait (before dV's), Di after the joined wait (before dK's)
    assert on == [[4, 0, 4, 0]] * len(on), on
    assert off == [[0, 4, 0, 4]] * len(off), off
