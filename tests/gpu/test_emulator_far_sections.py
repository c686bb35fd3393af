"""The GPU emulator's kernel objects load wherever the JIT maps their sections: code and constants more than 2 GiB
apart once large arrays fragment the address space. With the small code model's 32-bit PC-relative references
LLVM's loader aborted the process (``isInt<32>(RealOffset)``), as the CPU backend's had
(tests/cpu/test_far_sections.py)."""
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform != "linux" or platform.machine() != "x86_64",
                                reason="arranges the address space through Linux mmap on x86-64")


def test_emulated_kernel_whose_code_and_constants_are_mapped_4gib_apart(tmp_path):
    child = Path(__file__).with_name("emulator_far_sections_child.py")
    env = dict(os.environ, TRITIUM_HOME=str(tmp_path))
    env.pop("TRITON_CACHE_DIR", None)
    env.pop("TRITIUM_CACHE_DIR", None)
    run = subprocess.run([sys.executable, str(child)], env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f"rc={run.returncode}\n{run.stdout}\n{run.stderr[-3000:]}"
    assert run.stdout.strip().endswith("ok")
