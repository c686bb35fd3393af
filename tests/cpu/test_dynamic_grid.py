"""A multi-threaded CPU launch hands out programs in chunks from a shared counter (codegen/module.py), so one
slow program does not hold back the programs a fixed split would have queued behind it on the same thread.

Program 0 waits (bounded) until more than half of the other programs have finished. With a split fixed in
advance its thread owned the first half of the grid, so at most half could finish meanwhile and the wait ran
out; with chunks the other thread takes everything but program 0's own chunk."""
from __future__ import annotations

import numpy as np

import tritium as triton
import tritium.language as tl
from tritium import knobs
from tritium_cpu.knobs import cpu as cpu_knobs


@triton.jit
def _wait_for_others(done_ptr, seen_ptr, out_ptr, target, limit):
    pid = tl.program_id(0)
    if pid == 0:
        i = 0
        seen = tl.atomic_add(done_ptr, 0)
        while (seen < target) & (i < limit):
            seen = tl.atomic_add(done_ptr, 0)
            i += 1
        tl.store(seen_ptr, seen)
    else:
        tl.atomic_add(done_ptr, 1)
    tl.store(out_ptr + pid, pid * 2 + 1)


def test_a_blocked_program_does_not_hold_back_the_rest_of_its_half():
    n = 64
    done = np.zeros(1, np.int32)
    seen = np.zeros(1, np.int32)
    out = np.zeros(n, np.int32)
    with knobs.scope():
        knobs.runtime.num_threads = 2
        cpu_knobs.parallel_threshold = 0
        _wait_for_others[(n, )](done, seen, out, n // 2 + 1, 1 << 28)
    np.testing.assert_array_equal(out, np.arange(n) * 2 + 1)
    assert done[0] == n - 1
    assert seen[0] >= n // 2 + 1, seen[0]


def test_every_program_runs_once_at_any_thread_count():
    for threads in (1, 2, 3, 7):
        for n in (1, 2, 5, 17, 100, 1000):
            counts = np.zeros(n, np.int32)
            with knobs.scope():
                knobs.runtime.num_threads = threads
                cpu_knobs.parallel_threshold = 0
                _count[(n, )](counts)
            np.testing.assert_array_equal(counts, np.ones(n, np.int32), err_msg=f"{threads} threads, {n} programs")


@triton.jit
def _count(c_ptr):
    tl.atomic_add(c_ptr + tl.program_id(0), 1)
