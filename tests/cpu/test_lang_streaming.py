"""Streaming (non-temporal) stores on the CPU: taken only for unmasked stores contiguous along the innermost
axis, in kernels without atomics, when a launch moves more than half the last-level cache; every variant must
store exactly what an ordinary store would."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl


@pytest.fixture
def threshold(monkeypatch, tmp_path):
    """Set the cache size the streaming decision compares against (compiled into kernels: private cache)."""
    from tritium import knobs
    from tritium_cpu.codegen import streaming

    def set_llc(nbytes: int) -> None:
        monkeypatch.setattr(streaming, "llc_bytes", lambda: nbytes)
    # a scope, not monkeypatch.setattr: that would restore the value read at setup (possibly from the
    # environment) as a value set from Python, which then outlives the test
    with knobs.cache.scope():
        knobs.cache.dir = str(tmp_path)
        yield set_llc


def _rows_kernel():
    @triton.jit
    def rows(x_ptr, y_ptr, stride, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + cols)
        tl.store(y_ptr + row * stride + cols, x * 2.0 + 1.0)
    return rows


@pytest.mark.parametrize("llc", [1 << 12, 1 << 40])
@pytest.mark.parametrize("offset", [0, 1])
def test_rows(threshold, llc, offset):
    """Small threshold: every launch streams (aligned rows by non-temporal stores, misaligned ones by the
    ordinary copy); huge threshold: none does. Same results."""
    threshold(llc)
    rows, block = 64, 256
    x = np.random.default_rng(0).standard_normal(rows * block).astype(np.float32)
    raw = np.zeros(rows * block + 16, np.float32)
    y = raw[offset:offset + rows * block]
    k = _rows_kernel()[(rows, )](x, y, block, BLOCK=block)
    np.testing.assert_array_equal(y, x * np.float32(2) + np.float32(1))
    assert "!nontemporal" in k.asm["llir"]


def test_tiles_2d_and_loops(threshold):
    """A 2D tile stored through ``rows[:, None] * stride + cols[None, :]`` (contiguous rows, some misaligned
    by the stride) inside a persistent loop."""
    threshold(1 << 12)

    @triton.jit
    def tiles(x_ptr, y_ptr, n_tiles, stride, BM: tl.constexpr, BN: tl.constexpr):
        for t in range(tl.program_id(0), n_tiles, tl.num_programs(0)):
            r = t * BM + tl.arange(0, BM)
            c = tl.arange(0, BN)
            offs = r[:, None] * stride + c[None, :]
            tl.store(y_ptr + offs, tl.load(x_ptr + offs) - 3.0)

    bm, bn, n_tiles, stride = 4, 64, 10, 67
    x = np.arange(bm * n_tiles * stride, dtype=np.float32)
    y = np.full_like(x, -1)
    k = tiles[(3, )](x, y, n_tiles, stride, BM=bm, BN=bn)
    want = np.full_like(x, -1).reshape(-1, stride)
    want[:, :bn] = x.reshape(-1, stride)[:, :bn] - 3
    np.testing.assert_array_equal(y, want.reshape(-1))
    assert "!nontemporal" in k.asm["llir"]


def test_not_contiguous_or_ordered(threshold):
    """Stores whose innermost axis is strided, and kernels with atomics, never stream."""
    threshold(1 << 12)

    @triton.jit
    def transposed(x_ptr, y_ptr, N: tl.constexpr):
        r = tl.arange(0, N)
        tl.store(y_ptr + r[None, :] * N + r[:, None], tl.load(x_ptr + r[:, None] * N + r[None, :]))

    @triton.jit
    def counted(x_ptr, y_ptr, count_ptr, N: tl.constexpr):
        c = tl.arange(0, N)
        tl.store(y_ptr + c, tl.load(x_ptr + c) + 1)
        tl.atomic_add(count_ptr, 1)

    n = 64
    x = np.arange(n * n, dtype=np.float32)
    y = np.zeros_like(x)
    k = transposed[(1, )](x, y, N=n)
    np.testing.assert_array_equal(y.reshape(n, n), x.reshape(n, n).T)
    assert "!nontemporal" not in k.asm["llir"]
    count = np.zeros(1, np.int32)
    y = np.zeros(4 * n, np.float32)
    k = counted[(4, )](x, y, count, N=4 * n)
    np.testing.assert_array_equal(y, x[:4 * n] + 1)
    assert count[0] == 4 and "!nontemporal" not in k.asm["llir"]


def test_a_masked_load_streams_as_vector_loads(threshold, capsys):
    """An unmasked store of a masked load's value (a row padded with ``other``): the streamed rows load each
    vector with one masked vector load (codegen/lanes.py), not a branch around a scalar load per lane (``ld``
    blocks in the LLVM IR the code generator writes), and store exactly what an ordinary store would."""
    import re

    from tritium import knobs

    @triton.jit
    def pad(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n + cols, mask=cols < n, other=-1.0)
        tl.store(y_ptr + row * BLOCK + cols, x * 2.0)

    threshold(1 << 12)
    rows, n, block = 64, 201, 256
    x = np.random.default_rng(0).standard_normal(rows * n).astype(np.float32)
    y = np.zeros((rows, block), np.float32)
    with knobs.compilation.scope():
        knobs.compilation.llvm_ir_dump = True
        k = pad[(rows, )](x, y, n, BLOCK=block)
    want = np.full((rows, block), -2.0, np.float32)
    want[:, :n] = x.reshape(rows, n) * np.float32(2)
    np.testing.assert_array_equal(y, want)
    assert "!nontemporal" in k.asm["llir"]
    before = capsys.readouterr().err.split("LLVM IR after optimization")[0]
    # one per element loop (unaligned rows, the unstreamed launch); a branch per lane made one per vector lane
    lane_branches = len(re.findall(r"^ld\d*:", before, re.M))
    assert 0 < lane_branches <= 3, f"{lane_branches} masked-load branches: lanes loaded one by one?"
