"""Pipelined tensor-descriptor loads through TMA on sm_90 (descriptor_bulk.py, tritium_nvidia/tma.py): the
blocks arrive as bulk tensor copies counted by mbarriers, in the swizzle the wgmma descriptors read. Each test
checks the PTX really took that path (or, for the cases that must not, that it did not) and the numbers against
float64: every swizzle width (32/64/128-byte rows, and 256-byte rows cut in two panels), fp16, bf16, fp8 and
fp32 (tf32) data, 2 to 4 stages over enough iterations that every barrier changes phase several times, a
persistent loop that re-enters the pipelined loop per tile, blocks that start before row 0 or run past the end
(zeros), descriptors made in the kernel from its arguments (TMA) or from the program id (not TMA), and the knob
that turns it off. NVIDIA GPU only (the emulator keeps the portable path; test_descriptor_pipeline covers it)."""
from __future__ import annotations

import os
import sys

import pytest

import tritium as triton
import tritium.language as tl
from tritium.tools.tensor_descriptor import TensorDescriptor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hopper import example08, require_sm90  # noqa: E402

pytestmark = pytest.mark.gpu


@triton.jit
def _mm(a_desc, b_desc, c_ptr, M, N, K, shift_m, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # C[m, n] = sum_k A[m + shift_m, k] * B[n, k]: rows of A outside [0, M) read zeros
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = a_desc.load([pid_m * BM + shift_m, k])
        b = b_desc.load([pid_n * BN, k])
        acc = tl.dot(a, b.T, acc)
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def _mm_device_desc(a_ptr, b_ptr, c_ptr, M, N, K, PER_PROGRAM: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                    BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    if PER_PROGRAM:
        # a descriptor of this program's rows only: its base differs between programs
        a_desc = tl.make_tensor_descriptor(a_ptr + pid_m * BM * K, [min(BM, M - pid_m * BM), K], [K, 1], [BM, BK])
        row = 0
    else:
        a_desc = tl.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BM, BK])
        row = pid_m * BM
    b_desc = tl.make_tensor_descriptor(b_ptr, [N, K], [K, 1], [BN, BK])
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(a_desc.load([row, k]), b_desc.load([pid_n * BN, k]).T, acc)
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def _torch():
    return pytest.importorskip("torch")


def _uses_tma(kernel) -> bool:
    ptx = kernel.asm["ptx"]
    return "cp.async.bulk.tensor.2d" in ptx and "mbarrier.try_wait.parity" in ptx


def _run_mm(torch, dtype, M, N, K, BM, BN, BK, stages, warps, shift=0):
    g = torch.Generator(device="cuda").manual_seed(M * 7 + K)
    a32 = torch.randn((M, K), device="cuda", generator=g)
    b32 = torch.randn((N, K), device="cuda", generator=g)
    a, b = a32.to(dtype), b32.to(dtype)
    c = torch.full((M, N), float("nan"), device="cuda")
    a_desc = TensorDescriptor(a, [M, K], [K, 1], [BM, BK])
    b_desc = TensorDescriptor(b, [N, K], [K, 1], [BN, BK])
    k = _mm[(triton.cdiv(M, BM), triton.cdiv(N, BN))](a_desc, b_desc, c, M, N, K, shift, BM=BM, BN=BN, BK=BK,
                                                       num_warps=warps, num_stages=stages)
    a64 = a.to(torch.float64)
    rows = torch.arange(M, device="cuda") + shift
    inside = (rows >= 0) & (rows < M)
    a_shift = torch.zeros_like(a64)
    a_shift[inside] = a64[rows[inside]]
    want = a_shift @ b.to(torch.float64).T
    return k, c.to(torch.float64), want


@pytest.mark.parametrize("BK,stages", [(16, 2), (32, 3), (64, 4), (128, 3)])
def test_tma_fp16_every_swizzle(cuda, BK, stages):
    """Row widths 32/64/128 bytes (swizzle 32/64/128) and 256 (two 128-byte panels); K not a multiple
    of BK and long enough for each stage's barrier to go through many phases."""
    torch = _torch()
    require_sm90("TMA")
    M, N, K = 200, 136, 23 * BK + BK // 2
    k, got, want = _run_mm(torch, torch.float16, M, N, K, 64, 64, BK, stages, 4)
    assert _uses_tma(k)
    torch.testing.assert_close(got, want, rtol=2e-2, atol=5e-2)


@pytest.mark.parametrize("shift", [-40, 30])
def test_tma_blocks_outside_rows_read_zero(cuda, shift):
    torch = _torch()
    require_sm90("TMA")
    k, got, want = _run_mm(torch, torch.float16, 192, 128, 256, 64, 128, 64, 3, 4, shift)
    assert _uses_tma(k)
    torch.testing.assert_close(got, want, rtol=2e-2, atol=5e-2)


@pytest.mark.parametrize("name,BK", [("bfloat16", 64), ("float8_e4m3fn", 128), ("float32", 32)])
def test_tma_other_types(cuda, name, BK):
    torch = _torch()
    require_sm90("TMA")
    dtype = getattr(torch, name)
    k, got, want = _run_mm(torch, dtype, 160, 144, 9 * BK + 16, 128, 128, BK, 3, 8)
    assert _uses_tma(k)
    tol = {"bfloat16": 5e-2, "float8_e4m3fn": 1e-1, "float32": 5e-2}[name]
    torch.testing.assert_close(got, want, rtol=tol, atol=tol * 20)


