"""The kernel patterns of Triton's tutorial 06 (fused attention, Flash Attention v2), forward and backward, causal
and not: the forward's STAGE structure (off-band blocks with ``lo, hi`` bounds, then the masked on-band block),
the online softmax in base 2 (m_i, l_i, exp2, the 1.44269504 scale), and the backward's preprocess (rowsum of
o * do), dk/dv loop over query blocks and dq loop over key blocks with the causal masks.

Inputs are fp16 with fp32 accumulation, as in the tutorial; the references are float64."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl


@triton.jit
def _attn_fwd_inner(acc, l_i, m_i, q, K, V, stride_tok, start_m, qk_scale, BLOCK_M: tl.constexpr,
                    HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr, STAGE: tl.constexpr, offs_m: tl.constexpr,
                    offs_n: tl.constexpr, N_CTX, BLOCK_PTR: tl.constexpr):
    # STAGE 1: the key blocks strictly left of the diagonal; 2: the diagonal block (masked); 3: all keys
    if STAGE == 1:
        lo, hi = 0, start_m * BLOCK_M
    elif STAGE == 2:
        lo, hi = start_m * BLOCK_M, (start_m + 1) * BLOCK_M
        lo = tl.multiple_of(lo, BLOCK_M)
    else:
        lo, hi = 0, N_CTX
    offs_d = tl.arange(0, HEAD_DIM)
    if BLOCK_PTR:
        K = tl.advance(K, (0, lo))
        V = tl.advance(V, (lo, 0))
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        cols = start_n + offs_n
        # k is read transposed (HEAD_DIM x BLOCK_N); keys past N_CTX read zeros and are masked below
        if BLOCK_PTR:
            k = tl.load(K, boundary_check=(1, ), padding_option="zero")
        else:
            k = tl.load(K + cols[None, :] * stride_tok + offs_d[:, None], mask=cols[None, :] < N_CTX, other=0.0)
        qk = tl.dot(q, k)
        if STAGE == 2:
            mask = offs_m[:, None] >= (start_n + offs_n[None, :])
            qk = qk * qk_scale + tl.where(mask, 0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk -= m_ij[:, None]
        else:
            qk = tl.where(cols[None, :] < N_CTX, qk, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        # rescale what was accumulated under the old running maximum
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        if BLOCK_PTR:
            v = tl.load(V, boundary_check=(0, ), padding_option="zero")
            K = tl.advance(K, (0, BLOCK_N))
            V = tl.advance(V, (BLOCK_N, 0))
        else:
            v = tl.load(V + cols[:, None] * stride_tok + offs_d[None, :], mask=cols[:, None] < N_CTX, other=0.0)
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    return acc, l_i, m_i


@triton.jit
def _attn_fwd(Q, K, V, sm_scale, M, Out, stride_z, stride_h, stride_tok, H, N_CTX, HEAD_DIM: tl.constexpr,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, STAGE: tl.constexpr, BLOCK_PTR: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    qkv_offset = off_z.to(tl.int64) * stride_z + off_h.to(tl.int64) * stride_h
    Q += qkv_offset
    K += qkv_offset
    V += qkv_offset
    Out += qkv_offset
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale
    qk_scale *= 1.44269504  # 1/log(2): exp(x) = exp2(x / log 2)
    row_ok = offs_m[:, None] < N_CTX
    if BLOCK_PTR:
        # the tutorial's block pointers: K is walked as its transpose (column-major order)
        q = tl.load(tl.make_block_ptr(Q, (N_CTX, HEAD_DIM), (stride_tok, 1), (start_m * BLOCK_M, 0),
                                      (BLOCK_M, HEAD_DIM), (1, 0)), boundary_check=(0, ), padding_option="zero")
        K = tl.make_block_ptr(K, (HEAD_DIM, N_CTX), (1, stride_tok), (0, 0), (HEAD_DIM, BLOCK_N), (0, 1))
        V = tl.make_block_ptr(V, (N_CTX, HEAD_DIM), (stride_tok, 1), (0, 0), (BLOCK_N, HEAD_DIM), (1, 0))
    else:
        q = tl.load(Q + offs_m[:, None] * stride_tok + offs_d[None, :], mask=row_ok, other=0.0)
    # causal: STAGE = 3 runs the off-band blocks (inner stage 1), then the diagonal (inner stage 2);
    # not causal: STAGE = 1 runs every block unmasked (inner stage 3)
    if STAGE & 1:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, K, V, stride_tok, start_m, qk_scale, BLOCK_M, HEAD_DIM,
                                        BLOCK_N, 4 - STAGE, offs_m, offs_n, N_CTX, BLOCK_PTR)
    if STAGE & 2:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, K, V, stride_tok, start_m, qk_scale, BLOCK_M, HEAD_DIM,
                                        BLOCK_N, 2, offs_m, offs_n, N_CTX, BLOCK_PTR)
    # the log-sum-exp in base 2, kept for the backward
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    tl.store(M + off_hz * N_CTX + offs_m, m_i, mask=offs_m < N_CTX)
    if BLOCK_PTR:
        o_block = tl.make_block_ptr(Out, (N_CTX, HEAD_DIM), (stride_tok, 1), (start_m * BLOCK_M, 0),
                                    (BLOCK_M, HEAD_DIM), (1, 0))
        tl.store(o_block, acc.to(Out.type.element_ty), boundary_check=(0, ))
    else:
        tl.store(Out + offs_m[:, None] * stride_tok + offs_d[None, :], acc.to(Out.type.element_ty), mask=row_ok)


@triton.jit
def _attn_bwd_preprocess(O, DO, Delta, N_CTX, BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr):
    off_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    off_hz = tl.program_id(1)
    off_n = tl.arange(0, HEAD_DIM)
    o = tl.load(O + off_hz * HEAD_DIM * N_CTX + off_m[:, None] * HEAD_DIM + off_n[None, :])
    do = tl.load(DO + off_hz * HEAD_DIM * N_CTX + off_m[:, None] * HEAD_DIM + off_n[None, :]).to(tl.float32)
    delta = tl.sum(o * do, axis=1)
    tl.store(Delta + off_hz * N_CTX + off_m, delta)


@triton.jit
def _attn_bwd_dkdv(dk, dv, Q, k, v, DO, M, D, stride_tok, stride_d, BLOCK_M1: tl.constexpr,
                   BLOCK_N1: tl.constexpr, HEAD_DIM: tl.constexpr, start_n, start_m, num_steps, MASK: tl.constexpr):
    # one block of keys against num_steps blocks of queries, working with transposes (keys along rows)
    offs_m = start_m + tl.arange(0, BLOCK_M1)
    offs_n = start_n + tl.arange(0, BLOCK_N1)
    offs_k = tl.arange(0, HEAD_DIM)
    qT_ptrs = Q + offs_m[None, :] * stride_tok + offs_k[:, None] * stride_d
    do_ptrs = DO + offs_m[:, None] * stride_tok + offs_k[None, :] * stride_d
    tl.static_assert(BLOCK_N1 % BLOCK_M1 == 0)
    curr_m = start_m
    step_m = BLOCK_M1
    for blk_idx in range(num_steps):
        qT = tl.load(qT_ptrs)
        offs_m = curr_m + tl.arange(0, BLOCK_M1)
        m = tl.load(M + offs_m)
        qkT = tl.dot(k, qT)            # k was pre-scaled by sm_scale / log 2: these are base-2 logits
        pT = tl.math.exp2(qkT - m[None, :])
        if MASK:
            mask = (offs_m[None, :] >= offs_n[:, None])
            pT = tl.where(mask, pT, 0.0)
        do = tl.load(do_ptrs)
        ppT = pT.to(tl.float16)
        dv += tl.dot(ppT, do)
        Di = tl.load(D + offs_m)
        dpT = tl.dot(v, tl.trans(do)).to(tl.float32)
        dsT = pT * (dpT - Di[None, :])
        dsT = dsT.to(tl.float16)
        dk += tl.dot(dsT, tl.trans(qT))
        curr_m += step_m
        qT_ptrs += step_m * stride_tok
        do_ptrs += step_m * stride_tok
    return dk, dv


@triton.jit
def _attn_bwd_dq(dq, q, K, V, do, m, D, stride_tok, stride_d, BLOCK_M2: tl.constexpr, BLOCK_N2: tl.constexpr,
                 HEAD_DIM: tl.constexpr, start_m, start_n, num_steps, MASK: tl.constexpr):
    # one block of queries against num_steps blocks of keys
    offs_m = start_m + tl.arange(0, BLOCK_M2)
    offs_n = start_n + tl.arange(0, BLOCK_N2)
    offs_k = tl.arange(0, HEAD_DIM)
    kT_ptrs = K + offs_n[None, :] * stride_tok + offs_k[:, None] * stride_d
    vT_ptrs = V + offs_n[None, :] * stride_tok + offs_k[:, None] * stride_d
    Di = tl.load(D + offs_m)
    tl.static_assert(BLOCK_M2 % BLOCK_N2 == 0)
    curr_n = start_n
    step_n = BLOCK_N2
    for blk_idx in range(num_steps):
        kT = tl.load(kT_ptrs)
        vT = tl.load(vT_ptrs)
        qk = tl.dot(q, kT)
        p = tl.math.exp2(qk - m)
        if MASK:
            offs_n = curr_n + tl.arange(0, BLOCK_N2)
            mask = (offs_m[:, None] >= offs_n[None, :])
            p = tl.where(mask, p, 0.0)
        dp = tl.dot(do, vT).to(tl.float32)
        ds = p * (dp - Di[:, None])
        ds = ds.to(tl.float16)
        dq += tl.dot(ds, tl.trans(kT))   # kT is pre-scaled: dq is scaled back by log 2 at the end
        curr_n += step_n
        kT_ptrs += step_n * stride_tok
        vT_ptrs += step_n * stride_tok
    return dq


@triton.jit
def _attn_bwd(Q, K, V, sm_scale, DO, DQ, DK, DV, M, D, stride_z, stride_h, stride_tok, stride_d, H, N_CTX,
              BLOCK_M1: tl.constexpr, BLOCK_N1: tl.constexpr, BLOCK_M2: tl.constexpr, BLOCK_N2: tl.constexpr,
              BLK_SLICE_FACTOR: tl.constexpr, HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr):
    LN2: tl.constexpr = 0.6931471824645996
    bhid = tl.program_id(2)
    off_chz = (bhid * N_CTX).to(tl.int64)
    adj = (stride_h * (bhid % H) + stride_z * (bhid // H)).to(tl.int64)
    pid = tl.program_id(0)
    Q += adj
    K += adj
    V += adj
    DO += adj
    DQ += adj
    DK += adj
    DV += adj
    M += off_chz
    D += off_chz
    offs_k = tl.arange(0, HEAD_DIM)

    # dk, dv of key block pid: causal: the diagonal in finer masked steps, then the query blocks below it
    start_n = pid * BLOCK_N1
    offs_n = start_n + tl.arange(0, BLOCK_N1)
    dv = tl.zeros([BLOCK_N1, HEAD_DIM], dtype=tl.float32)
    dk = tl.zeros([BLOCK_N1, HEAD_DIM], dtype=tl.float32)
    k = tl.load(K + offs_n[:, None] * stride_tok + offs_k[None, :] * stride_d)
    v = tl.load(V + offs_n[:, None] * stride_tok + offs_k[None, :] * stride_d)
    if CAUSAL:
        MASK_BLOCK_M1: tl.constexpr = BLOCK_M1 // BLK_SLICE_FACTOR
        start_m = start_n
        num_steps = BLOCK_N1 // MASK_BLOCK_M1
        dk, dv = _attn_bwd_dkdv(dk, dv, Q, k, v, DO, M, D, stride_tok, stride_d, MASK_BLOCK_M1, BLOCK_N1, HEAD_DIM,
                                start_n, start_m, num_steps, MASK=True)
        start_m += num_steps * MASK_BLOCK_M1
    else:
        start_m = 0
    num_steps = (N_CTX - start_m) // BLOCK_M1
    dk, dv = _attn_bwd_dkdv(dk, dv, Q, k, v, DO, M, D, stride_tok, stride_d, BLOCK_M1, BLOCK_N1, HEAD_DIM,
                            start_n, start_m, num_steps, MASK=False)
    tl.store(DV + offs_n[:, None] * stride_tok + offs_k[None, :] * stride_d, dv)
    dk *= sm_scale
    tl.store(DK + offs_n[:, None] * stride_tok + offs_k[None, :] * stride_d, dk)

    # dq of query block pid: causal: the diagonal in finer masked steps, then the key blocks left of it
    start_m = pid * BLOCK_M2
    offs_m = start_m + tl.arange(0, BLOCK_M2)
    q = tl.load(Q + offs_m[:, None] * stride_tok + offs_k[None, :] * stride_d)
    dq = tl.zeros([BLOCK_M2, HEAD_DIM], dtype=tl.float32)
    do = tl.load(DO + offs_m[:, None] * stride_tok + offs_k[None, :] * stride_d)
    m = tl.load(M + offs_m)
    m = m[:, None]
    if CAUSAL:
        MASK_BLOCK_N2: tl.constexpr = BLOCK_N2 // BLK_SLICE_FACTOR
        end_n = start_m + BLOCK_M2
        num_steps = BLOCK_M2 // MASK_BLOCK_N2
        dq = _attn_bwd_dq(dq, q, K, V, do, m, D, stride_tok, stride_d, BLOCK_M2, MASK_BLOCK_N2, HEAD_DIM, start_m,
                          end_n - num_steps * MASK_BLOCK_N2, num_steps, MASK=True)
        end_n -= num_steps * MASK_BLOCK_N2
    else:
        end_n = N_CTX
    num_steps = end_n // BLOCK_N2
    dq = _attn_bwd_dq(dq, q, K, V, do, m, D, stride_tok, stride_d, BLOCK_M2, BLOCK_N2, HEAD_DIM, start_m,
                      end_n - num_steps * BLOCK_N2, num_steps, MASK=False)
    dq *= LN2
    tl.store(DQ + offs_m[:, None] * stride_tok + offs_k[None, :] * stride_d, dq)


def _inputs(rng, Z, H, N, D):
    def t(std):
        return (rng.standard_normal((Z, H, N, D)) * std).astype(np.float16)
    return t(0.5), t(0.5), t(0.5), t(1.0)


def _reference(q, k, v, do, causal, sm_scale):
    """float64 attention output, log-sum-exp (base 2, of the scaled logits) and gradients."""
    q, k, v, do = (a.astype(np.float64) for a in (q, k, v, do))
    s = q @ k.swapaxes(-1, -2) * sm_scale
    if causal:
        n = s.shape[-1]
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    mx = s.max(axis=-1, keepdims=True)
    e = np.exp(s - mx)
    p = e / e.sum(axis=-1, keepdims=True)
    lse2 = (mx[..., 0] + np.log(e.sum(axis=-1))) / np.log(2)
    o = p @ v
    dv = p.swapaxes(-1, -2) @ do
    dp = do @ v.swapaxes(-1, -2)
    ds = p * (dp - (do * o).sum(axis=-1, keepdims=True))
    return o, lse2, ds @ k * sm_scale, ds.swapaxes(-1, -2) @ q * sm_scale, dv


def _forward(q, k, v, causal, sm_scale, BLOCK_M, BLOCK_N, block_ptr=False):
    Z, H, N, D = q.shape
    o = np.full_like(q, np.float16(np.nan))
    m = np.zeros((Z, H, N), np.float32)
    st = [s // q.itemsize for s in q.strides]
    _attn_fwd[(triton.cdiv(N, BLOCK_M), Z * H)](q, k, v, sm_scale, m, o, st[0], st[1], st[2], H, N, HEAD_DIM=D,
                                               BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, STAGE=3 if causal else 1,
                                               BLOCK_PTR=block_ptr)
    return o, m


_FWD = [
    (1, 2, 128, 16, 32, 32, False),
    (1, 2, 128, 32, 64, 32, False),     # two key blocks per diagonal block
    (2, 1, 100, 64, 64, 32, False),     # N not a multiple of the blocks: masked query rows and keys
]


@pytest.mark.parametrize("causal,Z,H,N,D,BLOCK_M,BLOCK_N,block_ptr",
                         [(c, *shape) for shape in _FWD for c in (False, True)]
                         # through block pointers (boundary checks, zero padding), causal: both stages
                         + [(True, 2, 1, 100, 32, 64, 32, True)])
def test_attention_fwd(backend, rng, causal, Z, H, N, D, BLOCK_M, BLOCK_N, block_ptr):
    backend.require("dot-fp16")
    sm_scale = 0.5
    q, k, v, do = _inputs(rng, Z, H, N, D)
    o, m = _forward(q, k, v, causal, sm_scale, BLOCK_M, BLOCK_N, block_ptr)
    o_ref, lse2_ref, *_ = _reference(q, k, v, do, causal, sm_scale)
    # p is rounded to fp16 before the dot with v, as in the tutorial
    np.testing.assert_allclose(o.astype(np.float64), o_ref, rtol=0, atol=1e-2)
    np.testing.assert_allclose(m, lse2_ref, rtol=1e-4, atol=1e-3)


# the forward's blocks for each D, so that the forwards compiled above are reused
@pytest.mark.parametrize("causal,D,BLOCK_M,BLOCK_N", [(False, 16, 32, 32), (True, 16, 32, 32), (True, 32, 64, 32)])
def test_attention_bwd(backend, rng, causal, D, BLOCK_M, BLOCK_N):
    backend.require("dot-fp16")
    Z, H, N = 1, 2, 128
    sm_scale = 0.5
    q, k, v, do = _inputs(rng, Z, H, N, D)
    o, m = _forward(q, k, v, causal, sm_scale, BLOCK_M, BLOCK_N)

    delta = np.zeros_like(m)
    PRE_BLOCK = 32
    _attn_bwd_preprocess[(N // PRE_BLOCK, Z * H)](o, do, delta, N, BLOCK_M=PRE_BLOCK, HEAD_DIM=D)
    np.testing.assert_allclose(delta, (o.astype(np.float64) * do.astype(np.float64)).sum(axis=-1), rtol=1e-3,
                               atol=1e-3)

    BLOCK_M1, BLOCK_N1, BLOCK_M2, BLOCK_N2 = 32, 64, 64, 32   # masked steps of 16 (tl.dot needs 16)
    RCP_LN2 = 1.4426950408889634
    arg_k = (k.astype(np.float32) * np.float32(sm_scale * RCP_LN2)).astype(np.float16)
    dq, dk, dv = (np.full_like(q, np.float16(np.nan)) for _ in range(3))
    st = [s // q.itemsize for s in q.strides]
    _attn_bwd[(N // BLOCK_N1, 1, Z * H)](q, arg_k, v, sm_scale, do, dq, dk, dv, m, delta, st[0], st[1], st[2], st[3],
                                         H, N, BLOCK_M1=BLOCK_M1, BLOCK_N1=BLOCK_N1, BLOCK_M2=BLOCK_M2,
                                         BLOCK_N2=BLOCK_N2, BLK_SLICE_FACTOR=2, HEAD_DIM=D, CAUSAL=causal)
    _, _, dq_ref, dk_ref, dv_ref = _reference(q, k, v, do, causal, sm_scale)
    for name, got, want in (("dv", dv, dv_ref), ("dk", dk, dk_ref), ("dq", dq, dq_ref)):
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=0, atol=2e-2, err_msg=name)
