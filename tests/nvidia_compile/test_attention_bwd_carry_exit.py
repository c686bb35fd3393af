"""sm_90, examples/07's backward at the tutorial's settings with the last register-A dot of each loop (dK += dS^T Q,
dQ += dS K) left running into the next iteration (TRITIUM_NVIDIA_CARRY_REGISTER_A): ptxas must keep the wgmma
pipelined (no C7514/C7515 note: with one, ptxas serializes every wgmma of the kernel, a warpgroup.arrive and a
wait around each of the 44 of the D64 kernel).

Such a loop is tested at its entry and at its end, and its last iteration leaves through a block of its own that
retires the running dot (gpu/lower/carry_dot.py ``exit_edge``). Before, the retiring wait was in the loop's exit
block, which the path that skips the loop also reaches with copies of the initial (zero) accumulator: with LLVM's
loop strength reduction on (TRITIUM_NVIDIA_LSR=1) those copies landed in a block of that path only and ptxas
printed C7515 for the D64 kernel; with LSR off (the default for these kernels) they happened to land before the
loop's entry test."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attention07 import compile_bwd, dot_loops  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")


def _bwd_ptx(D: int, causal: bool, **knobs) -> str:
    return compile_bwd(D, causal, **knobs).asm["ptx"]


def _ptxas_notes(ptx: str, tmp_path) -> str:
    from tritium_nvidia.toolchain import find_ptxas
    p = tmp_path / "k.ptx"
    p.write_text(ptx)
    r = subprocess.run([find_ptxas(), "-arch=sm_90a", "-v", str(p), "-o", str(tmp_path / "k.cubin")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stderr


@pytest.mark.parametrize("lsr", ["1", "auto"])
@pytest.mark.parametrize("causal", [False, True])
def test_carried_register_a_dots_stay_pipelined(tmp_path, causal, lsr):
    ptx = _bwd_ptx(64, causal, carry_register_a=1, lsr=lsr)
    notes = _ptxas_notes(ptx, tmp_path)
    assert "C7515" not in notes and "C7514" not in notes, notes
    loops = dot_loops(ptx)
    assert [b.count("wgmma.wait_group") for b in loops] == [2] * (4 if causal else 2)

