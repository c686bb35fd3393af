"""The kernels of Triton's tutorials that examples/ does not already cover, written for tritium and run on the
CPU: seeded dropout, fused attention (causal and not), layer-norm backward with a spin lock between programs,
grouped GEMM through pointers loaded from memory, a persistent matmul on tensor descriptors, and libdevice
functions. Each is checked against numpy."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium.language.extra import libdevice


# -- low-memory dropout ------------------------------------------------------------------------------
@triton.jit
def _seeded_dropout(x_ptr, out_ptr, rand_ptr, n, p, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    r = tl.rand(seed, offs)
    tl.store(rand_ptr + offs, r, mask=mask)
    tl.store(out_ptr + offs, tl.where(r > p, x / (1 - p), 0.0), mask=mask)


def test_seeded_dropout():
    n, p = 1000, 0.4
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    outs, rands = [], []
    for seed in (123, 123, 7):
        out, r = np.zeros_like(x), np.zeros_like(x)
        _seeded_dropout[(triton.cdiv(n, 256), )](x, out, r, n, p, seed, BLOCK=256)
        outs.append(out)
        rands.append(r)
    np.testing.assert_array_equal(outs[0], outs[1])           # the seed alone decides the mask
    assert (outs[0] != 0).sum() != (outs[2] != 0).sum() or (outs[0] != outs[2]).any()
    keep = rands[0] > p
    np.testing.assert_allclose(outs[0], np.where(keep, x / np.float32(1 - p), 0), rtol=2e-7)
    assert 0.5 < keep.mean() < 0.7


# -- fused attention (forward) -----------------------------------------------------------------------
@triton.jit
def _attn_fwd(Q, K, V, Out, sm_scale, stride_h, stride_m, N_CTX: tl.constexpr, HEAD_DIM: tl.constexpr,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    start_m = tl.program_id(0)
    base = tl.program_id(1) * stride_h
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + base + offs_m[:, None] * stride_m + offs_d[None, :])
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    qk_scale = sm_scale * 1.4426950408889634      # exp(x) = exp2(x * log2(e))
    hi = (start_m + 1) * BLOCK_M if CAUSAL else N_CTX
    for start_n in tl.range(0, hi, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        kt = tl.load(K + base + offs_n[None, :] * stride_m + offs_d[:, None])
        qk = tl.dot(q, kt) * qk_scale
        if CAUSAL:
            qk = tl.where(offs_m[:, None] >= offs_n[None, :], qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + base + offs_n[:, None] * stride_m + offs_d[None, :])
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(Out + base + offs_m[:, None] * stride_m + offs_d[None, :], out.to(Out.dtype.element_ty))


@pytest.mark.parametrize("causal", [False, True])
def test_fused_attention(causal):
    heads, n_ctx, d = 2, 128, 64
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((heads, n_ctx, d)).astype(np.float16) for _ in range(3))
    out = np.zeros_like(q)
    scale = 0.5
    _attn_fwd[(n_ctx // 32, heads)](q, k, v, out, scale, n_ctx * d, d, N_CTX=n_ctx, HEAD_DIM=d, BLOCK_M=32,
                                    BLOCK_N=32, CAUSAL=causal)
    s = np.einsum("hmd,hnd->hmn", q.astype(np.float64), k.astype(np.float64)) * scale
    if causal:
        s = np.where(np.tril(np.ones((n_ctx, n_ctx), bool)), s, -np.inf)
    w = np.exp(s - s.max(-1, keepdims=True))
    want = np.einsum("hmn,hnd->hmd", w / w.sum(-1, keepdims=True), v.astype(np.float64))
    np.testing.assert_allclose(out.astype(np.float64), want, atol=1e-2, rtol=1e-2)


# -- layer norm backward: dx per row, dw/db summed through a lock per group of rows --------------------
@triton.jit
def _ln_bwd_dx(DX, DY, DW_part, DB_part, X, W, Mean, Rstd, Lock, stride, N, GROUP: tl.constexpr,
               BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(X + row * stride + cols, mask=mask, other=0.0)
    dy = tl.load(DY + row * stride + cols, mask=mask, other=0.0)
    w = tl.load(W + cols, mask=mask, other=0.0)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)
    xhat = tl.where(mask, (x - mean) * rstd, 0.0)
    wdy = tl.where(mask, w * dy, 0.0)
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    tl.store(DX + row * stride + cols, (wdy - (xhat * c1 + c2)) * rstd, mask=mask)
    dw = dy * xhat
    db = dy
    group = row % GROUP
    lock = Lock + group
    count = Lock + GROUP + group
    DW_part += group * N + cols
    DB_part += group * N + cols
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    if tl.load(count) == 0:
        tl.atomic_xchg(count, 1)
    else:
        dw += tl.load(DW_part, mask=mask)
        db += tl.load(DB_part, mask=mask)
    tl.store(DW_part, dw, mask=mask)
    tl.store(DB_part, db, mask=mask)
    tl.debug_barrier()
    tl.atomic_xchg(lock, 0)


@triton.jit
def _ln_bwd_dwdb(DW_part, DB_part, FINAL_DW, FINAL_DB, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    dw = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    db = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
    for i in range(0, M, BLOCK_M):
        rows = i + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        offs = rows[:, None] * N + cols[None, :]
        dw += tl.load(DW_part + offs, mask=mask, other=0.0)
        db += tl.load(DB_part + offs, mask=mask, other=0.0)
    tl.store(FINAL_DW + cols, tl.sum(dw, axis=0), mask=cols < N)
    tl.store(FINAL_DB + cols, tl.sum(db, axis=0), mask=cols < N)


def test_layer_norm_backward():
    m, n, group = 96, 200, 8
    rng = np.random.default_rng(2)
    x = rng.standard_normal((m, n)).astype(np.float32)
    dy = rng.standard_normal((m, n)).astype(np.float32)
    w = rng.standard_normal(n).astype(np.float32)
    mean = x.mean(1).astype(np.float32)
    rstd = (1 / np.sqrt(x.var(1) + 1e-5)).astype(np.float32)
    dx = np.zeros_like(x)
    dw_part = np.zeros((group, n), np.float32)
    db_part = np.zeros((group, n), np.float32)
    locks = np.zeros(2 * group, np.int32)
    _ln_bwd_dx[(m, )](dx, dy, dw_part, db_part, x, w, mean, rstd, locks, n, n, GROUP=group, BLOCK_N=256)
    dw, db = np.zeros(n, np.float32), np.zeros(n, np.float32)
    _ln_bwd_dwdb[(triton.cdiv(n, 64), )](dw_part, db_part, dw, db, group, n, BLOCK_M=4, BLOCK_N=64)
    xhat = (x - mean[:, None]) * rstd[:, None]
    wdy = w * dy
    want_dx = (wdy - (xhat * (xhat * wdy).mean(1, keepdims=True) + wdy.mean(1, keepdims=True))) * rstd[:, None]
    np.testing.assert_allclose(dx, want_dx, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(dw, (dy * xhat).sum(0), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(db, dy.sum(0), rtol=1e-4, atol=1e-3)
    assert (locks[:group] == 0).all() and (locks[group:] == 1).all()


# -- grouped GEMM: problem pointers and sizes read from memory -----------------------------------------
@triton.jit
def _grouped_matmul(group_a, group_b, group_c, group_sizes, GROUPS: tl.constexpr, NUM_PROGRAMS: tl.constexpr,
                    BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    tile = tl.program_id(0)
    first = 0
    for g in range(GROUPS):
        gm = tl.load(group_sizes + 3 * g)
        gn = tl.load(group_sizes + 3 * g + 1)
        gk = tl.load(group_sizes + 3 * g + 2)
        n_tiles_n = tl.cdiv(gn, BN)
        n_tiles = tl.cdiv(gm, BM) * n_tiles_n
        while tile >= first and tile < first + n_tiles:
            a = tl.load(group_a + g).to(tl.pointer_type(tl.float16))
            b = tl.load(group_b + g).to(tl.pointer_type(tl.float16))
            c = tl.load(group_c + g).to(tl.pointer_type(tl.float16))
            local = tile - first
            offs_m = (local // n_tiles_n) * BM + tl.arange(0, BM)
            offs_n = (local % n_tiles_n) * BN + tl.arange(0, BN)
            offs_k = tl.arange(0, BK)
            a_ptrs = a + offs_m[:, None] * gk + offs_k[None, :]
            b_ptrs = b + offs_k[:, None] * gn + offs_n[None, :]
            acc = tl.zeros([BM, BN], tl.float32)
            for _ in range(0, tl.cdiv(gk, BK)):
                acc += tl.dot(tl.load(a_ptrs), tl.load(b_ptrs))
                a_ptrs += BK
                b_ptrs += BK * gn
            tl.store(c + offs_m[:, None] * gn + offs_n[None, :], acc.to(tl.float16))
            tile += NUM_PROGRAMS
        first = first + n_tiles


def test_grouped_gemm():
    rng = np.random.default_rng(3)
    shapes = [(64, 32, 48), (32, 64, 16), (96, 32, 32)]
    As = [rng.standard_normal((m, k)).astype(np.float16) for m, _, k in shapes]
    Bs = [rng.standard_normal((k, n)).astype(np.float16) for _, n, k in shapes]
    Cs = [np.zeros((m, n), np.float16) for m, n, _ in shapes]
    addr = lambda arrays: np.array([t.ctypes.data for t in arrays], np.int64)  # noqa: E731
    sizes = np.array(shapes, np.int32).reshape(-1)
    _grouped_matmul[(4, )](addr(As), addr(Bs), addr(Cs), sizes, GROUPS=3, NUM_PROGRAMS=4, BM=32, BN=32, BK=16)
    for a, b, c in zip(As, Bs, Cs):
        want = a.astype(np.float32) @ b.astype(np.float32)
        np.testing.assert_allclose(c.astype(np.float32), want, rtol=1e-2, atol=1e-2)


# -- persistent matmul on tensor descriptors (ragged edges padded and clipped) ---------------------------
@triton.jit
def _persistent_matmul(a_ptr, b_ptr, c_ptr, M, N, K, NUM_PROGRAMS: tl.constexpr, BM: tl.constexpr,
                       BN: tl.constexpr, BK: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BN, BK])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    n_tiles_n = tl.cdiv(N, BN)
    n_tiles = tl.cdiv(M, BM) * n_tiles_n
    for tile in tl.range(tl.program_id(0), n_tiles, NUM_PROGRAMS, flatten=True):
        pm = tile // n_tiles_n
        pn = tile % n_tiles_n
        acc = tl.zeros([BM, BN], tl.float32)
        for ki in range(tl.cdiv(K, BK)):
            a = a_desc.load([pm * BM, ki * BK])
            b = b_desc.load([pn * BN, ki * BK])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([pm * BM, pn * BN], acc.to(tl.float16))


def test_persistent_matmul_descriptors():
    m, n, k = 100, 72, 56
    rng = np.random.default_rng(4)
    a = rng.standard_normal((m, k)).astype(np.float16)
    bt = rng.standard_normal((n, k)).astype(np.float16)
    c = np.full((m, n), 7, np.float16)
    _persistent_matmul[(3, )](a, bt, c, m, n, k, NUM_PROGRAMS=3, BM=32, BN=32, BK=32)
    np.testing.assert_allclose(c.astype(np.float32), a.astype(np.float32) @ bt.astype(np.float32).T,
                               rtol=1e-2, atol=1e-2)


# -- libdevice ("extern functions") ------------------------------------------------------------------
@triton.jit
def _asin_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, libdevice.asin(tl.load(x_ptr + offs, mask=mask)), mask=mask)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_libdevice_asin(dtype):
    x = np.random.default_rng(5).uniform(-1, 1, 300).astype(dtype)
    y = np.zeros_like(x)
    _asin_kernel[(3, )](x, y, 300, BLOCK=128)
    np.testing.assert_allclose(y, np.arcsin(x), rtol=4e-7 if dtype == np.float32 else 1e-15)
