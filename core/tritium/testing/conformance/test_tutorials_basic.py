"""The kernel patterns of Triton's tutorials 01 (vector add), 02 (fused softmax), 04 (low-memory dropout) and
07 (libdevice functions), written as small conformance tests: masked tails, persistent loops over rows with
``tl.range(..., num_stages=...)``, seeded ``tl.rand`` and ``tl.extra.libdevice``."""
from __future__ import annotations

import math

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium import knobs
from tritium.language.extra import libdevice
from tritium.runtime.driver import driver

from .reference import philox_uniform, to_backend, to_host

# -- 01 vector add --------------------------------------------------------------------------------------


@triton.jit
def _add(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


@pytest.mark.parametrize("n,block", [(1000, 256), (4096, 1024), (1, 128), (98, 32)])
def test_vector_add(backend, rng, n, block):
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    # a sentinel past the end: a store that ignores the mask of the tail would overwrite it
    out = np.full(n + 16, np.float32(-7.0))
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]), )  # noqa: E731
    _add[grid](x, y, out, n, BLOCK_SIZE=block)
    np.testing.assert_array_equal(out[:n], x + y)
    assert (out[n:] == -7.0).all()


# -- 02 fused softmax -----------------------------------------------------------------------------------


@triton.jit
def _softmax(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols, BLOCK_SIZE: tl.constexpr,
             num_stages: tl.constexpr):
    # persistent: each program walks the rows pid, pid + num_programs, ...
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=num_stages):
        row_start_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = tl.arange(0, BLOCK_SIZE)
        mask = col_offsets < n_cols
        # padding lanes read -inf, so they neither win the max nor add to the sum (exp(-inf) = 0)
        row = tl.load(row_start_ptr + col_offsets, mask=mask, other=-float("inf"))
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator, axis=0)
        softmax_output = numerator / denominator
        output_row_start_ptr = output_ptr + row_idx * output_row_stride
        tl.store(output_row_start_ptr + col_offsets, softmax_output, mask=mask)


