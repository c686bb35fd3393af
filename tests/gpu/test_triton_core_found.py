"""Wrong answers Triton 3.6's own test_core.py found on an H200 (session 21), each pinned here:

- a dot whose accumulator is loaded (``z = tl.dot(x, y) + tl.load(Z)`` folds into the dot's C operand) in a layout
  that needs converting through shared memory: the conversion took the scratch bytes the wgmma operands had just
  been written to (A at offset 0), so the tensor cores read the accumulator's bytes as A;
- the FMA dot (3-D dots, small tiles) with an fp16 result rounded its running sum to fp16 after every product;
  it now accumulates in f32 and rounds once, as the tensor-core instructions do;
- atomics lost their memory order (LLVM's NVPTX backend drops it): a lock released by ``tl.atomic_xchg`` did not
  publish the critical section's stores.
"""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl


@triton.jit
def _dot_plus_loaded(X, Y, Z, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, PRECISION: tl.constexpr):
    m, n, k = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    x = tl.load(X + m[:, None] * K + k[None, :])
    y = tl.load(Y + k[:, None] * N + n[None, :])
    zs = Z + m[:, None] * N + n[None, :]
    z = tl.dot(x, y, input_precision=PRECISION)
    z += tl.load(zs)
    tl.store(zs, z)


@pytest.mark.parametrize("dtype, precision", [(np.float16, "ieee"), (np.float32, "tf32")])
@pytest.mark.parametrize("shape, warps", [((64, 64, 64), 4), ((128, 128, 64), 4), ((64, 128, 32), 8)])
def test_dot_plus_loaded_accumulator(cuda, dtype, precision, shape, warps):
    import torch
    M, N, K = shape
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((M, K)) * 0.1).astype(dtype)
    y = (rng.standard_normal((K, N)) * 0.1).astype(dtype)
    if precision == "tf32":     # exact in tf32, so the reference needs no tolerance for the rounding of inputs
        x = (x.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
        y = (y.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
    z = (1 + rng.standard_normal((M, N)) * 0.1).astype(np.float32)
    zt = torch.from_numpy(z.copy()).cuda()
    _dot_plus_loaded[(1,)](torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda(), zt, M=M, N=N, K=K,
                           PRECISION=precision, num_warps=warps)
    ref = x.astype(np.float64) @ y.astype(np.float64) + z
    np.testing.assert_allclose(zt.cpu().numpy(), ref, rtol=1e-3, atol=1e-3)


@triton.jit
def _batched_dot(X, Y, O, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    b, m, n, k = tl.arange(0, B), tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    x = tl.load(X + b[:, None, None] * M * K + m[None, :, None] * K + k[None, None, :])
    y = tl.load(Y + b[:, None, None] * K * N + k[None, :, None] * N + n[None, None, :])
    o = tl.dot(x, y, out_dtype=tl.float16)
    tl.store(O + b[:, None, None] * M * N + m[None, :, None] * N + n[None, None, :], o)


def test_fp16_fma_dot_rounds_once(dev):
    """Within one fp16 ulp of the exact result everywhere: a sum rounded to fp16 after each of K=128 products
    misses that by several ulps."""
    B, M, N, K = 2, 16, 16, 128
    rng = np.random.default_rng(11)
    x = rng.uniform(-1, 1, (B, M, K)).astype(np.float16)
    y = rng.uniform(-1, 1, (B, K, N)).astype(np.float16)
    out = dev.put(np.zeros((B, M, N), np.float16))
    _batched_dot[(1,)](dev.put(x), dev.put(y), out, B=B, M=M, N=N, K=K, num_warps=4)
    got = dev.get(out).astype(np.float64)
    exact = x.astype(np.float64) @ y.astype(np.float64)
    ulp = np.spacing(np.abs(exact).astype(np.float16)).astype(np.float64)
    assert np.all(np.abs(got - exact) <= ulp), np.max(np.abs(got - exact) / ulp)


@triton.jit
def _serialized_add(data, lock, ACQUIRE: tl.constexpr, RELEASE: tl.constexpr):
    offs = tl.arange(0, 128)
    while tl.atomic_cas(lock, 0, 1, sem=ACQUIRE) == 1:
        pass
    tl.store(data + offs, tl.load(data + offs) + 1.0)
    tl.debug_barrier()
    tl.atomic_xchg(lock, 0, sem=RELEASE)


@pytest.mark.parametrize("acquire, release", [(None, None), ("acquire", "release"), ("acq_rel", "acq_rel")])
def test_lock_publishes_the_critical_section(cuda, acquire, release):
    import torch
    n = 2000
    data = torch.zeros(128, device="cuda", dtype=torch.float32)
    lock = torch.zeros(1, device="cuda", dtype=torch.int32)
    _serialized_add[(n,)](data, lock, ACQUIRE=acquire, RELEASE=release)
    assert data.cpu().tolist() == [float(n)] * 128


@triton.jit
def _last_block_sums(x_ptr, partial, counter, out, BLOCK: tl.constexpr):
    """Split reduction: each program writes its partial sum, then counts itself in with an acq_rel atomic_add; the
    last one in reads every partial (the pattern of split-K and 'last block' reductions)."""
    pid = tl.program_id(0)
    n = tl.num_programs(0)
    tl.store(partial + pid, tl.sum(tl.load(x_ptr + pid * BLOCK + tl.arange(0, BLOCK)), axis=0))
    if tl.atomic_add(counter, 1) == n - 1:
        tl.store(out, tl.sum(tl.load(partial + tl.arange(0, 1024), mask=tl.arange(0, 1024) < n, other=0.0), axis=0))


def test_last_program_sees_every_partial(cuda):
    import torch
    n, block = 1000, 256
    x = torch.ones(n * block, device="cuda")
    for _ in range(5):
        partial = torch.zeros(n, device="cuda")
        counter = torch.zeros(1, device="cuda", dtype=torch.int32)
        out = torch.zeros(1, device="cuda")
        _last_block_sums[(n,)](x, partial, counter, out, BLOCK=block)
        assert out.item() == float(n * block)
