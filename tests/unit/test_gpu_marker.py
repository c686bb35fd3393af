"""``make test-nogpu`` runs ``-m "not gpu"``: every test that needs an NVIDIA GPU must carry the ``gpu`` marker,
and the emulator's tests (which run everywhere) must not."""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]


# what `-m gpu` leaves out is what `-m "not gpu"` selects: one collection (~4 CPU-s) gives both lists
_REPORT_DESELECTED = """
def pytest_deselected(items):
    for item in items:
        print("deselected", item.nodeid)
"""


def _collected(tmp_path) -> tuple[list[str], list[str]]:
    """The node ids that ``-m gpu`` selects, and those it deselects."""
    (tmp_path / "report_deselected.py").write_text(_REPORT_DESELECTED)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider",
                          "-p", "report_deselected", "--collect-only", "-m", "gpu", "tests/gpu"],
                         cwd=REPO, capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = [line for line in out.stdout.splitlines() if "::" in line]
    not_gpu = [line.split(" ", 1)[1] for line in lines if line.startswith("deselected ")]
    return [line for line in lines if not line.startswith("deselected ")], not_gpu


def test_gpu_tests_are_marked_and_emulated_ones_are_not(tmp_path):
    gpu, not_gpu = _collected(tmp_path)
    assert gpu and not_gpu
    # the ``cuda`` side of the ``dev`` fixture, and the tests that take the ``cuda`` fixture directly
    assert any("[cuda" in n or "-cuda" in n for n in gpu)
    assert any("test_cuda_errors.py" in n for n in gpu)
    assert not [n for n in not_gpu if "[cuda" in n or "-cuda-" in n or "-cuda]" in n
                or "test_cuda_errors.py" in n]
    assert not [n for n in gpu if "[emu" in n or "-emu-" in n or "-emu]" in n]