def _softmax_ref(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("n_rows,n_cols,programs,stages", [(37, 100, 4, 2), (5, 781, 2, 4), (16, 17, 16, 3)])
def test_fused_softmax(backend, rng, n_rows, n_cols, programs, stages):
    # rows of wider buffers: the row strides differ from the row length and from each other
    x = (rng.standard_normal((n_rows, n_cols + 3)) * 4).astype(np.float32)
    y = np.full((n_rows, n_cols + 5), np.float32(-7.0))
    block = triton.next_power_of_2(n_cols)
    _softmax[(programs, )](y, x, n_cols + 3, n_cols + 5, n_rows, n_cols, BLOCK_SIZE=block, num_stages=stages)
    np.testing.assert_allclose(y[:, :n_cols], _softmax_ref(x[:, :n_cols]), rtol=1e-5, atol=1e-7)
    assert (y[:, n_cols:] == -7.0).all()


def test_fused_softmax_sized_from_occupancy(backend, rng):
    """The tutorial's host side: compile ahead with warmup, read registers and shared memory of the compiled
    kernel and the device's properties, size the persistent grid from them, launch the compiled kernel."""
    if knobs.runtime.interpret:
        pytest.skip("the interpreter compiles nothing: warmup returns no kernel to query")
    n_rows, n_cols, num_warps, num_stages = 50, 300, 4, 2
    x = to_backend(backend, rng.standard_normal((n_rows, n_cols)).astype(np.float32))
    y = to_backend(backend, np.zeros((n_rows, n_cols), np.float32))
    block = triton.next_power_of_2(n_cols)
    kernel = _softmax.warmup(y, x, n_cols, n_cols, n_rows, n_cols, BLOCK_SIZE=block, num_stages=num_stages,
                             num_warps=num_warps, grid=(1, ))
    kernel._init_handles()
    props = driver.active.utils.get_device_properties(driver.active.get_current_device())
    n_regs, size_smem = kernel.n_regs, kernel.metadata.shared
    assert n_regs > 0 and size_smem > 0, "the occupancy formula below divides by both"
    occupancy = props["max_num_regs"] // (n_regs * props["warpSize"] * num_warps)
    occupancy = min(occupancy, props["max_shared_mem"] // size_smem)
    num_programs = min(props["multiprocessor_count"] * occupancy, n_rows)
    assert num_programs >= 1
    # a compiled kernel takes every argument of the @jit function, constexprs included
    kernel[(num_programs, 1, 1)](y, x, n_cols, n_cols, n_rows, n_cols, block, num_stages)
    np.testing.assert_allclose(to_host(y), _softmax_ref(to_host(x)), rtol=1e-5, atol=1e-7)


# -- 04 low-memory dropout ------------------------------------------------------------------------------


@triton.jit
def _dropout(x_ptr, x_keep_ptr, output_ptr, n_elements, p, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    x_keep = tl.load(x_keep_ptr + offsets, mask=mask)
    output = tl.where(x_keep, x / (1 - p), 0.0)
    tl.store(output_ptr + offsets, output, mask=mask)


@triton.jit
def _seeded_dropout(x_ptr, output_ptr, n_elements, p, seed, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    # the mask is regenerated from (seed, offset) instead of being stored
    random = tl.rand(seed, offsets)
    x_keep = random > p
    output = tl.where(x_keep, x / (1 - p), 0.0)
    tl.store(output_ptr + offsets, output, mask=mask)


def _dropout_ref(x: np.ndarray, keep: np.ndarray, p: float) -> np.ndarray:
    # the kernel divides in float32 by (1 - p) rounded to float32
    scale = np.float32(1) - np.float32(p)
    return np.where(keep, x / scale, np.float32(0)).astype(np.float32)


def test_dropout_with_mask(backend, rng):
    n, p = 1000, 0.5
    x = rng.standard_normal(n).astype(np.float32)
    keep = rng.random(n) > p
    out = np.zeros(n, np.float32)
    _dropout[(triton.cdiv(n, 256), )](x, keep, out, n, p, BLOCK_SIZE=256)
    np.testing.assert_allclose(out, _dropout_ref(x, keep, p), rtol=2.5e-7, atol=0)


@pytest.mark.parametrize("n,p,seed", [(1000, 0.5, 123), (4099, 0.25, 2**33 + 5), (777, 0.9, 0)])
def test_seeded_dropout(backend, rng, n, p, seed):
    x = (rng.standard_normal(n) + 3).astype(np.float32)   # nonzero, so out == 0 marks exactly the dropped lanes
    grid = (triton.cdiv(n, 512), )
    runs = []
    for s in (seed, seed, seed + 1):
        out = np.zeros(n, np.float32)
        _seeded_dropout[grid](x, out, n, p, s, BLOCK_SIZE=512)
        runs.append(out)
    np.testing.assert_array_equal(runs[0], runs[1])       # the same seed reproduces the same mask
    assert (runs[0] != runs[2]).any()                     # another seed gives another one
    # exact reconstruction: the mask is Philox(seed, offset) turned into a float in [0, 1) and compared with p
    # (the kept values only to 2 ulp: Triton's float32 `/` may be the GPUs' approximate division)
    for out, s in ((runs[0], seed), (runs[2], seed + 1)):
        keep = philox_uniform(s, np.arange(n)) > np.float32(p)
        np.testing.assert_array_equal(out != 0, keep)
        np.testing.assert_allclose(out, _dropout_ref(x, keep, p), rtol=2.5e-7, atol=0)
    kept = (runs[0] != 0).mean()
    assert abs(kept - (1 - p)) < 5 * np.sqrt(p * (1 - p) / n) + 1e-9


# -- 07 libdevice ---------------------------------------------------------------------------------------


@triton.jit
def _asin(x_ptr, y_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    x = libdevice.asin(x)
    tl.store(y_ptr + offsets, x, mask=mask)


@triton.jit
def _libdevice_mix(x_ptr, y_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    # the same library reached through tl.extra, as kernels that only import tl write it
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.extra.libdevice.atan2(tl.extra.libdevice.asin(x), tl.extra.libdevice.acos(x)) + libdevice.erf(x)
    tl.store(y_ptr + offsets, y, mask=mask)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_libdevice_asin(backend, rng, dtype):
    if dtype == "float64":
        backend.require("fp64")
    n = 1000
    x = rng.uniform(-1, 1, n).astype(dtype)
    x[:6] = [-1, 1, 0, -0.0, 0.5, 2.0]      # the ends of the domain and one point outside it (NaN)
    y = np.zeros(n, dtype)
    _asin[(triton.cdiv(n, 256), )](x, y, n, BLOCK_SIZE=256)
    with np.errstate(invalid="ignore"):
        want = np.arcsin(x.astype(np.float64))
    assert np.isnan(y[5])
    assert np.signbit(y[3])
    np.testing.assert_allclose(y, want, rtol=4 * np.finfo(dtype).eps, atol=0)


def test_libdevice_through_tl_extra(backend, rng):
    n = 300
    x = rng.uniform(-1, 1, n).astype(np.float32)
    y = np.zeros(n, np.float32)
    _libdevice_mix[(triton.cdiv(n, 128), )](x, y, n, BLOCK_SIZE=128)
    x64 = x.astype(np.float64)
    want = np.arctan2(np.arcsin(x64), np.arccos(x64)) + np.vectorize(math.erf)(x64)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)
