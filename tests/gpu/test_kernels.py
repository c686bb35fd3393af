"""Kernels through the GPU lowering (layouts, conversions, reductions, scans, atomics, control flow), each
result checked against numpy, on two devices: the host emulator (always; one OS thread per GPU thread, so
sizes are small) and an NVIDIA GPU (skips without one)."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl



@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@pytest.mark.parametrize("n", [1, 100, 1024])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int8, np.float16])
def test_vector_add(dev, n, dtype):
    rng = np.random.default_rng(0)
    x = (rng.random(n) * 100).astype(dtype)
    y = (rng.random(n) * 100).astype(dtype)
    out = dev.put(np.zeros_like(x))
    add_kernel[(triton.cdiv(n, 512), )](dev.put(x), dev.put(y), out, n, BLOCK=512)
    np.testing.assert_array_equal(dev.get(out), x + y)


@triton.jit
def reduce_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr, OP: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rows * N + cols)
    if OP == "sum":
        r = tl.sum(x, axis=AXIS)
    elif OP == "max":
        r = tl.max(x, axis=AXIS)
    elif OP == "min":
        r = tl.min(x, axis=AXIS)
    elif OP == "argmax":
        r = tl.argmax(x, axis=AXIS)
    else:
        r = tl.argmin(x, axis=AXIS)
    if AXIS == 0:
        tl.store(out_ptr + tl.arange(0, N), r)
    else:
        tl.store(out_ptr + tl.arange(0, M), r)


@pytest.mark.parametrize("op", ["sum", "max", "argmax", "argmin"])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("shape", [(16, 32), (64, 8), (4, 256)])
def test_reductions(dev, op, axis, shape):
    M, N = shape
    x = np.random.default_rng(1).standard_normal((M, N)).astype(np.float32)
    ref = {"sum": np.sum, "max": np.max, "min": np.min, "argmax": np.argmax, "argmin": np.argmin}[op](x, axis=axis)
    out = dev.put(np.zeros(ref.shape, dtype=np.int32 if op.startswith("arg") else np.float32))
    reduce_kernel[(1, )](dev.put(x), out, M, N, axis, op)
    np.testing.assert_allclose(dev.get(out), ref, rtol=1e-5, atol=1e-5)


@triton.jit
def softmax_kernel(x_ptr, y_ptr, stride, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + row * stride + offs, mask=m, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(y_ptr + row * stride + offs, e / tl.sum(e, axis=0), mask=m)


@pytest.mark.parametrize("num_warps", [1, 4])
def test_softmax(dev, num_warps):
    x = np.random.default_rng(2).standard_normal((3, 300)).astype(np.float32)
    y = dev.put(np.zeros_like(x))
    softmax_kernel[(3, )](dev.put(x), y, 300, 300, BLOCK=512, num_warps=num_warps)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(dev.get(y), e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)


def test_emulated_registers_and_device_properties(emulator):
    """What tutorial 02 sizes its persistent grid from: the device's properties, and registers per thread that
    the emulator estimates from the layouts (it has no register allocator of its own): more for a bigger tile
    per thread, capped at 255 with the rest reported as spills."""
    from tritium.backends.driver import DriverBase
    from tritium.runtime.driver import driver
    props = driver.active.utils.get_device_properties(driver.active.get_current_device())
    assert props["warpSize"] == 32 and props["multiprocessor_count"] >= 1
    assert props["max_num_regs"] == 65536 and props["max_shared_mem"] > 0
    x = np.zeros((3, 300), np.float32)
    figures = {}
    for block in (512, 1024, 8192):   # 16, 32 and 256 elements per thread with one warp
        k = softmax_kernel.warmup(x, x, 300, 300, BLOCK=block, num_warps=1, grid=(3, ))
        k._init_handles()
        figures[block] = (k.n_regs, k.n_spills)
    assert 16 * 2 <= figures[512][0] < figures[1024][0] < 255 and figures[512][1] == figures[1024][1] == 0
    assert figures[8192][0] == 255 and figures[8192][1] > 0
    # a driver that cannot describe its device says so instead of failing with an AttributeError
    with pytest.raises(NotImplementedError, match="size the launch grid by hand"):
        DriverBase.utils.fget(driver.active).get_device_properties()


@triton.jit
def loop_kernel(x_ptr, out_ptr, n_iter, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, ), dtype=tl.float32)
    total = 0.0
    i = 0
    for k in range(n_iter):
        v = tl.load(x_ptr + k * BLOCK + offs)
        acc += v
        if k % 2 == 0:
            total += tl.sum(v, axis=0)
    while i < 3:
        acc = acc * 2.0
        i += 1
    tl.store(out_ptr + offs, acc)
    tl.store(out_ptr + BLOCK, total)


def test_control_flow(dev):
    n_iter, B = 5, 64
    x = np.random.default_rng(2).standard_normal((n_iter, B)).astype(np.float32)
    out = dev.put(np.zeros(B + 1, np.float32))
    loop_kernel[(1, )](dev.put(x), out, n_iter, BLOCK=B)
    out = dev.get(out)
    np.testing.assert_allclose(out[:B], x.sum(0) * 8, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out[B], x[::2].sum(), rtol=1e-4, atol=1e-4)


@triton.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    c = tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], c)


@pytest.mark.parametrize("shape", [(16, 16, 16), (32, 64, 16)])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_dot(dev, shape, dtype):
    M, N, K = shape
    rng = np.random.default_rng(3)
    a = rng.standard_normal((M, K)).astype(dtype)
    b = rng.standard_normal((K, N)).astype(dtype)
    c = dev.put(np.zeros((M, N), np.float32))
    dot_kernel[(1, )](dev.put(a), dev.put(b), c, M, N, K)
    np.testing.assert_allclose(dev.get(c), a.astype(np.float64) @ b.astype(np.float64), rtol=1e-2, atol=1e-2)


@triton.jit
def transpose_kernel(x_ptr, y_ptr, M: tl.constexpr, N: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    tl.store(y_ptr + rn[None, :] * M + rm[:, None], x)


def test_transpose_store(dev):
    x = np.arange(32 * 64, dtype=np.float32).reshape(32, 64)
    y = dev.put(np.zeros((64, 32), np.float32))
    transpose_kernel[(1, )](dev.put(x), y, 32, 64)
    np.testing.assert_array_equal(dev.get(y), x.T)


@triton.jit
def shapes_kernel(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    a, b = tl.split(tl.reshape(x, (N // 2, 2)))
    j = tl.join(b, a)                      # swap pairs
    t = tl.trans(tl.reshape(j, (N // 8, 8)))
    tl.store(out_ptr + tl.arange(0, N // 8)[None, :] * 8 + tl.arange(0, 8)[:, None], t)
    c = tl.cat(a, b, can_reorder=False)
    tl.store(out_ptr + N + tl.arange(0, N), c)


def test_shape_ops(dev):
    N = 64
    x = np.arange(N, dtype=np.float32)
    out = dev.put(np.zeros(2 * N, np.float32))
    shapes_kernel[(1, )](dev.put(x), out, N)
    out = dev.get(out)
    pairs = x.reshape(N // 2, 2)
    np.testing.assert_array_equal(out[:N], pairs[:, ::-1].reshape(-1))
    np.testing.assert_array_equal(out[N:], np.concatenate([pairs[:, 0], pairs[:, 1]]))


@triton.jit
def scan_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr, REV: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.cumsum(x, axis=AXIS, reverse=REV))


@pytest.mark.parametrize("shape", [(4, 256), (64, 4), (1, 1024)])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("rev", [False, True])
def test_cumsum(dev, shape, axis, rev):
    M, N = shape
    x = np.random.default_rng(4).integers(-5, 5, shape).astype(np.int32)
    out = dev.put(np.zeros_like(x))
    scan_kernel[(1, )](dev.put(x), out, M, N, axis, rev)
    ref = np.flip(np.cumsum(np.flip(x, axis), axis), axis) if rev else np.cumsum(x, axis)
    np.testing.assert_array_equal(dev.get(out), ref)


@triton.jit
def atomic_kernel(x_ptr, sum_ptr, hist_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0)
    tl.atomic_add(sum_ptr, tl.sum(x, axis=0))
    tl.atomic_add(hist_ptr + (x % 8), 1, mask=m)


def test_atomics(dev):
    n = 1000
    x = np.random.default_rng(5).integers(0, 100, n).astype(np.int32)
    s = dev.put(np.zeros(1, np.int32))
    h = dev.put(np.zeros(8, np.int32))
    atomic_kernel[(triton.cdiv(n, 256), )](dev.put(x), s, h, n, BLOCK=256)
    s, h = dev.get(s), dev.get(h)
    assert s[0] == x.sum()
    np.testing.assert_array_equal(h, np.bincount(x % 8, minlength=8))


@triton.jit
def gather_sort_kernel(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.sort(x))
    tl.store(out_ptr + N + offs, tl.gather(x, (N - 1) - offs, 0))
    tl.store(out_ptr + 2 * N + offs, tl.histogram(x % N, N))


def test_gather_sort_histogram(dev):
    N = 128
    x = np.random.default_rng(6).integers(0, 1000, N).astype(np.int32)
    out = dev.put(np.zeros(3 * N, np.int32))
    gather_sort_kernel[(1, )](dev.put(x), out, N)
    out = dev.get(out)
    np.testing.assert_array_equal(out[:N], np.sort(x))
    np.testing.assert_array_equal(out[N:2 * N], x[::-1])
    np.testing.assert_array_equal(out[2 * N:], np.bincount(x % N, minlength=N))


@triton.jit
def math_kernel(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.exp(x) + tl.log(x + 2.0) * tl.sqrt(x + 2.0) - tl.sin(x) * tl.cos(x))
    tl.store(out_ptr + N + offs, (x * 100).to(tl.int32).to(tl.float32))
    tl.store(out_ptr + 2 * N + offs, tl.floor(tl.where(x > 0, x, -x) * 4.0))


def test_math(dev):
    N = 256
    x = np.random.default_rng(7).uniform(-1, 1, N).astype(np.float32)
    out = dev.put(np.zeros(3 * N, np.float32))
    math_kernel[(1, )](dev.put(x), out, N)
    out = dev.get(out)
    ref = np.exp(x) + np.log(x + 2) * np.sqrt(x + 2) - np.sin(x) * np.cos(x)
    np.testing.assert_allclose(out[:N], ref, rtol=2e-5, atol=2e-5)
    np.testing.assert_array_equal(out[N:2 * N], np.trunc(x * 100))
    np.testing.assert_array_equal(out[2 * N:], np.floor(np.abs(x) * 4))


@triton.jit
def print_kernel(x_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.device_print("x: ", x)


def test_device_print(dev, capfd):
    x = np.arange(8, dtype=np.int32) * 3
    print_kernel[(1, )](dev.put(x), 8)
    dev.sync()
    out = capfd.readouterr().out
    lines = sorted(line for line in out.splitlines() if "x: " in line)
    assert len(lines) == 8, out
    assert "pid (0, 0, 0) idx (7) x: 21" in out


@triton.jit
def assert_kernel(x_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.device_assert(x < 5, "x too big")


def test_device_assert(dev):
    x = np.arange(8, dtype=np.int32)
    with pytest.raises(AssertionError, match="x too big"):
        assert_kernel[(1, )](dev.put(x), 8, debug=True)
        dev.sync()


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < K - k * BLOCK_K), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < K - k * BLOCK_K) & (offs_n[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@pytest.mark.parametrize("stages", [1, 3])
@pytest.mark.parametrize("dtype,trans_a,blocks", [(np.float16, False, (32, 32, 16)), (np.float16, True, (32, 32, 16)),
                                                  (np.float32, False, (32, 32, 16)), (np.float16, False, (64, 128, 64)),
                                                  (np.float16, True, (64, 128, 128))])
def test_matmul_loop(dev, stages, dtype, trans_a, blocks):
    M, N, K = 64, 48, 80
    BM, BN, BK = blocks
    rng = np.random.default_rng(8)
    a = rng.standard_normal((K, M) if trans_a else (M, K)).astype(dtype)
    b = rng.standard_normal((K, N)).astype(dtype)
    c = dev.put(np.zeros((M, N), np.float32))
    sam, sak = (1, M) if trans_a else (K, 1)
    matmul_kernel[(triton.cdiv(M, BM), triton.cdiv(N, BN))](dev.put(a), dev.put(b), c, M, N, K, sam, sak, N, 1, N, 1,
                                                            BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, num_stages=stages)
    ref = (a.T if trans_a else a).astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(dev.get(c), ref, rtol=1e-2, atol=1e-2)