def test_tma_knob_off_same_result(cuda):
    torch = _torch()
    require_sm90("TMA")
    from tritium_nvidia.knobs import nvidia
    k_on, got_on, want = _run_mm(torch, torch.float16, 136, 72, 520, 64, 64, 64, 3, 4)
    with nvidia.scope():
        nvidia.tma = False
        k_off, got_off, _ = _run_mm(torch, torch.float16, 136, 72, 520, 64, 64, 64, 3, 4)
    assert _uses_tma(k_on) and not _uses_tma(k_off)
    torch.testing.assert_close(got_on, want, rtol=2e-2, atol=5e-2)
    torch.testing.assert_close(got_on, got_off, rtol=0, atol=1e-3)


@pytest.mark.parametrize("per_program", [False, True])
def test_tma_device_made_descriptors(cuda, per_program):
    """Made in the kernel from its arguments: TMA, the maps encoded by the launcher (test_tma_params.py). From
    the program id: the portable copies (each program's map would differ), with the same result."""
    torch = _torch()
    require_sm90("TMA")
    M, N, K, BM, BN, BK = 192, 96, 40 * 32 + 16, 64, 32, 32   # K a multiple of 16: specialized aligned
    a = torch.randn((M, K), device="cuda").half()
    b = torch.randn((N, K), device="cuda").half()
    c = torch.full((M, N), float("nan"), device="cuda")
    k = _mm_device_desc[(triton.cdiv(M, BM), triton.cdiv(N, BN))](a, b, c, M, N, K, PER_PROGRAM=per_program, BM=BM,
                                                                 BN=BN, BK=BK, num_warps=4, num_stages=3)
    assert len(k.metadata_dict["tensor_map_params"]) == (1 if per_program else 2)
    assert _uses_tma(k) and ("cp.async.cg.shared.global" in k.asm["ptx"]) == per_program
    torch.testing.assert_close(c.double(), a.double() @ b.double().T, rtol=2e-2, atol=5e-2)


@pytest.mark.parametrize("name", ["float16", "float8_e4m3fn"])
def test_tma_persistent_loop_reenters_pipeline(cuda, name):
    """examples/08's persistent kernel at its own configs, on few programs: every program runs the pipelined
    K loop once per tile (barriers initialized and invalidated each time), tiles at the edges partial."""
    torch = _torch()
    require_sm90("TMA")
    ex = example08()
    dtype = getattr(torch, name)
    M, N, K = 520, 712, 1008        # row strides of 16-byte multiples, as descriptors need
    a = torch.randn((M, K), device="cuda").to(dtype)
    b = torch.randn((N, K), device="cuda").to(dtype)
    c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
    BM, BN, BK, warps, stages = ex.CONFIGS[name]
    descs = [TensorDescriptor(x, list(x.shape), list(x.stride()), blk) for x, blk in
             ((a, [BM, BK]), (b, [BN, BK]), (c, [BM, BN]))]
    k = ex.matmul_persistent[(5, )](*descs, M, N, K, BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=8, NUM_SMS=5,
                                    WARP_SPECIALIZE=False, num_warps=warps, num_stages=stages)
    assert _uses_tma(k)
    want = a.double() @ b.double().T
    torch.testing.assert_close(c.double(), want, rtol=3e-2, atol=3e-1 if name.startswith("float8") else 5e-2)


@triton.jit
def _copy_twice(x_ptr, o_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    src = tl.make_tensor_descriptor(x_ptr, [M, N], [N, 1], [BM, BN])
    dst = tl.make_tensor_descriptor(o_ptr, [M, N], [N, 1], [BM, BN])      # only stored through: TMA stores
    pm, pn = tl.program_id(0) * BM, tl.program_id(1) * BN
    dst.store([pm, pn], src.load([pm, pn]) * 2)


@pytest.mark.parametrize("name,N", [("int8", 40), ("int8", 48), ("float16", 40), ("float16", 48)])
def test_tma_store_needs_16_byte_rows_else_portable(cuda, name, N):
    """The copy engine needs rows of 16-byte multiples; for a kernel's own descriptor that is known at compile
    time when N was specialized as a multiple of 16 (48: TMA stores). N = 40 is not (40 int8 elements are not a
    16-byte multiple; 40 fp16 ones are, but nothing says so): the portable stores. Both right, partial blocks
    too."""
    torch = _torch()
    require_sm90("TMA")
    M, BM, BN = 19, 8, 32
    dtype = getattr(torch, name)
    x = torch.randint(-20, 20, (M, N), device="cuda").to(dtype)
    o = torch.full((M, N), 7, device="cuda").to(dtype)
    k = _copy_twice[(triton.cdiv(M, BM), triton.cdiv(N, BN))](x, o, M, N, BM=BM, BN=BN)
    assert ("cp.async.bulk.tensor.2d.global.shared::cta" in k.asm["ptx"]) == (N % 16 == 0)
    torch.testing.assert_close(o, x * 2, rtol=0, atol=0)
