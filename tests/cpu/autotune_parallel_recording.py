"""A kernel module for test_autotune_parallel.py that notes, whenever a process imports it, that process's
knobs.autotuning.compile_workers (in the file named by $TRITIUM_TEST_IMPORT_LOG): a module that tunes
kernels when imported must not make a compile worker start workers of its own."""
from __future__ import annotations

import os

import tritium as triton
import tritium.language as tl
from tritium import knobs

if os.environ.get("TRITIUM_TEST_IMPORT_LOG"):
    with open(os.environ["TRITIUM_TEST_IMPORT_LOG"], "a") as f:
        f.write(f"{os.getpid()} {knobs.autotuning.compile_workers}\n")


@triton.autotune([triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})], key=["n"], warmup=1, rep=3)
@triton.jit
def twice(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)
