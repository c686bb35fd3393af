"""``sort``, ``topk``, ``bitonic_merge``, ``histogram``, ``swizzle2d``, and the Philox random functions, which must
give Triton's streams bit for bit."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl

from .reference import DTYPES, arg, decode, philox, random, uniform_from_bits


@triton.jit
def _sort_kernel(x_ptr, o_ptr, t_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, DESC: tl.constexpr):
    rm, rn = tl.arange(0, M), tl.arange(0, N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    tl.store(o_ptr + rm[:, None] * N + rn[None, :], tl.sort(x, descending=DESC))
    t = tl.topk(x, K)
    tl.store(t_ptr + rm[:, None] * K + tl.arange(0, K)[None, :], t.to(t_ptr.dtype.element_ty))


_SORT_CASES = [((1, 16), 4, False), ((4, 32), 8, True), ((2, 128), 1, False)]


@pytest.mark.parametrize("dtype,case", [(d, _SORT_CASES[i % 3]) for i, d in enumerate(
    ["int8", "int32", "uint16", "int64", "float16", "bfloat16", "float32", "float64"])] +
    [("float32", c) for c in _SORT_CASES if c != _SORT_CASES[6 % 3]])
def test_sort_topk(backend, rng, dtype, case):
    shape, k, desc = case
    backend.require_dtype(dtype)
    M, N = shape
    x = random(dtype, shape, rng, -100, 100)
    out = np.zeros_like(x)
    top = np.zeros((M, k), x.dtype)
    _sort_kernel[(1, )](arg(x, dtype), arg(out, dtype), arg(top, dtype), M, N, k, desc)
    v = decode(x, dtype)
    s = np.sort(v, axis=1)
    np.testing.assert_array_equal(decode(out, dtype), s[:, ::-1] if desc else s)
    np.testing.assert_array_equal(decode(top, dtype), np.sort(v, axis=1)[:, ::-1][:, :k])


@triton.jit
def _topk_type(x_ptr, N: tl.constexpr, K: tl.constexpr, T: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    t = tl.topk(x, K)
    tl.static_assert(str(t.dtype) == T)
    tl.static_assert(t.shape[0] == K)


@pytest.mark.parametrize("dtype,k,t", [("float16", 4, "fp32"), ("int8", 2, "int32"), ("float32", 16, "fp32")])
def test_topk_result_type(backend, dtype, k, t):
    x = np.zeros(16, DTYPES[dtype].storage)
    _topk_type[(1, )](arg(x, dtype), 16, k, t)


@triton.jit
def _merge_kernel(x_ptr, o_ptr, N: tl.constexpr, DESC: tl.constexpr):
    r = tl.arange(0, N)
    x = tl.load(x_ptr + r)
    tl.store(o_ptr + r, tl.bitonic_merge(x, descending=DESC))


@pytest.mark.parametrize("desc", [False, True])
def test_bitonic_merge(backend, rng, desc):
    N = 64
    a = np.sort(rng.uniform(-1, 1, N // 2)).astype(np.float32)
    b = np.sort(rng.uniform(-1, 1, N // 2)).astype(np.float32)[::-1]
    x = np.concatenate([a, b])                  # increasing then decreasing: bitonic
    out = np.zeros_like(x)
    _merge_kernel[(1, )](x, out, N, desc)
    np.testing.assert_array_equal(out, np.sort(x)[::-1] if desc else np.sort(x))


@triton.jit
def _hist_swizzle(x_ptr, o_ptr, s_ptr, n, N: tl.constexpr, BINS: tl.constexpr):
    r = tl.arange(0, N)
    x = tl.load(x_ptr + r)
    tl.store(o_ptr + tl.arange(0, BINS), tl.histogram(x, BINS))
    tl.store(o_ptr + BINS + tl.arange(0, BINS), tl.histogram(x, BINS, mask=r < n))
    i = r // 8
    j = r % 8
    si, sj = tl.swizzle2d(i, j, N // 8, 8, 3)
    tl.store(s_ptr + r, si * 8 + sj)


def test_histogram_and_swizzle2d(backend, rng):
    N, BINS, n = 64, 16, 40
    x = rng.integers(-3, BINS + 3, N).astype(np.int32)
    out = np.zeros(2 * BINS, np.int32)
    sw = np.zeros(N, np.int32)
    _hist_swizzle[(1, )](x, out, sw, n, N, BINS)
    np.testing.assert_array_equal(out[:BINS], np.bincount(x[(x >= 0) & (x < BINS)], minlength=BINS))
    xs = x[:n]
    np.testing.assert_array_equal(out[BINS:], np.bincount(xs[(xs >= 0) & (xs < BINS)], minlength=BINS))

    def swizzle(i, j, size_i, size_j, size_g):
        ij = i * size_j + j
        group = ij // (size_g * size_j)
        off_i = group * size_g
        g = min(size_i - off_i, size_g)
        ij %= size_g * size_j
        return off_i + ij % g, ij // g

    want = [swizzle(r // 8, r % 8, N // 8, 8, 3) for r in range(N)]
    np.testing.assert_array_equal(sw, [a * 8 + b for a, b in want])
    assert sorted(sw.tolist()) == list(range(N))          # a permutation of the grid


# -- random --------------------------------------------------------------------------------------------

@triton.jit
def _random_kernel(o_ptr, f_ptr, seed, off_base, N: tl.constexpr, ROUNDS: tl.constexpr):
    offs = tl.arange(0, N) + off_base
    a, b, c, d = tl.randint4x(seed, offs, ROUNDS)
    tl.store(o_ptr + tl.arange(0, N), a)
    tl.store(o_ptr + N + tl.arange(0, N), b)
    tl.store(o_ptr + 2 * N + tl.arange(0, N), c)
    tl.store(o_ptr + 3 * N + tl.arange(0, N), d)
    tl.store(o_ptr + 4 * N + tl.arange(0, N), tl.randint(seed, offs, ROUNDS))
    tl.store(f_ptr + tl.arange(0, N), tl.rand(seed, offs, ROUNDS))
    u1, u2, u3, u4 = tl.rand4x(seed, offs, ROUNDS)
    tl.store(f_ptr + N + tl.arange(0, N), u4)
    tl.store(f_ptr + 2 * N + tl.arange(0, N), tl.randn(seed, offs, ROUNDS))
    n1, n2, n3, n4 = tl.randn4x(seed, offs, ROUNDS)
    tl.store(f_ptr + 3 * N + tl.arange(0, N), n3)


@pytest.mark.parametrize("seed,base,rounds", [(0, 0, 10), (12345, 1000, 10), (2**40 + 7, 2**20, 7),
                                              (-5, 0, 10)])
def test_random_streams(backend, seed, base, rounds):
    N = 128
    ints = np.zeros((5, N), np.uint32)
    floats = np.zeros((4, N), np.float32)
    _random_kernel[(1, )](ints, floats, seed, base, N, rounds)
    offs = np.arange(N, dtype=np.int64) + base
    zero = np.zeros(N, np.uint64)
    want = philox(seed, [offs, zero, zero, zero], rounds)
    for k in range(4):
        np.testing.assert_array_equal(ints[k], want[k])
    np.testing.assert_array_equal(ints[4], want[0])
    np.testing.assert_array_equal(floats[0], uniform_from_bits(want[0]))
    np.testing.assert_array_equal(floats[1], uniform_from_bits(want[3]))
    assert floats[:2].min() >= 0 and floats[:2].max() < 1

    def normal(u1, u2, cos):
        u1 = np.maximum(np.float32(1e-7), u1)
        th = np.float32(6.283185307179586) * u2
        r = np.sqrt(np.float32(-2.0) * np.log(u1))
        return r * (np.cos(th) if cos else np.sin(th))

    u = [uniform_from_bits(w) for w in want]
    np.testing.assert_allclose(floats[2], normal(u[0], u[1], True), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(floats[3], normal(u[2], u[3], True), rtol=1e-5, atol=1e-5)


@triton.jit
def _triton_golden(o_ptr, f_ptr, seed, off_base, N: tl.constexpr):
    offs = tl.arange(0, N).to(tl.int64) + off_base
    a, b, c, d = tl.randint4x(seed, offs)
    tl.store(o_ptr + tl.arange(0, N), a)
    tl.store(o_ptr + N + tl.arange(0, N), d)
    tl.store(f_ptr + tl.arange(0, N), tl.rand(seed, offs))
    tl.store(f_ptr + N + tl.arange(0, N), tl.randn(seed, offs))
    c0 = tl.arange(0, N).to(tl.uint64) * 3
    p0, p1, p2, p3 = tl.philox(seed, c0, c0 + 1, c0 + 2, c0 + 3, n_rounds=7)
    tl.store(o_ptr + 2 * N + tl.arange(0, N), p2.to(tl.uint32))


def test_random_matches_triton(backend):
    """Values Triton 3.6 produces for the same calls (64-bit seed, 64-bit offsets, 64-bit philox counters)."""
    ints = np.zeros(24, np.uint32)
    floats = np.zeros(16, np.float32)
    _triton_golden[(1, )](ints, floats, 2**40 + 12345, 2**33 + 7, 8)
    assert ints.tolist() == [
        2152686472, 1292047141, 3342332791, 696073808, 186635961, 3765651185, 968834136, 1922817246,
        3315822142, 1612267945, 2766846337, 403782202, 3959420953, 1382801604, 3852174741, 2244647377,
        818908110, 4163292045, 729825537, 1667656592, 1967315130, 293147725, 2714067250, 3312584773]
    np.testing.assert_array_equal(floats[:8], np.array([
        0.9975771903991699, 0.6016562581062317, 0.443604975938797, 0.32413458824157715, 0.08690913766622543,
        0.2464819997549057, 0.45114850997924805, 0.895381510257721], np.float32))
    np.testing.assert_allclose(floats[8:], [0.06459534913301468, 0.023988915607333183, 0.6855931282043457,
                                            -0.6460170149803162, -1.6234519481658936, 1.5883210897445679,
                                            0.9297451376914978, 0.19915100932121277], rtol=1e-5, atol=1e-6)
