"""The kernel patterns of Triton's tutorial 05 (layer norm), forward and backward: a forward that loops over a row
in blocks (mean, variance, normalize), a backward whose programs each compute dx for one row and add their share of
dw/db into one of GROUP_SIZE_M partial buffers under a spin lock (``atomic_cas`` / ``atomic_xchg``), and a second
kernel that sums the partial buffers column block by column block."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl


@triton.jit
def _layer_norm_fwd_fused(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    # mean, in blocks of the row; the tail of the last block reads zeros
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    # variance: the tail must not contribute (x - mean)^2 for the padding lanes
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        tl.store(Y + cols, y, mask=mask)


@triton.jit
def _layer_norm_bwd_dx_fused(DX, DY, DW, DB, X, W, Mean, Rstd, Lock, stride, N, GROUP_SIZE_M: tl.constexpr,
                             BLOCK_SIZE_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE_N)
    mask = cols < N
    X += row * stride
    DY += row * stride
    DX += row * stride
    # rows share GROUP_SIZE_M partial buffers: row r adds into buffer r % GROUP_SIZE_M; Lock[i] guards buffer i,
    # Count[i] says whether it holds data yet (the first writer stores instead of adding)
    lock_id = row % GROUP_SIZE_M
    Lock += lock_id
    Count = Lock + GROUP_SIZE_M
    DW = DW + lock_id * N + cols
    DB = DB + lock_id * N + cols
    x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
    dy = tl.load(DY + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)
    xhat = (x - mean) * rstd
    wdy = w * dy
    xhat = tl.where(mask, xhat, 0.)
    wdy = tl.where(mask, wdy, 0.)
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    dx = (wdy - (xhat * c1 + c2)) * rstd
    tl.store(DX + cols, dx, mask=mask)
    partial_dw = (dy * xhat).to(w.dtype)
    partial_db = (dy).to(w.dtype)
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    count = tl.load(Count)
    if count == 0:
        tl.atomic_xchg(Count, 1)
    else:
        partial_dw += tl.load(DW, mask=mask)
        partial_db += tl.load(DB, mask=mask)
    tl.store(DW, partial_dw, mask=mask)
    tl.store(DB, partial_db, mask=mask)
    # the stores must be visible before the next holder of the lock reads them
    tl.debug_barrier()
    tl.atomic_xchg(Lock, 0)


@triton.jit
def _layer_norm_bwd_dwdb(DW, DB, FINAL_DW, FINAL_DB, M, N, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    dw = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    db = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for i in range(0, M, BLOCK_SIZE_M):
        rows = i + tl.arange(0, BLOCK_SIZE_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        dw += tl.load(DW + offs, mask=mask, other=0.)
        db += tl.load(DB + offs, mask=mask, other=0.)
    sum_dw = tl.sum(dw, axis=0)
    sum_db = tl.sum(db, axis=0)
    tl.store(FINAL_DW + cols, sum_dw, mask=cols < N)
    tl.store(FINAL_DB + cols, sum_db, mask=cols < N)


def _reference(x, w, b, dy, eps):
    """float64 layer norm and its gradients with respect to x, w and b."""
    x, w, b, dy = (a.astype(np.float64) for a in (x, w, b, dy))
    n = x.shape[1]
    mean = x.mean(axis=1, keepdims=True)
    rstd = 1 / np.sqrt(((x - mean) ** 2).mean(axis=1, keepdims=True) + eps)
    xhat = (x - mean) * rstd
    y = xhat * w + b
    wdy = w * dy
    dx = (wdy - xhat * (xhat * wdy).sum(axis=1, keepdims=True) / n - wdy.sum(axis=1, keepdims=True) / n) * rstd
    return y, mean[:, 0], rstd[:, 0], dx, (dy * xhat).sum(axis=0), dy.sum(axis=0)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("M,N,fwd_block,group", [(37, 200, 64, 8), (9, 1000, 256, 16)])
def test_layer_norm_fwd_bwd(backend, rng, dtype, M, N, fwd_block, group):
    eps = 1e-5
    x = (rng.standard_normal((M, N)) * 2 + 0.5).astype(dtype)
    w = rng.uniform(0.5, 1.5, N).astype(dtype)
    b = rng.uniform(-1, 1, N).astype(dtype)
    dy = (rng.standard_normal((M, N)) * 0.1).astype(dtype)
    y_ref, mean_ref, rstd_ref, dx_ref, dw_ref, db_ref = _reference(x, w, b, dy, eps)
    tol = {"float16": 2e-2, "float32": 1e-4}[dtype]

    y = np.zeros((M, N), dtype)
    mean, rstd = np.zeros(M, np.float32), np.zeros(M, np.float32)
    _layer_norm_fwd_fused[(M, )](x, y, w, b, mean, rstd, x.strides[0] // x.itemsize, N, eps, BLOCK_SIZE=fwd_block)
    np.testing.assert_allclose(mean, mean_ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(rstd, rstd_ref, rtol=1e-4)
    np.testing.assert_allclose(y.astype(np.float64), y_ref, rtol=tol, atol=tol)

    # the backward from the forward's own statistics, as the tutorial's autograd function does
    block_n = triton.next_power_of_2(N)
    dx = np.zeros((M, N), dtype)
    locks = np.zeros(2 * group, np.int32)
    partial_dw, partial_db = np.zeros((group, N), dtype), np.zeros((group, N), dtype)
    _layer_norm_bwd_dx_fused[(M, )](dx, dy, partial_dw, partial_db, x, w, mean, rstd, locks,
                                    x.strides[0] // x.itemsize, N, GROUP_SIZE_M=group, BLOCK_SIZE_N=block_n)
    np.testing.assert_allclose(dx.astype(np.float64), dx_ref, rtol=tol, atol=tol)
    assert (locks[:group] == 0).all(), "every lock released"
    assert (locks[group:] == (np.arange(group) < M)).all(), "a count set for each buffer some row used"
    # each partial buffer holds the sum over its rows (up to the rounding of the buffer's type)
    xhat = (x.astype(np.float64) - mean[:, None]) * rstd[:, None]
    for i in range(group):
        rows = slice(i, M, group)
        np.testing.assert_allclose(partial_db[i].astype(np.float64), dy[rows].astype(np.float64).sum(axis=0),
                                   rtol=tol, atol=tol)
        np.testing.assert_allclose(partial_dw[i].astype(np.float64), (dy[rows] * xhat[rows]).sum(axis=0),
                                   rtol=tol, atol=tol)

    dw, db = np.zeros(N, dtype), np.zeros(N, dtype)
    grid = lambda meta: (triton.cdiv(N, meta["BLOCK_SIZE_N"]), )  # noqa: E731
    _layer_norm_bwd_dwdb[grid](partial_dw, partial_db, dw, db, min(group, M), N, BLOCK_SIZE_M=4, BLOCK_SIZE_N=64)
    np.testing.assert_allclose(db.astype(np.float64), partial_db.astype(np.float64).sum(axis=0), rtol=tol, atol=tol)
    np.testing.assert_allclose(dw.astype(np.float64), dw_ref, rtol=tol, atol=tol * np.sqrt(M))
    np.testing.assert_allclose(db.astype(np.float64), db_ref, rtol=tol, atol=tol * np.sqrt(M))
