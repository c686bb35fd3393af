"""The target-neutral GPU lowering run for real at AMD's warp size: the host emulator executes kernels lowered with
64-lane warps (``warp_size=64``), so cross-lane reductions and scans (shuffles over 64 lanes), layout conversions
through shared memory and dot products' data movement are checked numerically, not only compiled for gfx9."""
from __future__ import annotations

import importlib.util
import os
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WS = 64


def _gpu_kernels():
    path = os.path.join(ROOT, "tests", "gpu", "test_kernels.py")
    spec = importlib.util.spec_from_file_location("_wave64_gpu_kernels", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


K = _gpu_kernels()


def run(kernel, grid, *args, **kwargs):
    """Launch on the emulator and make sure the kernel really was lowered with 64-lane warps."""
    compiled = kernel[grid](*args, **kwargs)
    assert compiled.metadata_dict["warp_size"] == kwargs.get("warp_size", 32)
    return compiled


def test_kernels_are_lowered_with_64_lane_warps(emulator64):
    x = np.arange(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    k = run(K.add_kernel, (1, ), x, x, out, 64, BLOCK=64, num_warps=1, warp_size=WS)
    assert "ttg.threads_per_warp = 64" in k.asm["ttgir"]
    assert k.metadata_dict["warp_size"] == 64
    np.testing.assert_array_equal(out, 2 * x)


@pytest.mark.parametrize("op", ["sum", "max", "argmax", "argmin"])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("shape", [(16, 32), (4, 256), (64, 8)])
def test_reductions(emulator64, op, axis, shape):
    M, N = shape
    x = np.random.default_rng(1).standard_normal((M, N)).astype(np.float32)
    ref = {"sum": np.sum, "max": np.max, "argmax": np.argmax, "argmin": np.argmin}[op](x, axis=axis)
    out = np.zeros(ref.shape, dtype=np.int32 if op.startswith("arg") else np.float32)
    run(K.reduce_kernel, (1, ), x, out, M, N, axis, op, warp_size=WS)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape,axis", [((4, 256), 1), ((64, 4), 0), ((1, 1024), 1)])
@pytest.mark.parametrize("rev", [False, True])
def test_cumsum(emulator64, shape, axis, rev):
    M, N = shape
    x = np.random.default_rng(3).integers(-50, 50, (M, N)).astype(np.int32)
    out = np.zeros_like(x)
    run(K.scan_kernel, (1, ), x, out, M, N, axis, rev, warp_size=WS)
    ref = np.flip(np.cumsum(np.flip(x, axis), axis), axis) if rev else np.cumsum(x, axis)
    np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("num_warps", [1, 4])
def test_softmax(emulator64, num_warps):
    x = np.random.default_rng(2).standard_normal((3, 1000)).astype(np.float32)
    y = np.zeros_like(x)
    run(K.softmax_kernel, (3, ), x, y, x.shape[1], x.shape[1], BLOCK=1024, num_warps=num_warps, warp_size=WS)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)


def test_layout_conversion_through_shared_memory(emulator64):
    x = np.arange(32 * 64, dtype=np.float32).reshape(32, 64)
    y = np.zeros((64, 32), np.float32)
    run(K.transpose_kernel, (1, ), x, y, 32, 64, warp_size=WS)
    np.testing.assert_array_equal(y, x.T)


@pytest.mark.parametrize("shape", [(16, 16, 16), (32, 64, 16)])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_dot(emulator64, shape, dtype):
    M, N, Kd = shape
    rng = np.random.default_rng(4)
    a = rng.standard_normal((M, Kd)).astype(dtype)
    b = rng.standard_normal((Kd, N)).astype(dtype)
    c = np.zeros((M, N), np.float32)
    run(K.dot_kernel, (1, ), a, b, c, M, N, Kd, warp_size=WS)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=2e-3, atol=2e-3)


def test_atomics(emulator64):
    n = 1000
    x = np.random.default_rng(5).integers(0, 100, n).astype(np.int32)
    total = np.zeros(1, np.int32)
    hist = np.zeros(8, np.int32)
    run(K.atomic_kernel, (4, ), x, total, hist, n, BLOCK=256, warp_size=WS)
    assert total[0] == x.sum()
    np.testing.assert_array_equal(hist, np.bincount(x % 8, minlength=8))


def test_sort_gather_histogram(emulator64):
    N = 128
    x = np.random.default_rng(6).integers(0, 1000, N).astype(np.int32)
    out = np.zeros(3 * N, np.int32)
    run(K.gather_sort_kernel, (1, ), x, out, N, warp_size=WS)
    np.testing.assert_array_equal(out[:N], np.sort(x))
    np.testing.assert_array_equal(out[N:2 * N], x[::-1])
    np.testing.assert_array_equal(out[2 * N:], np.bincount(x % N, minlength=N))


def test_warp_size_must_be_a_power_of_two(emulator64):
    x = np.zeros(64, np.float32)
    with pytest.raises(Exception, match="warp_size must be a power of 2"):
        run(K.add_kernel, (1, ), x, x, x, 64, BLOCK=64, warp_size=48)
