"""``tl.range(..., flatten=True)``: the persistent tile loop and its K loop run as one loop (gpu/flatten.py), the
loads of the next tile pipelined while this one finishes. Results must equal the unfused loop's and numpy's:
several tiles per program, partial tiles at M/N edges, a K that is not a multiple of the block, an empty K
(the unfused loop runs then: no K step ends a tile), the tile loop carrying a value of its own, loads through
pointers and through descriptors. On the GPU emulator (always) and an NVIDIA GPU."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium.tools.tensor_descriptor import TensorDescriptor


@triton.jit
def persistent_desc(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                    GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr, FLATTEN: tl.constexpr):
    start_pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BM)
    num_pid_n = tl.cdiv(N, BN)
    k_tiles = tl.cdiv(K, BK)
    num_tiles = num_pid_m * num_pid_n
    num_pid_in_group = GROUP_M * num_pid_n
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=FLATTEN):
        group_id = tile_id // num_pid_in_group
        first_pid_m = group_id * GROUP_M
        group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
        pid_m = first_pid_m + (tile_id % group_size_m)
        pid_n = (tile_id % num_pid_in_group) // group_size_m
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for ki in range(k_tiles):
            a = a_desc.load([pid_m * BM, ki * BK])
            b = b_desc.load([pid_n * BN, ki * BK])
            acc = tl.dot(a, b.T, acc)
        c_desc.store([pid_m * BM, pid_n * BN], acc.to(c_desc.dtype))


@triton.jit
def persistent_ptr(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm, BM: tl.constexpr,
                   BN: tl.constexpr, BK: tl.constexpr, NUM_SMS: tl.constexpr, FLATTEN: tl.constexpr):
    """Tutorial 09's shape: the tile loop carries its own counter (the tile the epilogue stores), bumped in the
    epilogue; pointers advance in the K loop."""
    start_pid = tl.program_id(axis=0)
    num_pid_n = tl.cdiv(N, BN)
    num_tiles = tl.cdiv(M, BM) * num_pid_n
    tile_id_c = start_pid - NUM_SMS
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=FLATTEN):
        offs_m = (tile_id // num_pid_n) * BM + tl.arange(0, BM)
        offs_n = (tile_id % num_pid_n) * BN + tl.arange(0, BN)
        offs_k = tl.arange(0, BK)
        a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
        b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for ki in range(0, tl.cdiv(K, BK)):
            k_ok = offs_k < K - ki * BK
            a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & k_ok[None, :], other=0.0)
            b = tl.load(b_ptrs, mask=k_ok[:, None] & (offs_n[None, :] < N), other=0.0)
            acc = tl.dot(a, b, acc)
            a_ptrs += BK
            b_ptrs += BK * stride_bk
        tile_id_c += NUM_SMS
        cm = (tile_id_c // num_pid_n) * BM + tl.arange(0, BM)
        cn = (tile_id_c % num_pid_n) * BN + tl.arange(0, BN)
        tl.store(c_ptr + cm[:, None] * stride_cm + cn[None, :], acc, mask=(cm[:, None] < M) & (cn[None, :] < N))


def _blocks(dev):
    return (64, 64, 32) if dev.name == "cuda" else (32, 32, 16)


@pytest.mark.parametrize("flatten", [True, False])
@pytest.mark.parametrize("shape", [(96, 80, 72), (64, 64, 8), (40, 100, 16)])
def test_persistent_descriptor_matmul(dev, flatten, shape):
    M, N, K = shape
    BM, BN, BK = _blocks(dev)
    rng = np.random.default_rng(M + N + K)
    a = rng.standard_normal((M, max(K, 8))).astype(np.float16)
    b = rng.standard_normal((N, max(K, 8))).astype(np.float16)
    c = dev.put(np.full((M, N), np.nan, np.float32))
    da, db = dev.put(a), dev.put(b)
    a_desc = TensorDescriptor(da, [M, K], [a.shape[1], 1], [BM, BK])
    b_desc = TensorDescriptor(db, [N, K], [b.shape[1], 1], [BN, BK])
    c_desc = TensorDescriptor(c, [M, N], [N, 1], [BM, BN])
    programs = 3      # fewer than the tiles: each program runs several, the last ones fewer
    persistent_desc[(programs, )](a_desc, b_desc, c_desc, M, N, K, BM=BM, BN=BN, BK=BK, GROUP_M=2,
                                  NUM_SMS=programs, FLATTEN=flatten, num_warps=4, num_stages=3)
    want = a[:, :K].astype(np.float64) @ b[:, :K].astype(np.float64).T
    np.testing.assert_allclose(dev.get(c), want, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("flatten", [True, False])
@pytest.mark.parametrize("K", [40, 0])
def test_persistent_pointer_matmul_with_carried_tile(dev, flatten, K):
    M, N = 70, 96
    BM, BN, BK = _blocks(dev)
    rng = np.random.default_rng(5)
    a = rng.standard_normal((M, max(K, 1))).astype(np.float16)
    b = rng.standard_normal((max(K, 1), N)).astype(np.float16)
    c = dev.put(np.full((M, N), np.nan, np.float32))
    programs = 2
    persistent_ptr[(programs, )](dev.put(a), dev.put(b), c, M, N, K, a.shape[1], N, N, BM=BM, BN=BN, BK=BK,
                                 NUM_SMS=programs, FLATTEN=flatten, num_warps=4, num_stages=3)
    # K == 0: no K step runs; the tiles store zeros (the fused loop would have none to end a tile with)
    want = a[:, :K].astype(np.float64) @ b[:K].astype(np.float64)
    np.testing.assert_allclose(dev.get(c), want, rtol=1e-2, atol=1e-2)


def _loops_with(ttgir: str, inner: str, other: str) -> list[bool]:
    """For each ``scf.for`` of the kernel that holds ``inner``: whether it holds ``other`` too."""
    from tritium._mlir import parse_module, walk_children
    module = parse_module(ttgir)
    out = []

    def nested(op) -> list:
        got = []
        for o in walk_children(op):
            got.append(o.name)
            got.extend(nested(o))
        return got

    def visit(op) -> None:
        for o in walk_children(op):
            if o.name == "scf.for":
                names = nested(o)
                if inner in names and not any(c.name == "scf.for" and inner in nested(c) for c in _fors(o)):
                    out.append(other in names)
            visit(o)

    def _fors(op) -> list:
        got = []
        for o in walk_children(op):
            if o.name == "scf.for":
                got.append(o)
            got.extend(_fors(o))
        return got

    visit(module.operation)
    return out


def test_flattened_loop_holds_the_epilogue(emulator):
    """The loop that runs the dot also stores the tile (one loop over tiles and K steps); without flatten the
    dot's loop does not."""
    M, N, K, BM, BN, BK = 64, 64, 32, 32, 32, 16
    a, b = np.ones((M, K), np.float16), np.ones((N, K), np.float16)
    c = np.zeros((M, N), np.float32)
    descs = (TensorDescriptor(a, [M, K], [K, 1], [BM, BK]), TensorDescriptor(b, [N, K], [K, 1], [BN, BK]),
             TensorDescriptor(c, [M, N], [N, 1], [BM, BN]))
    got = {}
    for flatten in (True, False):
        k = persistent_desc[(2, )](*descs, M, N, K, BM=BM, BN=BN, BK=BK, GROUP_M=2, NUM_SMS=2, FLATTEN=flatten,
                                   num_warps=4, num_stages=3)
        got[flatten] = _loops_with(k.asm["ttgir"], "tt.dot", "tt.descriptor_store")
    np.testing.assert_allclose(c, K)
    # fused: the tile loop with its K steps; the unfused twin kept for programs without K steps has its own
    assert got[True] == [True, False], got
    assert got[False] == [False], got


