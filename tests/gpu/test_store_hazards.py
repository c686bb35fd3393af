"""A store whose value other threads loaded from the memory it overwrites (shifted copy, in-place transpose, flip,
overlapping descriptor windows) waits for those loads: the GPU lowering puts a CTA barrier before it
(gpu/lower/hazards.py). Without it the transpose raced between warps on real GPUs (the store layout is the load's
transposed, so elements cross warps) and every case raced between the emulator's threads. An in-place update that
each thread loads and stores itself needs, and gets, no barrier."""
from __future__ import annotations

import re

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl


@triton.jit
def shift_up(p, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(p + offs + 1, tl.load(p + offs) * 2)


@triton.jit
def transpose_in_place(r, N: tl.constexpr):
    bp = tl.make_block_ptr(r, (N, N), (N, 1), (0, 0), (N, N), (1, 0))
    tl.store(bp, tl.trans(tl.load(bp)))


@triton.jit
def flip_in_place(q, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(q + offs, tl.flip(tl.load(q + offs), 0))


@triton.jit
def descriptor_window(s, N: tl.constexpr):
    d = tl.make_tensor_descriptor(s, shape=[2 * N], strides=[1], block_shape=[N])
    d.store([N // 2], d.load([0]) + 1)


@triton.jit
def loop_shift(p, N: tl.constexpr, STEPS: tl.constexpr):
    offs = tl.arange(0, N)
    for _ in range(STEPS):
        tl.store(p + offs + 1, tl.load(p + offs) + 1)
        # reading in the next step what other threads stored in this one needs a barrier, in Triton as here: the
        # lowering orders a store after the loads of its own value only
        tl.debug_barrier()


@triton.jit
def scale_in_place(p, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(p + offs)
    tl.store(p + offs, x * 2 + 1)


@triton.jit
def copy_between(p, q, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(q + offs + 1, tl.load(p + offs))


@pytest.mark.parametrize("n,warps", [(16, 1), (16, 4), (64, 2), (256, 4)])
def test_shifted_copy(emulator, n, warps):
    for _ in range(3):         # a race shows up only now and then
        p = np.arange(n + 1, dtype=np.float32)
        want = p.copy()
        want[1:] = 2 * p[:n]
        shift_up[(1, )](p, N=n, num_warps=warps)
        np.testing.assert_array_equal(p, want)


@pytest.mark.parametrize("n,warps", [(16, 4), (32, 4), (16, 1)])
def test_transpose_in_place(emulator, n, warps):
    for _ in range(3):
        r = np.arange(n * n, dtype=np.float32).reshape(n, n)
        want = r.T.copy()
        transpose_in_place[(1, )](r, N=n, num_warps=warps)
        np.testing.assert_array_equal(r, want)


@pytest.mark.parametrize("n,warps", [(16, 4), (128, 2)])
def test_flip_and_descriptor_window(emulator, n, warps):
    for _ in range(3):
        q = np.arange(n, dtype=np.float32)
        want_q = q[::-1].copy()
        flip_in_place[(1, )](q, N=n, num_warps=warps)
        np.testing.assert_array_equal(q, want_q)
        s = np.arange(2 * n, dtype=np.float32)
        want_s = s.copy()
        want_s[n // 2:n // 2 + n] = s[:n] + 1
        descriptor_window[(1, )](s, N=n, num_warps=warps)
        np.testing.assert_array_equal(s, want_s)


def test_shift_in_a_loop(emulator):
    n, steps = 32, 4
    p = np.zeros(n + 1, dtype=np.float32)
    want = p.copy()
    for _ in range(steps):
        want[1:] = want[:n] + 1
    loop_shift[(1, )](p, N=n, STEPS=steps, num_warps=2)
    np.testing.assert_array_equal(p, want)


def _barriers(kernel) -> int:
    body = re.search(r"define void @\w+_kernel\(.*?\n}\n", kernel.asm["llir"], re.S).group(0)
    return body.count("@emu_barrier(")


def test_barrier_only_where_other_threads_read(emulator):
    """Stores that overwrite only what their own thread loaded (an in-place update), or another argument's
    memory, get no barrier; a shifted store through the same argument does."""
    p, q = np.arange(65, dtype=np.float32), np.zeros(65, np.float32)
    assert _barriers(scale_in_place[(1, )](p, N=64, num_warps=2)) == 0
    np.testing.assert_array_equal(p[:64], np.arange(64, dtype=np.float32) * 2 + 1)
    assert _barriers(copy_between[(1, )](p, q, N=64, num_warps=2)) == 0
    assert _barriers(shift_up[(1, )](p, N=64, num_warps=2)) == 1
