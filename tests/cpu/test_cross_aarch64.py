"""Cross-compiling for AArch64 (TRITIUM_CPU_TRIPLE): the code generator must not assume x86. The kernels of the
whole conformance suite are compiled for aarch64-unknown-linux-gnu, in a compile-only run (nothing executes)."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium_cpu.knobs import cpu as cpu_knobs

TRIPLE = "aarch64-unknown-linux-gnu"
ELF_MACHINE_AARCH64 = 183


def _has_aarch64() -> bool:
    import llvmlite.binding as llvm
    llvm.initialize_all_targets()
    try:
        llvm.Target.from_triple(TRIPLE)
    except RuntimeError:
        return False
    return True


pytestmark = pytest.mark.skipif(not _has_aarch64(), reason="this llvmlite has no AArch64 target")


@triton.jit
def softmax_rows(x_ptr, y_ptr, N: tl.constexpr):
    row = tl.program_id(0)
    x = tl.load(x_ptr + row * N + tl.arange(0, N))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * N + tl.arange(0, N), e / tl.sum(e, axis=0))


def test_compiles_an_aarch64_object_and_refuses_to_run_it():
    x = np.zeros((4, 64), np.float32)
    y = np.zeros_like(x)
    with cpu_knobs.scope():
        cpu_knobs.target_triple = TRIPLE
        cpu_knobs.target_cpu = None
        cpu_knobs.target_features = None
        with pytest.raises(RuntimeError, match=r"compiled for aarch64.*TRITIUM_CPU_COMPILE_ONLY=1"):
            softmax_rows[(4, )](x, y, 64)
        cpu_knobs.compile_only = True
        kernel = softmax_rows[(4, )](x, y, 64)
    obj = kernel.asm["obj"]
    assert obj[:4] == b"\x7fELF" and int.from_bytes(obj[18:20], "little") == ELF_MACHINE_AARCH64
    assert 'target triple = "aarch64-unknown-linux-gnu"' in kernel.asm["llir"]
    assert not y.any()      # compile-only: nothing ran
    # the same kernel for the host is another cache entry, and it runs
    native = softmax_rows[(4, )](x, y, 64)
    assert native.hash != kernel.hash
    np.testing.assert_allclose(y, np.full_like(y, 1 / 64), rtol=1e-6)


# The suite is compiled in SHARDS items, each a process compiling every SHARDS-th conformance test
# (tests/cpu/conformance_shard.py): xdist spreads them over its workers, where one 74 s item with a nested
# `-n 2` ran on one worker while the other worker's tests competed for the same 2 cores
SHARDS = 3
PASSED_AT_LEAST = 300     # in all: each shard passes its share, so that together they pass at least this many


@pytest.mark.slow
@pytest.mark.parametrize("shard", range(SHARDS))
def test_conformance_kernels_compile_for_aarch64(tmp_path, shard):
    if cpu_knobs.target_cpu is not None or cpu_knobs.target_features is not None:
        pytest.skip("an x86 ISA level is selected: the aarch64 compile runs once, in the native pass")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_", "TRITIUM_CPU_", "TRITON_", "TRITIUM_"))}
    # -O1 still runs the loop and SLP vectorizers (the code reaches AArch64's vector instruction selection) and
    # costs about two thirds of -O3's compile time
    env.update(TRITIUM_CPU_TRIPLE=TRIPLE, TRITIUM_CPU_COMPILE_ONLY="1", TRITIUM_CPU_OPT_LEVEL="1",
               TRITIUM_HOME=str(tmp_path),
               PYTHONPATH=os.pathsep.join(filter(None, [os.path.dirname(__file__), env.get("PYTHONPATH")])))
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider",
           "-p", "tritium_cpu.compile_only_pytest", "-p", "conformance_shard", f"--shard={shard}/{SHARDS}",
           "--pyargs", "tritium.testing.conformance", "--backend=cpu"]
    run = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1200, cwd=tmp_path)
    tail = "\n".join((run.stdout + run.stderr).splitlines()[-40:])
    assert run.returncode == 0, f"conformance kernels failed to compile for {TRIPLE} (shard {shard}):\n{tail}"
    assert re.search(r"\d+ deselected", run.stdout), f"the run was not a shard of the suite:\n{tail}"
    passed = re.search(r"(\d+) passed", run.stdout)
    assert passed and int(passed.group(1)) >= -(-PASSED_AT_LEAST // SHARDS), tail