@triton.jit
def persistent_with_load_before(a_ptr, s_ptr, c_ptr, n_tiles, K, NUM_SMS: tl.constexpr, B: tl.constexpr):
    """A load before the inner loop: not pure, so the loops are not fused (each tile's scale is read once)."""
    for t in tl.range(tl.program_id(0), n_tiles, NUM_SMS, flatten=True):
        scale = tl.load(s_ptr + t)
        acc = tl.zeros((B, ), dtype=tl.float32)
        for k in range(K):
            acc += tl.load(a_ptr + (t * K + k) * B + tl.arange(0, B))
        tl.store(c_ptr + t * B + tl.arange(0, B), acc * scale)


def test_loop_with_impure_prologue_is_not_fused(emulator):
    n_tiles, K, B = 5, 3, 32
    rng = np.random.default_rng(1)
    a = rng.standard_normal((n_tiles, K, B)).astype(np.float32)
    s = rng.standard_normal(n_tiles).astype(np.float32)
    c = np.zeros((n_tiles, B), np.float32)
    k = persistent_with_load_before[(2, )](a, s, c, n_tiles, K, NUM_SMS=2, B=B, num_warps=1)
    np.testing.assert_allclose(c, a.sum(axis=1) * s[:, None], rtol=1e-5)
    assert "tt.flatten" not in k.asm["ttgir"]
    assert _loops_with(k.asm["ttgir"], "tt.load", "tt.store") == [False]


@triton.jit
def nested_flatten(a_ptr, c_ptr, n_batch, n_tiles, K, B: tl.constexpr):
    """Both loops ask for flattening: the tile loop is fused with the K loop; the batch loop then holds a branch
    (the fused loop's guard), not a loop, and stays as it is."""
    for bi in tl.range(0, n_batch, 1, flatten=True):
        for t in tl.range(tl.program_id(0), n_tiles, 2, flatten=True):
            acc = tl.zeros((B, ), dtype=tl.float32)
            for k in range(K):
                acc += tl.load(a_ptr + ((bi * n_tiles + t) * K + k) * B + tl.arange(0, B))
            tl.store(c_ptr + (bi * n_tiles + t) * B + tl.arange(0, B), acc)


def test_nested_flatten(emulator):
    n_batch, n_tiles, K, B = 2, 3, 4, 32
    a = np.random.default_rng(2).standard_normal((n_batch, n_tiles, K, B)).astype(np.float32)
    c = np.zeros((n_batch, n_tiles, B), np.float32)
    k = nested_flatten[(2, )](a, c, n_batch, n_tiles, K, B=B, num_warps=1)
    np.testing.assert_allclose(c, a.sum(axis=2), rtol=1e-5)
    assert "tt.flatten" not in k.asm["ttgir"]
