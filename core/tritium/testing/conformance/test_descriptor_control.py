"""Tensor descriptors as values of run-time control flow: reassigned in an ``if``, carried through ``for`` and
``while`` loops, returned from a branch of a device function, for descriptors a kernel makes and host
``TensorDescriptor`` arguments. The descriptor keeps its shape and strides through the branch or loop (bounds
checks use the chosen descriptor's shape) and stays a ``tl.tensor_descriptor``."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium.tools.tensor_descriptor import TensorDescriptor


@triton.jit
def _pick_in_if(x_ptr, y_ptr, o_ptr, MX, MY, N, flag, BM: tl.constexpr, BN: tl.constexpr):
    d = tl.make_tensor_descriptor(x_ptr, [MX, N], [N, 1], [BM, BN])
    if flag > 0:
        d = tl.make_tensor_descriptor(y_ptr, [MY, N], [N, 1], [BM, BN])
    tl.static_assert(isinstance(d, tl.tensor_descriptor))
    out = tl.make_tensor_descriptor(o_ptr, [BM, BN], [BN, 1], [BM, BN])
    # rows past the chosen tensor's shape read as zero; its shape entry is the carried one
    out.store([0, 0], d.load([0, 0]) + d.shape[0].to(tl.float32))


@pytest.mark.parametrize("flag", [-3, 2])
def test_descriptor_reassigned_in_if(backend, flag):
    MX, MY, N, BM, BN = 3, 5, 8, 8, 8
    x = np.arange(MX * N, dtype=np.float32).reshape(MX, N) + 1
    y = -np.arange(MY * N, dtype=np.float32).reshape(MY, N) - 1
    out = np.full((BM, BN), 99, dtype=np.float32)
    _pick_in_if[(1, )](x, y, out, MX, MY, N, flag, BM, BN)
    src, rows = (y, MY) if flag > 0 else (x, MX)
    want = np.zeros((BM, BN), dtype=np.float32)
    want[:rows] = src
    np.testing.assert_array_equal(out, want + rows)


@triton.jit
def _loop_carried(a_ptr, b_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    pm = tl.program_id(0) * BM
    cur = tl.make_tensor_descriptor(a_ptr, [M, N], [N, 1], [BM, BN])
    nxt = tl.make_tensor_descriptor(b_ptr, [M, N], [N, 1], [BM, BN])
    for j in range(0, N, BN):
        # ping-pong: even column blocks go a -> b, odd ones b -> a
        nxt.store([pm, j], cur.load([pm, j]) + 1)
        cur, nxt = nxt, cur
    k = 0
    while k < N:
        if k // BN == 2:
            cur = tl.make_tensor_descriptor(b_ptr, [M, N], [N, 1], [BM, BN])
        tl.static_assert(isinstance(cur, tl.tensor_descriptor))
        cur.store([pm, k], cur.load([pm, k]) * 2)
        k += BN


def test_descriptor_carried_through_loops(backend, rng):
    M, N, BM, BN = 12, 64, 8, 16
    a = rng.integers(-50, 50, (M, N)).astype(np.float32)
    b = rng.integers(-50, 50, (M, N)).astype(np.float32)
    a0, b0 = a.copy(), b.copy()
    _loop_carried[(triton.cdiv(M, BM), )](a, b, M, N, BM, BN)
    wa, wb = a0.copy(), b0.copy()
    for j in range(0, N, BN):
        if (j // BN) % 2 == 0:
            wb[:, j:j + BN] = wa[:, j:j + BN] + 1
        else:
            wa[:, j:j + BN] = wb[:, j:j + BN] + 1
    # after the for loop (an even number of blocks) cur is a; the while loop switches it to b at block 2
    for k in range(0, N, BN):
        (wa if k // BN < 2 else wb)[:, k:k + BN] *= 2
    np.testing.assert_array_equal(a, wa)
    np.testing.assert_array_equal(b, wb)


@triton.jit
def _host_swap(src, dst, o_ptr, steps, BM: tl.constexpr, BN: tl.constexpr):
    for _ in range(steps):
        src, dst = dst, src
    v = src.load([0, 0])
    out = tl.make_tensor_descriptor(o_ptr, [BM, BN], [BN, 1], [BM, BN])
    out.store([0, 0], v + src.shape[1].to(tl.float32))


@pytest.mark.parametrize("steps", [0, 3])
def test_host_descriptor_carried_through_loop(backend, steps):
    BM, BN = 4, 8
    x = np.arange(4 * 8, dtype=np.float32).reshape(4, 8)
    y = 100 + np.arange(4 * 4, dtype=np.float32).reshape(4, 4)
    out = np.zeros((BM, BN), dtype=np.float32)
    _host_swap[(1, )](TensorDescriptor(x, [4, 8], [8, 1], [BM, BN]),
                      TensorDescriptor(y, [4, 4], [4, 1], [BM, BN]), out, steps, BM, BN)
    if steps % 2:
        want = np.zeros((BM, BN), dtype=np.float32)
        want[:, :4] = y
        np.testing.assert_array_equal(out, want + 4)
    else:
        np.testing.assert_array_equal(out, x + 8)


@triton.jit
def _choose(x_ptr, y_ptr, n, flag, BN: tl.constexpr):
    if flag > 0:
        return tl.make_tensor_descriptor(y_ptr, [n], [1], [BN])
    return tl.make_tensor_descriptor(x_ptr, [n], [1], [BN])


@triton.jit
def _returned_from_branch(x_ptr, y_ptr, n, flag, BN: tl.constexpr):
    d = _choose(x_ptr, y_ptr, n, flag, BN)
    d.store([0], d.load([0]) * 3)


@pytest.mark.parametrize("flag", [-3, 2])
def test_descriptor_returned_from_a_branch(backend, flag):
    x = np.arange(16, dtype=np.float32)
    y = np.arange(16, dtype=np.float32) + 50
    x0, y0 = x.copy(), y.copy()
    _returned_from_branch[(1, )](x, y, 16, flag, 16)
    np.testing.assert_array_equal(y, y0 * 3 if flag > 0 else y0)
    np.testing.assert_array_equal(x, x0 if flag > 0 else x0 * 3)


@triton.jit
def _mismatched_blocks(x_ptr, n, flag):
    d = tl.make_tensor_descriptor(x_ptr, [n], [1], [16])
    if flag > 0:
        d = tl.make_tensor_descriptor(x_ptr, [n], [1], [32])
    d.store([0], d.load([0]))


def test_descriptor_block_mismatch_in_if_is_refused(backend):
    from tritium import knobs
    if knobs.runtime.interpret:
        pytest.skip("the interpreter runs one branch of a run-time if: it has no branch types to compare")
    x = np.zeros(32, dtype=np.float32)
    with pytest.raises(triton.CompilationError, match="Mismatched type for d"):
        _mismatched_blocks[(1, )](x, 32, 2)


@triton.jit
def _nan_padded_through_loop(x_ptr, o_ptr, n, steps, BN: tl.constexpr):
    d = tl.make_tensor_descriptor(x_ptr, [n], [1], [BN], padding_option="nan")
    for _ in range(steps):
        d = tl.make_tensor_descriptor(x_ptr, [n], [1], [BN], padding_option="nan")
    out = tl.make_tensor_descriptor(o_ptr, [BN], [1], [BN])
    out.store([0], d.load([0]))


def test_descriptor_padding_survives_a_loop(backend):
    x = np.arange(16, dtype=np.float32)
    out = np.zeros(32, dtype=np.float32)
    _nan_padded_through_loop[(1, )](x, out, 16, 3, 32)
    np.testing.assert_array_equal(out[:16], x)
    assert np.isnan(out[16:]).all()


@triton.jit
def _mixed_padding(x_ptr, n, flag):
    d = tl.make_tensor_descriptor(x_ptr, [n], [1], [16])
    if flag > 0:
        d = tl.make_tensor_descriptor(x_ptr, [n], [1], [16], padding_option="nan")
    d.store([0], d.load([0]))


def test_descriptor_padding_mismatch_in_if_is_refused(backend):
    from tritium import knobs
    if knobs.runtime.interpret:
        pytest.skip("the interpreter runs one branch of a run-time if: it has no branch types to compare")
    x = np.zeros(32, dtype=np.float32)
    with pytest.raises(triton.CompilationError, match="Mismatched type for d.*padding_option='nan'"):
        _mixed_padding[(1, )](x, 32, 2)


@triton.jit
def _pick_one_of_two(x_ptr, y_ptr, n, flag, HOW: tl.constexpr, BN: tl.constexpr):
    # a choice between two values made before it: MLIR folds such an scf.if into arith.select
    if HOW == "desc-ternary":
        a = tl.make_tensor_descriptor(x_ptr, [n], [1], [BN])
        b = tl.make_tensor_descriptor(y_ptr, [n // 2], [1], [BN])
        d = a if flag > 0 else b
        d.store([0], d.load([0]) + 1)
    elif HOW == "desc-if":
        a = tl.make_tensor_descriptor(x_ptr, [n], [1], [BN])
        d = tl.make_tensor_descriptor(y_ptr, [n // 2], [1], [BN])
        if flag > 0:
            d = a
        d.store([0], d.load([0]) + 1)
    else:
        a = tl.make_block_ptr(x_ptr, [n], [1], [0], [BN], [0])
        b = tl.make_block_ptr(y_ptr, [n // 2], [1], [0], [BN], [0])
        p = a if flag > 0 else b
        tl.store(p, tl.load(p, boundary_check=(0, )) + 1, boundary_check=(0, ))


@pytest.mark.parametrize("how", ["desc-ternary", "desc-if", "block-ptr-ternary"])
@pytest.mark.parametrize("flag", [-3, 2])
def test_choice_between_two_descriptors(backend, how, flag):
    x = np.arange(16, dtype=np.float32)
    y = np.arange(16, dtype=np.float32) + 50
    x0, y0 = x.copy(), y.copy()
    _pick_one_of_two[(1, )](x, y, 16, flag, how, 16)
    wx, wy = x0.copy(), y0.copy()
    if flag > 0:
        wx += 1
    else:
        wy[:8] += 1  # y's descriptor is 8 long: the rest is neither read nor written
    np.testing.assert_array_equal(x, wx)
    np.testing.assert_array_equal(y, wy)


@triton.jit
def _tuples_carried(x_ptr, y_ptr, o_ptr, n, steps, flag, BN: tl.constexpr):
    # a tuple of two descriptors and a dtype: the descriptors swap each iteration, the dtype stays
    t = (tl.make_tensor_descriptor(x_ptr, [n], [1], [BN]), tl.make_tensor_descriptor(y_ptr, [n], [1], [BN]),
         tl.float32)
    for _ in range(steps):
        a, b, dt = t
        b.store([0], a.load([0]).to(dt) + 1)
        t = (b, a, dt)
    t[0].store([0], t[0].load([0]) * 10)
    # a tuple of numbers and a block reassigned in an if, then carried through a while loop
    s = (0, tl.zeros([BN], tl.float32))
    if flag > 0:
        s = (s[0] + 5, s[1] + 2)
    while s[0] < 8:
        s = (s[0] + 1, s[1] + 1)
    tl.store(o_ptr + tl.arange(0, BN), s[1] + s[0])


@pytest.mark.parametrize("flag", [-3, 2])
def test_tuples_carried(backend, flag):
    x = np.zeros(16, dtype=np.float32)
    y = np.zeros(16, dtype=np.float32)
    out = np.zeros(16, dtype=np.float32)
    _tuples_carried[(1, )](x, y, out, 16, 3, flag, 16)
    # steps: y = x + 1 = 1, x = y + 1 = 2, y = x + 1 = 3; then t[0] is y
    np.testing.assert_array_equal(x, np.full(16, 2, np.float32))
    np.testing.assert_array_equal(y, np.full(16, 30, np.float32))
    # flag > 0: (5, 2) then 3 iterations -> (8, 5); otherwise (0, 0) then 8 iterations -> (8, 8)
    np.testing.assert_array_equal(out, np.full(16, 13 if flag > 0 else 16, np.float32))


@triton.jit
def _mix_with_param(d, x_ptr, n, flag):
    if flag > 0:
        d = tl.make_tensor_descriptor(x_ptr, [n], [1], [16])
    d.store([0], d.load([0]))


@triton.jit
def _padding_into_a_function(x_ptr, n, flag):
    _mix_with_param(tl.make_tensor_descriptor(x_ptr, [n], [1], [16], padding_option="nan"), x_ptr, n, flag)


def test_descriptor_padding_mismatch_in_a_device_function_is_refused(backend):
    from tritium import knobs
    if knobs.runtime.interpret:
        pytest.skip("the interpreter runs one branch of a run-time if: it has no branch types to compare")
    x = np.zeros(32, dtype=np.float32)
    with pytest.raises(triton.CompilationError, match="Mismatched type for d"):
        _padding_into_a_function[(1, )](x, 32, 2)
