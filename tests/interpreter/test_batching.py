"""Programs run as vectorized batches; where they disagree on control flow the batch is undone and split.
Every result must equal running the programs one at a time, in order."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium import knobs
from tritium.interpreter import launcher


@pytest.fixture
def executions(monkeypatch):
    """How many times the kernel's Python code ran in the last launch."""
    count = [0]
    original = launcher.Launch._run_batch

    def counting(self, progs, kernel_args):
        count[0] += 1
        return original(self, progs, kernel_args)
    monkeypatch.setattr(launcher.Launch, "_run_batch", counting)
    return count


def _both_ways(kernel, grid, *args, **kw):
    """(batched result arrays, one-at-a-time result arrays)."""
    results = []
    for batch in (True, False):
        copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        with knobs.interpreter.scope():
            knobs.interpreter.batch = batch
            kernel[grid](*copies, **kw)
        results.append([c for c in copies if isinstance(c, np.ndarray)])
    return results


@triton.jit
def _axpy(x_ptr, y_ptr, n, a, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, a * tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


def test_a_uniform_kernel_runs_the_whole_grid_in_one_execution(interpret, executions):
    x = np.arange(256 * 64, dtype=np.float32)
    y = np.ones_like(x)
    _axpy[(256, )](x, y, x.size, 2.0, BLOCK=64)   # first launch: a probe batch learns the tile size
    executions[0] = 0
    y[:] = 1
    _axpy[(256, )](x, y, x.size, 2.0, BLOCK=64)
    assert executions[0] == 1
    np.testing.assert_array_equal(y, 2 * x + 1)


@triton.jit
def _divergent(x_ptr, o_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(o_ptr + offs, x)                 # a write before the programs part ways: undone, then redone
    if pid % 3 == 0:
        x = x * 2
    elif pid % 3 == 1:
        x = -x
    acc = tl.zeros((BLOCK, ), tl.float32)
    for _ in range(pid):                      # a trip count per program
        acc += x
    tl.store(o_ptr + offs, acc + x)


def test_divergent_programs_match_one_at_a_time(interpret):
    x = np.random.default_rng(0).standard_normal(12 * 16).astype(np.float32)
    batched, single = _both_ways(_divergent, (12, ), x, np.zeros_like(x), BLOCK=16)
    np.testing.assert_array_equal(batched[1], single[1])
    xs = x.reshape(12, 16)
    ref = np.stack([(p + 1) * {0: 2 * xs[p], 1: -xs[p], 2: xs[p]}[p % 3] for p in range(12)])
    np.testing.assert_allclose(batched[1].reshape(12, 16), ref, rtol=1e-6)


@triton.jit
def _tickets(counter_ptr, out_ptr):
    t = tl.atomic_add(counter_ptr, 1)
    tl.store(out_ptr + tl.program_id(0), t)


def test_atomics_act_in_program_order(interpret):
    counter, out = np.zeros(1, np.int32), np.zeros(100, np.int32)
    _tickets[(100, )](counter, out)
    assert counter[0] == 100
    np.testing.assert_array_equal(out, np.arange(100))


@triton.jit
def _spin_lock(lock_ptr, count_ptr, order_ptr):
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    c = tl.load(count_ptr)
    tl.store(order_ptr + c, tl.program_id(0))
    tl.store(count_ptr, c + 1)
    tl.atomic_xchg(lock_ptr, 0)


def test_a_spin_lock_works(interpret):
    lock, count, order = np.zeros(1, np.int32), np.zeros(1, np.int32), np.full(24, -1, np.int32)
    _spin_lock[(24, )](lock, count, order)
    assert count[0] == 24 and lock[0] == 0
    assert sorted(order.tolist()) == list(range(24))


@triton.jit
def _last_block_reduces(x_ptr, partial_ptr, count_ptr, out_ptr, BLOCK: tl.constexpr, PROGRAMS: tl.constexpr):
    pid = tl.program_id(0)
    tl.store(partial_ptr + pid, tl.sum(tl.load(x_ptr + pid * BLOCK + tl.arange(0, BLOCK)), 0))
    ticket = tl.atomic_add(count_ptr, 1)
    if ticket == PROGRAMS - 1:                # the last program to arrive sums the partial sums
        tl.store(out_ptr, tl.sum(tl.load(partial_ptr + tl.arange(0, PROGRAMS)), 0))


def test_the_last_block_pattern(interpret):
    x = np.random.default_rng(1).standard_normal(16 * 32).astype(np.float32)
    partial, count, out = np.zeros(16, np.float32), np.zeros(1, np.int32), np.zeros(1, np.float32)
    _last_block_reduces[(16, )](x, partial, count, out, BLOCK=32, PROGRAMS=16)
    assert count[0] == 16
    np.testing.assert_allclose(out[0], x.sum(), rtol=1e-5)


@triton.jit
def _histogram(x_ptr, bins_ptr, BLOCK: tl.constexpr):
    v = tl.load(x_ptr + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK))
    tl.atomic_add(bins_ptr + v, 1)


def test_colliding_atomics_across_programs(interpret):
    x = np.random.default_rng(2).integers(0, 10, 64 * 128).astype(np.int32)
    bins = np.zeros(10, np.int32)
    _histogram[(64, )](x, bins, BLOCK=128)
    np.testing.assert_array_equal(bins, np.bincount(x, minlength=10))


def test_large_grids_run_in_several_batches(interpret, executions):
    x = np.arange(4096 * 1024, dtype=np.float32)
    y = np.zeros_like(x)
    _axpy[(4096, )](x, y, x.size, 1.0, BLOCK=1024)
    assert executions[0] > 1                    # batches are capped at about 4M elements per tile
    np.testing.assert_array_equal(y, x)


@triton.jit
def _two_d(out_ptr, BM: tl.constexpr, BN: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    val = rm[:, None] * 1000 + rn[None, :] + tl.num_programs(1) * 0
    tl.store(out_ptr + rm[:, None] * (BN * tl.num_programs(1)) + rn[None, :], val)


def test_two_dimensional_grids(interpret):
    out = np.zeros((4 * 8, 3 * 16), np.int32)
    _two_d[(4, 3)](out, BM=8, BN=16)
    r, c = np.meshgrid(np.arange(32), np.arange(48), indexing="ij")
    np.testing.assert_array_equal(out, r * 1000 + c)


@triton.jit
def _aliased(a_ptr, b_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(b_ptr + offs, tl.load(a_ptr + offs) + 1)
    tl.store(a_ptr + offs, tl.load(b_ptr + offs) * 10)
    if pid % 2 == 0:                     # the programs part ways after writing through both arguments
        tl.store(a_ptr + offs, tl.load(a_ptr + offs) + 5)


def test_undoing_writes_through_arguments_that_share_memory(interpret):
    x = np.arange(8, dtype=np.float32)
    _aliased[(4, )](x, x, BLOCK=2)       # in place: both pointers address x
    np.testing.assert_array_equal(x, (np.arange(8) + 1) * 10 + np.where((np.arange(8) // 2) % 2 == 0, 5, 0))
