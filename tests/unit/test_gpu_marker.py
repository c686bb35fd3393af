"""``make test-nogpu`` runs ``-m "not gpu"``: every test that needs an NVIDIA GPU must carry the ``gpu`` marker,
and the emulator's tests (which run everywhere) must not."""
from __future__ import annotations

import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]


def _collected(marker: str) -> list[str]:
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider",
                          "--collect-only", "-m", marker, "tests/gpu"],
                         cwd=REPO, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    return [line for line in out.stdout.splitlines() if "::" in line]


def test_gpu_tests_are_marked_and_emulated_ones_are_not():
    gpu, not_gpu = _collected("gpu"), _collected("not gpu")
    assert gpu and not_gpu
    # the ``cuda`` side of the ``dev`` fixture, and the tests that take the ``cuda`` fixture directly
    assert any("[cuda" in n or "-cuda" in n for n in gpu)
    assert any("test_cuda_errors.py" in n for n in gpu)
    assert not [n for n in not_gpu if "[cuda" in n or "-cuda-" in n or "-cuda]" in n
                or "test_cuda_errors.py" in n]
    assert not [n for n in gpu if "[emu" in n or "-emu-" in n or "-emu]" in n]
