"""``num_ctas > 1``: each program runs on a cluster of that many CTAs (sm_90 thread-block clusters), launched as
Triton launches them (grid x times num_ctas CTAs, clusters along x), with ``tl.program_id``/``tl.num_programs``
counting programs (clusters), not CTAs. Results must equal ``num_ctas=1``'s, and side effects (stores, atomics,
prints, asserts) happen once per program, not once per CTA: an atomic counter or a ticket taken with an atomic
tells. Every test runs on the GPU emulator (which lays clusters out as the GPU launcher does) and, where there
is one, on an NVIDIA GPU of sm_90 or newer."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hopper import example08  # noqa: E402

CTAS = [2, 4]


@pytest.fixture
def cdev(dev):
    if dev.name == "cuda":
        import torch
        if torch.cuda.get_device_capability()[0] < 9:
            pytest.skip("thread-block clusters need an sm_90 or newer GPU")
    return dev


@triton.jit
def _ids(out_ptr):
    i = tl.program_id(0)
    j = tl.program_id(1)
    k = tl.program_id(2)
    n0 = tl.num_programs(0)
    n1 = tl.num_programs(1)
    n2 = tl.num_programs(2)
    slot = ((k * n1 + j) * n0 + i) * 4
    # an add, not a store: a program run by several CTAs would count more than 1
    tl.atomic_add(out_ptr + slot, 1)
    tl.store(out_ptr + slot + 1, i + 10 * j + 100 * k)
    tl.store(out_ptr + slot + 2, n0 + 10 * n1 + 100 * n2)


@pytest.mark.parametrize("ctas", CTAS)
@pytest.mark.parametrize("grid", [(1, 1, 1), (3, 1, 1), (5, 2, 3)])
def test_program_ids_count_clusters(cdev, ctas, grid):
    n = grid[0] * grid[1] * grid[2]
    out = cdev.put(np.zeros(n * 4, np.int32))
    _ids[grid](out, num_ctas=ctas)
    got = cdev.get(out).reshape(grid[2], grid[1], grid[0], 4)
    k, j, i = np.meshgrid(range(grid[2]), range(grid[1]), range(grid[0]), indexing="ij")
    np.testing.assert_array_equal(got[..., 0], np.ones_like(i))
    np.testing.assert_array_equal(got[..., 1], i + 10 * j + 100 * k)
    np.testing.assert_array_equal(got[..., 2], np.full_like(i, grid[0] + 10 * grid[1] + 100 * grid[2]))


@triton.jit
def _add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0 + tl.load(y_ptr + offs, mask=mask), mask=mask)


@pytest.mark.parametrize("ctas", CTAS)
def test_elementwise(cdev, ctas):
    n = 3000
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    out = cdev.put(np.full(n + 7, -1.0, np.float32))
    _add[(triton.cdiv(n, 512), )](cdev.put(x), cdev.put(y), out, n, BLOCK=512, num_ctas=ctas)
    got = cdev.get(out)
    np.testing.assert_array_equal(got[:n], x * 2 + y)
    np.testing.assert_array_equal(got[n:], -1.0)


@triton.jit
def _reduce(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    rows = tl.program_id(0) * M + tl.arange(0, M)
    x = tl.load(x_ptr + rows[:, None] * N + tl.arange(0, N)[None, :])
    # along both axes, a scan, and a softmax: whichever dimension a split would take, something crosses it
    tl.store(out_ptr + rows, tl.sum(x, axis=1))
    tl.atomic_add(out_ptr + M * tl.num_programs(0) + tl.arange(0, N), tl.max(x, axis=0))
    tl.store(out_ptr + M * tl.num_programs(0) + N + rows, tl.max(tl.cumsum(x, axis=1), axis=1))
    e = tl.exp(x - tl.max(x, axis=1)[:, None])
    sm = e / tl.sum(e, axis=1)[:, None]
    tl.store(out_ptr + M * tl.num_programs(0) + N + M * tl.num_programs(0) + rows[:, None] * N
             + tl.arange(0, N)[None, :], sm)


@pytest.mark.parametrize("ctas", CTAS)
def test_reductions_scans_softmax(cdev, ctas):
    M, N, P = 16, 64, 3
    x = np.random.default_rng(1).integers(-8, 8, (M * P, N)).astype(np.float32)
    out = cdev.put(np.zeros(M * P + N + M * P + M * P * N, np.float32))
    _reduce[(P, )](cdev.put(x), out, M, N, num_ctas=ctas)
    got = cdev.get(out)
    np.testing.assert_array_equal(got[:M * P], x.sum(1))
    # each program added its column maxima once
    np.testing.assert_array_equal(got[M * P:M * P + N], x.reshape(P, M, N).max(1).sum(0))
    np.testing.assert_array_equal(got[M * P + N:2 * M * P + N], np.cumsum(x, 1).max(1))
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(got[2 * M * P + N:].reshape(M * P, N), e / e.sum(1, keepdims=True), rtol=1e-5,
                               atol=1e-6)


@triton.jit
def _tickets(counter_ptr, hist_ptr, out_ptr, x_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    # the value an atomic returns feeds later work: a program must see its own ticket, and take one only
    ticket = tl.atomic_add(counter_ptr, 1)
    tl.store(out_ptr + ticket, pid)
    x = tl.load(x_ptr + pid * BLOCK + tl.arange(0, BLOCK))
    tl.atomic_add(hist_ptr + (x % 8), 1)
    old = tl.atomic_xchg(out_ptr + 64 + pid, ticket + 1)
    tl.atomic_max(counter_ptr + 1, old + 1000)
    tl.atomic_cas(counter_ptr + 2 + pid, 0, ticket + 7)


@pytest.mark.parametrize("ctas", CTAS)
def test_atomics_apply_once(cdev, ctas):
    P, BLOCK = 9, 128
    x = np.random.default_rng(2).integers(0, 100, P * BLOCK).astype(np.int32)
    counter = cdev.put(np.zeros(2 + P, np.int32))
    hist = cdev.put(np.zeros(8, np.int32))
    out = cdev.put(np.full(64 + P, -5, np.int32))
    _tickets[(P, )](counter, hist, out, cdev.put(x), BLOCK, num_ctas=ctas)
    counter, hist, out = cdev.get(counter), cdev.get(hist), cdev.get(out)
    assert counter[0] == P
    assert counter[1] == 995
    np.testing.assert_array_equal(np.sort(out[:P]), np.arange(P))        # every program drew one ticket
    assert (out[P:64] == -5).all()
    tickets = np.empty(P, np.int64)
    tickets[out[:P]] = np.arange(P)                                       # ticket of program p
    np.testing.assert_array_equal(out[64:], tickets + 1)
    np.testing.assert_array_equal(counter[2:], tickets + 7)
    np.testing.assert_array_equal(hist, np.bincount(x % 8, minlength=8))


@triton.jit
def _matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        kk = k * BK + offs_k
        a = tl.load(a_ptr + offs_m[:, None] * K + kk[None, :], mask=(offs_m[:, None] < M) & (kk[None, :] < K),
                    other=0.0)
        b = tl.load(b_ptr + kk[:, None] * N + offs_n[None, :], mask=(kk[:, None] < K) & (offs_n[None, :] < N),
                    other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@pytest.mark.parametrize("ctas", CTAS)
@pytest.mark.parametrize("blocks,stages", [((32, 32, 16), 1), ((64, 64, 32), 3)])
def test_dot(cdev, ctas, blocks, stages):
    M, N, K = 96, 80, 100
    BM, BN, BK = blocks
    if cdev.name == "cuda":
        M, N, K, BM, BN, BK = 300, 520, 256, BM * 2, BN * 2, BK
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((M, K)).astype(np.float16), rng.standard_normal((K, N)).astype(np.float16)
    c = cdev.put(np.zeros((M, N), np.float32))
    k = _matmul[(triton.cdiv(M, BM), triton.cdiv(N, BN))](cdev.put(a), cdev.put(b), c, M, N, K, BM, BN, BK,
                                                           num_ctas=ctas, num_stages=stages, num_warps=4)
    np.testing.assert_allclose(cdev.get(c), a.astype(np.float64) @ b.astype(np.float64), rtol=1e-2, atol=1e-2)
    # N is shared out across the cluster where each CTA gets at least 16 columns (N masked at the edge)
    assert ("tritium.cluster_split" in k.asm["ttgir"]) == (BN // ctas >= 16)


@triton.jit
def _matmul_epilogue(a_ptr, b_ptr, bias_ptr, c_ptr, colsum_ptr, rowsum_ptr, counter_ptr, M, N, K, ROWSUM: tl.constexpr,
                     COUNT: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.program_id(1) * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + offs_m[:, None] * K + (k + offs_k)[None, :], mask=offs_m[:, None] < M, other=0.0)
        b = tl.load(b_ptr + (k + offs_k)[:, None] * N + offs_n[None, :], mask=offs_n[None, :] < N, other=0.0)
        acc = tl.dot(a, b, acc)
    bias = tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0)
    acc = tl.maximum(acc + bias[None, :], 0.0)
    keep = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=keep)
    # a sum over M keeps N: each CTA adds its own columns
    tl.atomic_add(colsum_ptr + offs_n, tl.sum(tl.where(keep, acc, 0.0), axis=0), mask=offs_n < N)
    if ROWSUM:   # a sum along N needs every column in one CTA: the one-CTA form
        tl.atomic_add(rowsum_ptr + offs_m, tl.sum(tl.where(keep, acc, 0.0), axis=1), mask=offs_m < M)
    if COUNT:    # a scalar atomic would be repeated by every CTA of a split: the one-CTA form
        tl.atomic_add(counter_ptr, 1)


@pytest.mark.parametrize("ctas", CTAS)
@pytest.mark.parametrize("rowsum,count", [(False, False), (True, False), (False, True)])
def test_dot_epilogue_split_or_not(cdev, ctas, rowsum, count):
    M, N, K = 80, 200, 64
    BM, BN, BK = (32, 64, 32) if cdev.name == "emu" else (64, 128, 32)
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((M, K)).astype(np.float16), rng.standard_normal((K, N)).astype(np.float16)
    bias = rng.standard_normal(N).astype(np.float32)
    c, colsum = cdev.put(np.zeros((M, N), np.float32)), cdev.put(np.zeros(N, np.float32))
    rows, counter = cdev.put(np.zeros(M, np.float32)), cdev.put(np.zeros(1, np.int32))
    grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
    k = _matmul_epilogue[grid](cdev.put(a), cdev.put(b), cdev.put(bias), c, colsum, rows, counter, M, N, K, rowsum,
                               count, BM, BN, BK, num_ctas=ctas, num_warps=4)
    ref = np.maximum(a.astype(np.float64) @ b.astype(np.float64) + bias, 0)
    np.testing.assert_allclose(cdev.get(c), ref, rtol=1e-2, atol=1e-2)
    np.testing.assert_allclose(cdev.get(colsum), ref.sum(0), rtol=1e-2, atol=5e-2)
    if rowsum:
        np.testing.assert_allclose(cdev.get(rows), ref.sum(1), rtol=1e-2, atol=5e-2)
    assert cdev.get(counter)[0] == (grid[0] * grid[1] if count else 0)
    assert ("tritium.cluster_split" in k.asm["ttgir"]) == (not rowsum and not count and BN // ctas >= 16)


@triton.jit
def _desc_matmul(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(a_desc.load([pid_m * BM, k]), b_desc.load([k, pid_n * BN]), acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(tl.float16))


@pytest.mark.parametrize("ctas", CTAS)
def test_descriptor_matmul(cdev, ctas):
    from tritium.tools.tensor_descriptor import TensorDescriptor
    M, N, K = 256, 512, 192
    BM, BN, BK = (128, 256, 64) if cdev.name == "cuda" else (32, 64, 32)
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((M, K)).astype(np.float16), rng.standard_normal((K, N)).astype(np.float16)
    a_d, b_d, c_d = cdev.put(a), cdev.put(b), cdev.put(np.zeros((M, N), np.float16))
    descs = (TensorDescriptor.from_tensor(a_d, [BM, BK]), TensorDescriptor.from_tensor(b_d, [BK, BN]),
             TensorDescriptor.from_tensor(c_d, [BM, BN]))
    k = _desc_matmul[(M // BM, N // BN)](*descs, K, BM, BN, BK, num_ctas=ctas,
                                         num_warps=8 if cdev.name == "cuda" else 4, num_stages=3)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(cdev.get(c_d).astype(np.float64), ref, rtol=2e-2, atol=5e-2)
    # each CTA copies its part of B's block and stores its part of C's (the descriptors' blocks split along N)
    assert "tritium.cluster_split" in k.asm["ttgir"]


@triton.jit
def _print(x_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.device_print("cl: ", x)


@pytest.mark.parametrize("ctas", CTAS)
def test_device_print_once_per_program(cdev, ctas, capfd):
    x = np.arange(8, dtype=np.int32) * 3
    _print[(2, )](cdev.put(x), 8, num_ctas=ctas)
    cdev.sync()
    out = capfd.readouterr().out
    lines = [line for line in out.splitlines() if "cl: " in line]
    assert len(lines) == 16, out
    assert "pid (1, 0, 0) idx (7) cl: 21" in out
    assert "pid (2, 0, 0)" not in out


@triton.jit
def _assert(x_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.program_id(0) * N + tl.arange(0, N))
    tl.device_assert(x < 5, "x too big")


@pytest.mark.parametrize("ctas", CTAS)
def test_device_assert_names_the_program(cdev, ctas):
    x = np.zeros(16, np.int32)
    x[12] = 9
    with pytest.raises(AssertionError, match=r"x too big.*program id \(1, 0, 0\)"):
        _assert[(2, )](cdev.put(x), 8, debug=True, num_ctas=ctas)
        cdev.sync()


@triton.jit
def _dot_then_reread(a_ptr, b_ptr, scratch_ptr, out_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.dot(tl.load(a_ptr + rm[:, None] * BK + rk[None, :]), tl.load(b_ptr + rk[:, None] * BN + rn[None, :]))
    tl.store(scratch_ptr + rm[:, None] * BN + rn[None, :], acc)
    tl.debug_barrier()
    # columns another CTA of a split would have computed: this program must see them all
    flipped = tl.load(scratch_ptr + rm[:, None] * BN + (BN - 1 - rn)[None, :])
    tl.store(out_ptr + rm[:, None] * BN + rn[None, :], flipped + acc)


@pytest.mark.parametrize("ctas", CTAS)
def test_dot_reading_what_it_stored_is_not_split(cdev, ctas):
    BM, BN, BK = 32, 64, 16
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal((BM, BK)).astype(np.float16), rng.standard_normal((BK, BN)).astype(np.float16)
    scratch, out = cdev.put(np.zeros((BM, BN), np.float32)), cdev.put(np.zeros((BM, BN), np.float32))
    k = _dot_then_reread[(1, )](cdev.put(a), cdev.put(b), scratch, out, BM, BN, BK, num_ctas=ctas)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(cdev.get(out), ref + ref[:, ::-1], rtol=1e-2, atol=1e-2)
    assert "tritium.cluster_split" not in k.asm["ttgir"]


@triton.jit
def _dot_shift_in_place(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.dot(tl.load(a_ptr + rm[:, None] * BK + rk[None, :]), tl.load(b_ptr + rk[:, None] * BN + rn[None, :]))
    # C's columns shifted left by one, in place: column n is read where column n - 1 is written
    old = tl.load(c_ptr + rm[:, None] * (BN + 1) + (rn + 1)[None, :])
    tl.store(c_ptr + rm[:, None] * (BN + 1) + rn[None, :], old + acc)


@pytest.mark.parametrize("ctas", CTAS)
def test_dot_shifting_in_place_is_not_split(cdev, ctas):
    BM, BN, BK = 32, 64, 16
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((BM, BK)).astype(np.float16), rng.standard_normal((BK, BN)).astype(np.float16)
    c0 = rng.standard_normal((BM, BN + 1)).astype(np.float32)
    ref = c0.copy()
    ref[:, :BN] = c0[:, 1:] + a.astype(np.float64) @ b.astype(np.float64)
    c = cdev.put(c0.copy())
    k = _dot_shift_in_place[(1, )](cdev.put(a), cdev.put(b), c, BM, BN, BK, num_ctas=ctas)
    np.testing.assert_allclose(cdev.get(c), ref, rtol=1e-2, atol=1e-2)
    assert "tritium.cluster_split" not in k.asm["ttgir"]


@pytest.mark.parametrize("ctas", CTAS)
def test_persistent_descriptor_matmul(cdev, ctas):
    """examples/08's kernel: a persistent loop over tiles (fused with the K loop), B read as (N, K) blocks and
    transposed, C stored through a descriptor; split along N, each CTA of a cluster takes half of every tile."""
    from tritium.tools.tensor_descriptor import TensorDescriptor
    ex = example08()
    if cdev.name == "cuda":
        (M, N, K), (BM, BN, BK, warps), sms = (1024, 1536, 512), (128, 256, 64, 8), 20
    else:
        (M, N, K), (BM, BN, BK, warps), sms = (96, 192, 64), (32, 64, 32, 4), 5
    rng = np.random.default_rng(8)
    a, b = rng.standard_normal((M, K)).astype(np.float16), rng.standard_normal((N, K)).astype(np.float16)
    a_d, b_d, c_d = cdev.put(a), cdev.put(b), cdev.put(np.zeros((M, N), np.float16))
    descs = (TensorDescriptor.from_tensor(a_d, [BM, BK]), TensorDescriptor.from_tensor(b_d, [BN, BK]),
             TensorDescriptor.from_tensor(c_d, [BM, BN]))
    k = ex.matmul_persistent[(sms, )](*descs, M, N, K, BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=8, NUM_SMS=sms,
                                      WARP_SPECIALIZE=False, num_warps=warps, num_stages=3, num_ctas=ctas)
    ref = a.astype(np.float64) @ b.astype(np.float64).T
    np.testing.assert_allclose(cdev.get(c_d).astype(np.float64), ref, rtol=2e-2, atol=5e-2)
    assert "tritium.cluster_split" in k.asm["ttgir"]


@triton.jit
def _block_ptr_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_bp = tl.make_block_ptr(a_ptr, (M, K), (K, 1), (pid_m * BM, 0), (BM, BK), (1, 0))
    b_bp = tl.make_block_ptr(b_ptr, (K, N), (N, 1), (0, pid_n * BN), (BK, BN), (1, 0))
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, K, BK):
        acc = tl.dot(tl.load(a_bp, boundary_check=(0, 1)), tl.load(b_bp, boundary_check=(0, 1)), acc)
        a_bp = tl.advance(a_bp, (0, BK))
        b_bp = tl.advance(b_bp, (BK, 0))
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@pytest.mark.parametrize("ctas", CTAS)
def test_block_pointer_matmul(cdev, ctas):
    M, N, K = 64, 160, 64
    BM, BN, BK = 32, 64, 32
    rng = np.random.default_rng(9)
    a, b = rng.standard_normal((M, K)).astype(np.float16), rng.standard_normal((K, N)).astype(np.float16)
    c = cdev.put(np.zeros((M, N), np.float32))
    k = _block_ptr_matmul[(triton.cdiv(M, BM), triton.cdiv(N, BN))](cdev.put(a), cdev.put(b), c, M, N, K, BM, BN, BK,
                                                                      num_ctas=ctas)
    np.testing.assert_allclose(cdev.get(c), a.astype(np.float64) @ b.astype(np.float64), rtol=1e-2, atol=1e-2)
    # block pointers keep their blocks whole: the one-CTA form
    assert "tritium.cluster_split" not in k.asm["ttgir"]


@triton.jit
def _dot_argmax_over_m(a_ptr, b_ptr, out_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.dot(tl.load(a_ptr + rm[:, None] * BK + rk[None, :]), tl.load(b_ptr + rk[:, None] * BN + rn[None, :]))
    # a reduction of two tensors (values and their row indices) over M: N stays, and both split along it
    tl.store(out_ptr + rn, tl.argmax(acc, axis=0))


@pytest.mark.parametrize("ctas", CTAS)
def test_dot_argmax_over_m_is_split(cdev, ctas):
    BM, BN, BK = 32, 64, 16
    rng = np.random.default_rng(10)
    a, b = rng.standard_normal((BM, BK)).astype(np.float16), rng.standard_normal((BK, BN)).astype(np.float16)
    out = cdev.put(np.full(BN, -1, np.int32))
    k = _dot_argmax_over_m[(1, )](cdev.put(a), cdev.put(b), out, BM, BN, BK, num_ctas=ctas)
    np.testing.assert_array_equal(cdev.get(out), np.argmax(a.astype(np.float32) @ b.astype(np.float32), axis=0))
    assert ("tritium.cluster_split" in k.asm["ttgir"]) == (BN // ctas >= 16)


@triton.jit
def _dot_plus_outer(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.dot(tl.load(a_ptr + rm[:, None] * BK + rk[None, :]), tl.load(b_ptr + rk[:, None] * BN + rn[None, :]))
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)
    # a tile with N along both of its dimensions: a CTA owning half of N cannot hold half of it
    x = rn * 3
    outer = x[:, None] * 1000 + x[None, :]
    tl.store(c_ptr + BM * BN + rn[:, None] * BN + rn[None, :], outer.to(tl.float32))


@pytest.mark.parametrize("ctas", CTAS)
def test_tile_with_n_twice_is_not_split(cdev, ctas):
    BM, BN, BK = 32, 64, 16
    rng = np.random.default_rng(11)
    a, b = rng.standard_normal((BM, BK)).astype(np.float16), rng.standard_normal((BK, BN)).astype(np.float16)
    c = cdev.put(np.zeros(BM * BN + BN * BN, np.float32))
    k = _dot_plus_outer[(1, )](cdev.put(a), cdev.put(b), c, BM, BN, BK, num_ctas=ctas)
    got = cdev.get(c)
    np.testing.assert_allclose(got[:BM * BN].reshape(BM, BN), a.astype(np.float64) @ b.astype(np.float64), rtol=1e-2,
                               atol=1e-2)
    n = np.arange(BN)
    np.testing.assert_array_equal(got[BM * BN:].reshape(BN, BN), n[:, None] * 3000 + n[None, :] * 3)
    assert "tritium.cluster_split" not in k.asm["ttgir"]


@triton.jit
def _batched_dot(a_ptr, b_ptr, c_ptr, B: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rb = tl.arange(0, B)[:, None, None]
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rb * BM * BK + rm[None, :, None] * BK + rk[None, None, :])
    b = tl.load(b_ptr + rb * BK * BN + rk[None, :, None] * BN + rn[None, None, :])
    tl.store(c_ptr + rb * BM * BN + rm[None, :, None] * BN + rn[None, None, :], tl.dot(a, b))


@pytest.mark.parametrize("ctas", CTAS)
def test_batched_dot(cdev, ctas):
    B, BM, BN, BK = 2, 16, 32, 16
    rng = np.random.default_rng(12)
    a, b = rng.standard_normal((B, BM, BK)).astype(np.float16), rng.standard_normal((B, BK, BN)).astype(np.float16)
    c = cdev.put(np.zeros((B, BM, BN), np.float32))
    _batched_dot[(1, )](cdev.put(a), cdev.put(b), c, B, BM, BN, BK, num_ctas=ctas)
    np.testing.assert_allclose(cdev.get(c), a.astype(np.float64) @ b.astype(np.float64), rtol=1e-2, atol=1e-2)
