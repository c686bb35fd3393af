"""Descriptor stores inside loops with TRITIUM_NVIDIA_DEFER_STORE_WAIT (gpu/lower/descriptor_store_deferred.py):
the block is staged in a buffer of the loop's own and its bulk copies' read is waited for only before the next
iteration writes it again; with TRITIUM_NVIDIA_PREFETCH_TILES (gpu/lower/pipeline_prefetch.py) the persistent
matmul's next tile's first stages are issued before this tile's epilogue. If the wait were missing or
misplaced, a program storing several blocks in a row would overwrite a block before the copy engine had read it;
if the prefetch's barriers or predicates were wrong, tiles would read another tile's stages. These kernels
store many blocks per program, back to back (the persistent matmul of examples/08 on few programs, partial
tiles, short K, a single tile; a copy loop with nothing between its stores) and compare every
element, with the knobs on and off. NVIDIA sm_90 only."""
from __future__ import annotations

import os
import re
import sys

import pytest

import tritium as triton
import tritium.language as tl
from tritium.tools.tensor_descriptor import TensorDescriptor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hopper import example08, require_sm90  # noqa: E402

pytestmark = pytest.mark.gpu


def _deferred(ptx: str) -> bool:
    # the copies' commit is not followed at once by their wait
    at_once = re.search(r"cp\.async\.bulk\.commit_group;(\s*//[^\n]*)*\s*cp\.async\.bulk\.wait_group", ptx)
    return at_once is None and "cp.async.bulk.tensor.2d.global.shared::cta" in ptx


def _prefetch_mode(ptx: str, stages: int) -> int:
    # copies of A and B: S - 1 stages before the K loop and one in it; the prefetch adds S - 1 for the next
    # tile. Its mode 1 restarts the barriers after each K loop (twice the inits), mode 2 carries their phases
    loads = ptx.count("cp.async.bulk.tensor.2d.shared::cluster.global")
    if loads == 2 * stages:
        return 0
    return 1 if ptx.count("mbarrier.init.shared::cta.b64") == 2 * stages else 2


@pytest.mark.parametrize("prefetch", [2, 1, 0], ids=["prefetch-carried", "prefetch-restarted", "no-prefetch"])
@pytest.mark.parametrize("defer", [True, False], ids=["deferred", "at-once"])
@pytest.mark.parametrize("name", ["float16", "bfloat16", "float8_e4m3fn", "float32"])
@pytest.mark.parametrize("shape", [(776, 904, 400), (300, 200, 16), (128, 104, 208)],
                         ids=["partial", "one-k-step", "one-tile"])
def test_persistent_matmul_stores(cuda, name, defer, prefetch, shape):
    """examples/08's kernel on 3 programs: partial tiles, K shorter than the stages (one K step where the
    prologue fills two), and a single tile (the next tile's copies predicated off)."""
    torch = pytest.importorskip("torch")
    require_sm90("bulk tensor stores")
    from tritium_nvidia.knobs import nvidia
    ex = example08()
    dtype = getattr(torch, name)
    M, N, K = shape
    a = torch.randn((M, K), device="cuda").to(dtype)
    b = torch.randn((N, K), device="cuda").to(dtype)
    out = torch.float16 if dtype.itemsize == 1 else dtype
    c = torch.full((M, N), float("nan"), device="cuda", dtype=out)
    BM, BN, BK, warps, stages = ex.CONFIGS[name]
    descs = [TensorDescriptor(x, list(x.shape), list(x.stride()), blk) for x, blk in
             ((a, [BM, BK]), (b, [BN, BK]), (c, [BM, BN]))]
    with nvidia.scope():
        nvidia.defer_store_wait = defer
        nvidia.prefetch_tiles = prefetch
        k = ex.matmul_persistent[(3, )](*descs, M, N, K, BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=8,
                                        NUM_SMS=3, WARP_SPECIALIZE=False, num_warps=warps, num_stages=stages)
    assert _deferred(k.asm["ptx"]) == defer and _prefetch_mode(k.asm["ptx"], stages) == prefetch
    want = a.double() @ b.double().T
    tol = {"float32": (2e-2, 1e-1), "bfloat16": (3e-2, 2e-1)}.get(name, (3e-2, 3e-1 if dtype.itemsize == 1 else 5e-2))
    torch.testing.assert_close(c.double(), want, rtol=tol[0], atol=tol[1])


