"""2-D descriptor stores into a tensor whose rows end inside a box, on the default path (no knob): a view
``x[:, :N]`` of rows padded to 48 elements, so the row stride is a 16-byte multiple (the copy engine's rule)
while the last box of a row runs past its end. Everything past column N belongs to the allocation but not to
the tensor, and must keep its sentinel. Element sizes 1, 2 and 4 bytes; 32-, 64- and 128-byte swizzled rows.
On the H200 (2026-12-02) the int8 cases wrote the bytes up to the next 16-byte boundary past the row end, as a
5-D int8 store had with every rank's TMA on: the default path's stores now check the rows' end too
(descriptor_store.rows_end_aligned). Runs on the GPU emulator and on an NVIDIA GPU."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium.tools.tensor_descriptor import TensorDescriptor

WIDTH, M = 48, 19


@triton.jit
def _bump_host(x_desc, y_desc, BM: tl.constexpr, BN: tl.constexpr):
    pm, pn = tl.program_id(0) * BM, tl.program_id(1) * BN
    y_desc.store([pm, pn], x_desc.load([pm, pn]) + 1)


@triton.jit
def _bump_own(x_ptr, y_ptr, rows, cols, stride, BM: tl.constexpr, BN: tl.constexpr):
    src = tl.make_tensor_descriptor(x_ptr, [rows, cols], [stride, 1], [BM, BN])
    dst = tl.make_tensor_descriptor(y_ptr, [rows, cols], [stride, 1], [BM, BN])
    pm, pn = tl.program_id(0) * BM, tl.program_id(1) * BN
    dst.store([pm, pn], src.load([pm, pn]) + 1)


def _sm90() -> bool:
    from tritium.runtime.driver import driver
    return 90 <= int(driver.active.get_current_target().arch) < 100


def _sentinel(dtype):
    return np.nan if dtype.kind == "f" else 99


@pytest.mark.parametrize("mode", ["host", "own"])
# (element type, the row's length, the block's columns): rows ending 40 int8 / 72 fp16 / 152 fp32 bytes in (off a
# 16-byte boundary: the int8 ones wrote past it on the H200 before the rows-end check covered the default path),
# or 80 / 160 bytes in (on one); 32-, 64- and 128-byte swizzled rows
@pytest.mark.parametrize("name,N,BN", [("int8", 40, 32), ("int8", 40, 64), ("float16", 40, 32), ("float16", 40, 64),
                                       ("float16", 36, 16), ("float16", 36, 32), ("float16", 36, 64),
                                       ("float32", 40, 16), ("float32", 40, 32), ("float32", 38, 16),
                                       ("float32", 38, 32)])
def test_descriptor_store_stops_at_the_row_end(dev, name, N, BN, mode):
    dtype = np.dtype(name)
    rng = np.random.default_rng(BN)
    x = np.full((M, WIDTH), _sentinel(dtype), dtype)
    x[:, :N] = rng.integers(-20, 20, (M, N)).astype(dtype)
    y = np.full((M, WIDTH), _sentinel(dtype), dtype)
    dx, dy = dev.put(x), dev.put(y)
    BM = 8
    grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
    if mode == "host":
        k = _bump_host[grid](TensorDescriptor(dx, [M, N], [WIDTH, 1], [BM, BN]),
                         TensorDescriptor(dy, [M, N], [WIDTH, 1], [BM, BN]), BM=BM, BN=BN)
    else:
        k = _bump_own[grid](dx, dy, M, N, WIDTH, BM=BM, BN=BN)
    got = dev.get(dy)
    if dev.name == "cuda" and mode == "host" and _sm90():
        # the launcher-encoded maps take the copy engine's stores on sm_90: the case this file is about
        assert "cp.async.bulk.tensor.2d.global.shared::cta" in k.asm["ptx"]
    np.testing.assert_array_equal(got[:, :N], (x[:, :N] + 1).astype(dtype))
    np.testing.assert_array_equal(got[:, N:], np.full((M, WIDTH - N), _sentinel(dtype), dtype))
