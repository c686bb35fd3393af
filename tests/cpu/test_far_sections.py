"""A kernel's code and its constants may be mapped far apart in the process (large tensors fragment the address
space): loading it must neither abort the process nor compute garbage. Liger-Kernel's cross entropy over a
32000-word vocabulary (2 GB of logits and gradients) aborted in LLVM's loader, relocation out of range."""
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform != "linux" or platform.machine() != "x86_64",
                                reason="arranges the address space through Linux mmap on x86-64")


def test_kernel_whose_code_and_constants_are_mapped_4gib_apart(tmp_path):
    child = Path(__file__).with_name("far_sections_child.py")
    env = dict(os.environ, TRITON_CACHE_DIR=str(tmp_path))
    run = subprocess.run([sys.executable, str(child)], env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f"rc={run.returncode}\n{run.stdout}\n{run.stderr[-3000:]}"
    assert run.stdout.strip().endswith("ok True")