@triton.jit
def _copy_rows(x_ptr, o_ptr, M, N, ROUNDS, BM: tl.constexpr, BN: tl.constexpr):
    src = tl.make_tensor_descriptor(x_ptr, [M, N], [N, 1], [BM, BN])
    dst = tl.make_tensor_descriptor(o_ptr, [M, N], [N, 1], [BM, BN])
    pn = tl.program_id(0) * BN
    for r in range(ROUNDS):
        for i in range(tl.cdiv(M, BM)):
            dst.store([i * BM, pn], src.load([i * BM, pn]) * 2 + r)


@pytest.mark.parametrize("defer", [True, False], ids=["deferred", "at-once"])
def test_back_to_back_stores(cuda, defer):
    """Every iteration stores a block right after loading it: the next iteration's write of the staged block
    waits for this one's read (a program's blocks differ, so an early overwrite shows in the result). Two
    nested loops: the inner one's wait after its exit, then the next round."""
    torch = pytest.importorskip("torch")
    require_sm90("bulk tensor stores")
    from tritium_nvidia.knobs import nvidia
    M, N, BM, BN = 1000, 256, 64, 128
    x = torch.randn((M, N), device="cuda").half()
    o = torch.full((M, N), float("nan"), device="cuda").half()
    with nvidia.scope():
        nvidia.defer_store_wait = defer
        k = _copy_rows[(N // BN, )](x, o, M, N, 3, BM=BM, BN=BN, num_warps=4)
    assert _deferred(k.asm["ptx"]) == defer
    torch.testing.assert_close(o, x * 2 + 2)


@pytest.mark.parametrize("prefetch", [2, 1, 0], ids=["prefetch-carried", "prefetch-restarted", "no-prefetch"])
@pytest.mark.parametrize("name", ["float16", "float8_e4m3fn", "float32"])
@pytest.mark.parametrize("shape", [(776, 904, 400), (300, 200, 16)], ids=["partial", "one-k-step"])
def test_no_barrier_at_the_loop_top(cuda, name, prefetch, shape):
    """TRITIUM_NVIDIA_BULK_LOOP_TOP_BARRIER=0: the K loop's only barrier is the one before the refill (the
    stages' mbarriers tell the copies' landing). Same kernels, same checks."""
    torch = pytest.importorskip("torch")
    require_sm90("bulk tensor stores")
    from tritium_nvidia.knobs import nvidia
    ex = example08()
    dtype = getattr(torch, name)
    M, N, K = shape
    a = torch.randn((M, K), device="cuda").to(dtype)
    b = torch.randn((N, K), device="cuda").to(dtype)
    c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16 if dtype.itemsize == 1 else dtype)
    BM, BN, BK, warps, stages = ex.CONFIGS[name]
    descs = [TensorDescriptor(x, list(x.shape), list(x.stride()), blk) for x, blk in
             ((a, [BM, BK]), (b, [BN, BK]), (c, [BM, BN]))]
    with nvidia.scope():
        nvidia.defer_store_wait = True
        nvidia.prefetch_tiles = prefetch
        nvidia.bulk_loop_top_barrier = False
        k = ex.matmul_persistent[(3, )](*descs, M, N, K, BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=8,
                                        NUM_SMS=3, WARP_SPECIALIZE=False, num_warps=warps, num_stages=stages)
    assert _prefetch_mode(k.asm["ptx"], stages) == prefetch
    want = a.double() @ b.double().T
    tol = {"float32": (2e-2, 1e-1)}.get(name, (3e-2, 3e-1 if dtype.itemsize == 1 else 5e-2))
    torch.testing.assert_close(c.double(), want, rtol=tol[0], atol=tol[1])
