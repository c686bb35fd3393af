"""Importing the NVIDIA driver (what ``tritium.load_compiled`` does for a cuda artifact) imports none of the
compiler's heavy parts: a server loading ``.tritium`` files starts without the tile dialect, MLIR or llvmlite
(test_aot_cuda.py checks the whole load and launch on a GPU; this runs anywhere)."""
from __future__ import annotations

import subprocess
import sys

HEAVY = ("mlir", "tritium._mlir", "tritium.dialect", "tritium.compiler.code_generator", "tritium.compiler.builder",
         "tritium.language.semantic", "tritium.gpu.lower", "tritium_nvidia.compiler", "tritium_nvidia.target",
         "llvmlite")


def test_driver_import_stays_light():
    code = ("import sys, tritium, tritium_nvidia.driver, tritium.runtime.aot\n"
            f"print([m for m in {HEAVY!r} if m in sys.modules])")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]", r.stdout
