"""Arrays that only speak DLPack (JAX, CuPy, ... here a wrapper around numpy's exporter) work as arguments."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl


class OnlyDLPack:
    def __init__(self, a: np.ndarray) -> None:
        self._a = a

    def __dlpack__(self, **kwargs):
        return self._a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


@triton.jit
def axpy(x_ptr, y_ptr, n, a, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, a * tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_dlpack_arguments(dtype):
    x = np.arange(100).astype(dtype)
    y = np.ones(100, dtype)
    axpy[(2, )](OnlyDLPack(x), OnlyDLPack(y), 100, 2, BLOCK=64)
    np.testing.assert_array_equal(y, 2 * np.arange(100).astype(dtype) + 1)


def test_dlpack_offset_views():
    base = np.arange(200, dtype=np.float32)
    y = np.zeros(200, np.float32)
    axpy[(2, )](OnlyDLPack(base[100:]), OnlyDLPack(y[100:]), 100, 1.0, BLOCK=64)
    np.testing.assert_array_equal(y[100:], base[100:])
    assert not y[:100].any()
