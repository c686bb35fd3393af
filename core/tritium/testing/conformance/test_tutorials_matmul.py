"""The kernel patterns of Triton's tutorials 03 (matrix multiplication: grouped program order, a K loop with masked
tails, fp16 inputs accumulated in fp32, an activation fused through a @jit helper) and 08 (grouped GEMM: per-group
pointers loaded from a pointer array, per-group sizes, a persistent loop over the tiles of all groups)."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl

from .reference import address, to_backend, to_host

# -- 03 matrix multiplication ---------------------------------------------------------------------------


@triton.jit
def leaky_relu(x):
    return tl.where(x >= 0, x, 0.01 * x)


@triton.jit
def _matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
            BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
            GROUP_SIZE_M: tl.constexpr, ACTIVATION: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    # programs are numbered group by group: GROUP_SIZE_M block rows share the columns of B they read
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)   # the last group may be smaller
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    # rows and columns wrap around (% M, % N): the loads need no mask, the store masks the tail instead
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)

    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        # the K tail reads zeros, which add nothing to the dot
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    if ACTIVATION == "leaky_relu":
        accumulator = leaky_relu(accumulator)
    c = accumulator.to(tl.float16)

    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


def _fp16(rng, shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float16)


def _assert_fp16_close(got: np.ndarray, want: np.ndarray, k: int) -> None:
    # fp32 accumulation of k fp16 products, rounded once to fp16: the final rounding dominates
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=2e-3, atol=2e-3 * max(1.0, np.sqrt(k) / 4))


@pytest.mark.parametrize("M,N,K,blocks,group,activation", [
    (100, 72, 90, (32, 32, 32), 2, "leaky_relu"),    # tails on every axis, 3 K iterations, a partial last group
    (128, 128, 64, (64, 32, 16), 8, ""),             # one group spans all block rows
    (33, 200, 17, (16, 64, 16), 1, "leaky_relu"),    # GROUP_SIZE_M=1 is plain row-major order
])
def test_matmul(backend, rng, M, N, K, blocks, group, activation):
    backend.require("dot-fp16")
    BM, BN, BK = blocks
    a = _fp16(rng, (M, K))
    b = _fp16(rng, (N, K)).T          # a column-major B: the strides, not the layout, say where elements are
    c = np.full((M, N), np.float16(np.nan))
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_SIZE_M"]) * triton.cdiv(N, meta["BLOCK_SIZE_N"]), )  # noqa: E731
    if not backend.has("host-memory"):
        b = np.ascontiguousarray(b)   # device copies are made contiguous
    _matmul[grid](a, b, c, M, N, K, a.strides[0] // 2, a.strides[1] // 2, b.strides[0] // 2, b.strides[1] // 2,
                  c.strides[0] // 2, c.strides[1] // 2, BLOCK_SIZE_M=BM, BLOCK_SIZE_N=BN, BLOCK_SIZE_K=BK,
                  GROUP_SIZE_M=group, ACTIVATION=activation)
    want = a.astype(np.float64) @ b.astype(np.float64)
    if activation == "leaky_relu":
        want = np.where(want >= 0, want, 0.01 * want)
    assert not np.isnan(c).any(), "some tiles of C were never written: the grouped order missed programs"
    _assert_fp16_close(c, want, K)


_CONFIGS = [
    triton.Config({"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 2}, num_stages=3,
                  num_warps=4),
    triton.Config({"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 16, "GROUP_SIZE_M": 1}, num_stages=2,
                  num_warps=2),
]
_matmul_tuned = triton.autotune(configs=_CONFIGS, key=["M", "N", "K"], warmup=1, rep=1)(_matmul)


def test_matmul_autotuned(backend, rng):
    """The tutorial's launch: the autotuner picks block sizes per (M, N, K), the grid reads them from META."""
    backend.require("dot-fp16")
    grid = lambda META: (triton.cdiv(META["M"], META["BLOCK_SIZE_M"]) *  # noqa: E731
                         triton.cdiv(META["N"], META["BLOCK_SIZE_N"]), )
    _matmul_tuned.cache.clear()
    for M, N, K in [(70, 50, 40), (70, 50, 40), (33, 96, 20)]:
        a, b = _fp16(rng, (M, K)), _fp16(rng, (K, N))
        c = np.full((M, N), np.float16(np.nan))
        _matmul_tuned[grid](a, b, c, M, N, K, K, 1, N, 1, N, 1, ACTIVATION="leaky_relu")
        want = a.astype(np.float64) @ b.astype(np.float64)
        assert _matmul_tuned.best_config in _CONFIGS
        assert not np.isnan(c).any()
        _assert_fp16_close(c, np.where(want >= 0, want, 0.01 * want), K)
    assert len(_matmul_tuned.cache) == 2, "one tuning per distinct key"


# -- 08 grouped GEMM ------------------------------------------------------------------------------------


@triton.jit
def _grouped_matmul(group_a_ptrs, group_b_ptrs, group_c_ptrs, group_gemm_sizes, g_lds, group_size,
                    NUM_SM: tl.constexpr, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                    BLOCK_SIZE_K: tl.constexpr):
    # a fixed number of programs walks the tiles of every problem: tile t goes to program t % NUM_SM
    tile_idx = tl.program_id(0)
    last_problem_end = 0
    for g in range(group_size):
        gm = tl.load(group_gemm_sizes + g * 3)
        gn = tl.load(group_gemm_sizes + g * 3 + 1)
        gk = tl.load(group_gemm_sizes + g * 3 + 2)
        num_m_tiles = tl.cdiv(gm, BLOCK_SIZE_M)
        num_n_tiles = tl.cdiv(gn, BLOCK_SIZE_N)
        num_tiles = num_m_tiles * num_n_tiles
        while (tile_idx >= last_problem_end and tile_idx < last_problem_end + num_tiles):
            lda = tl.load(g_lds + g * 3)
            ldb = tl.load(g_lds + g * 3 + 1)
            ldc = tl.load(g_lds + g * 3 + 2)
            # the problem's matrices: addresses stored as integers, turned back into typed pointers
            a_ptr = tl.load(group_a_ptrs + g).to(tl.pointer_type(tl.float16))
            b_ptr = tl.load(group_b_ptrs + g).to(tl.pointer_type(tl.float16))
            c_ptr = tl.load(group_c_ptrs + g).to(tl.pointer_type(tl.float16))
            tile_idx_in_gemm = tile_idx - last_problem_end
            tile_m_idx = tile_idx_in_gemm // num_n_tiles
            tile_n_idx = tile_idx_in_gemm % num_n_tiles

            offs_am = tile_m_idx * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
            offs_bn = tile_n_idx * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
            offs_k = tl.arange(0, BLOCK_SIZE_K)
            a_ptrs = a_ptr + offs_am[:, None] * lda + offs_k[None, :]
            b_ptrs = b_ptr + offs_k[:, None] * ldb + offs_bn[None, :]
            accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
            for kk in range(0, tl.cdiv(gk, BLOCK_SIZE_K)):
                # the tutorial's hints, whose results it discards: they must change nothing (the ragged
                # problems here would make them false)
                tl.multiple_of(a_ptrs, [16, 16])
                tl.multiple_of(b_ptrs, [16, 16])
                k_left = gk - kk * BLOCK_SIZE_K
                a = tl.load(a_ptrs, mask=(offs_am[:, None] < gm) & (offs_k[None, :] < k_left), other=0.0)
                b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_bn[None, :] < gn), other=0.0)
                accumulator += tl.dot(a, b)
                a_ptrs += BLOCK_SIZE_K
                b_ptrs += BLOCK_SIZE_K * ldb
            c = accumulator.to(tl.float16)
            c_ptrs = c_ptr + ldc * offs_am[:, None] + offs_bn[None, :]
            tl.store(c_ptrs, c, mask=(offs_am[:, None] < gm) & (offs_bn[None, :] < gn))
            tile_idx += NUM_SM
        last_problem_end = last_problem_end + num_tiles


@triton.jit
def _pointer_roundtrip(x_ptr, addr_ptr, y_ptr, N: tl.constexpr):
    # an address kept as an integer in memory, then typed again with tl.pointer_type
    tl.store(addr_ptr, x_ptr.to(tl.int64))
    # the store is one thread's and the load every thread's: as in Triton, nothing orders a global store before
    # other threads' later loads of it but a barrier (without it the GPU emulator read 0 now and then, and crashed)
    tl.debug_barrier()
    p = tl.load(addr_ptr).to(tl.pointer_type(tl.float32))
    tl.store(y_ptr + tl.arange(0, N), tl.load(p + tl.arange(0, N)) * 2)


def test_pointer_from_integer(backend, rng):
    x = rng.standard_normal(64).astype(np.float32)
    addr, y = np.zeros(1, np.int64), np.zeros(64, np.float32)
    _pointer_roundtrip[(1, )](x, addr, y, 64)
    np.testing.assert_array_equal(y, x * 2)


@pytest.mark.parametrize("sizes,num_sm", [
    ([(64, 64, 64), (32, 96, 48), (100, 40, 70), (16, 16, 16)], 4),   # aligned and ragged problems
    ([(128, 32, 32), (1, 1, 1), (50, 70, 33)], 3),
    ([(40, 40, 40)] * 3, 16),                                         # more programs than tiles
])
def test_grouped_gemm(backend, rng, sizes, num_sm):
    backend.require("dot-fp16")
    if not backend.has("host-memory"):
        pytest.importorskip("torch")
    a_addr, b_addr, c_addr, lds, outs, wants = [], [], [], [], [], []
    kept = []                          # the kernel sees only addresses: keep the arrays alive through the launch
    for m, n, k in sizes:
        a, b = (to_backend(backend, x) for x in (_fp16(rng, (m, k)), _fp16(rng, (k, n))))
        c = to_backend(backend, np.full((m, n), np.float16(np.nan)))
        kept += [a, b]
        a_addr.append(address(a))
        b_addr.append(address(b))
        c_addr.append(address(c))
        outs.append(c)
        lds += [k, n, n]
        wants.append(to_host(a).astype(np.float64) @ to_host(b).astype(np.float64))
    g_sizes = np.array(sizes, np.int32).reshape(-1)
    _grouped_matmul[(num_sm, )](np.array(a_addr, np.int64), np.array(b_addr, np.int64), np.array(c_addr, np.int64),
                                g_sizes, np.array(lds, np.int32), len(sizes), NUM_SM=num_sm, BLOCK_SIZE_M=32,
                                BLOCK_SIZE_N=32, BLOCK_SIZE_K=16)
    for (m, n, k), out, want in zip(sizes, outs, wants):
        got = to_host(out)
        assert not np.isnan(got).any(), f"problem {(m, n, k)}: tiles never written"
        _assert_fp16_close(got, want, k)
