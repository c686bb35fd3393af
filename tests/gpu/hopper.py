"""What the sm_90-only GPU tests share: the skip on other GPUs, and examples/08's module (the persistent
descriptor matmul), loaded once per process: a kernel collected while the process runs disposes its emulator
engine, which crashed llvmlite at garbage collection after two loads of the example (test_descriptor_pipeline)."""
from __future__ import annotations

import importlib.util
import os
from types import ModuleType

import pytest

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_loaded: dict[str, ModuleType] = {}


def require_sm90(what: str = "TMA") -> None:
    """Skip the calling test unless the active GPU is sm_90 (Hopper), naming ``what`` needs it."""
    from tritium.runtime.driver import driver
    cap = driver.active.get_current_target().arch
    if not 90 <= int(cap) < 100:
        pytest.skip(f"{what} is used on sm_90 only; this GPU is sm_{cap}")


def example08() -> ModuleType:
    """examples/08-persistent-matmul-descriptors.py as a module, one load per process (its JIT functions key
    their compiles by the knobs, so tests under different knob settings can share it)."""
    if "08" not in _loaded:
        spec = importlib.util.spec_from_file_location("ex08_gpu_tests", os.path.join(
            _ROOT, "examples", "08-persistent-matmul-descriptors.py"))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        _loaded["08"] = mod
    return _loaded["08"]


def run08(a, b, out_dtype, cfg: tuple, programs: int, ws: bool = False, **knob_values):
    """examples/08's persistent kernel, C = a @ b.T (a: (M, K), b: (N, K)) into a NaN-poisoned C of
    ``out_dtype``, at ``cfg`` = (BLOCK_M, BLOCK_N, BLOCK_K, warps, stages) on ``programs`` programs,
    ``WARP_SPECIALIZE=ws``, with the tritium_nvidia knobs ``knob_values`` set in a scope. Returns (C, the
    compiled kernel)."""
    import torch
    from tritium.tools.tensor_descriptor import TensorDescriptor
    from tritium_nvidia.knobs import nvidia
    M, K = a.shape
    N = b.shape[0]
    BM, BN, BK, warps, stages = cfg
    c = torch.full((M, N), float("nan"), device="cuda", dtype=out_dtype)
    descs = [TensorDescriptor(x, list(x.shape), list(x.stride()), blk) for x, blk in
             ((a, [BM, BK]), (b, [BN, BK]), (c, [BM, BN]))]
    with nvidia.scope():
        for name, value in knob_values.items():
            setattr(nvidia, name, value)
        k = example08().matmul_persistent[(programs, )](
            *descs, M, N, K, BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=8, NUM_SMS=programs,
            WARP_SPECIALIZE=ws, num_warps=warps, num_stages=stages)
    torch.cuda.synchronize()
    return c, k


#: examples/08's tile configs (BLOCK_M, BLOCK_N, BLOCK_K, warps, stages) the knob-on/off GPU tests compare at:
#: one or two warpgroups, 4 stages, a 256-row tile, mma.sync at 64x64
CONFIGS08 = [(128, 256, 64, 8, 3), (128, 128, 64, 8, 4), (64, 128, 64, 4, 3), (256, 128, 64, 8, 3),
             (64, 64, 64, 8, 3)]
#: (M, N, K), persistent programs: partial tiles on few programs, whole tiles, K shorter than the stages on more
#: programs, and more programs than tiles
SHAPES08 = [((776, 904, 400), 5), ((2048, 2048, 512), 7), ((300, 200, 64), 16), ((1000, 1304, 96), 200)]
SHAPE08_IDS = ["partial-few", "whole-few", "short-k-more-programs", "partial-grid-too-large"]


def operands08(name: str, cfg: tuple, shape: tuple):
    """Random a (M, K) and b (N, K) of torch dtype ``name`` on the GPU, C's dtype (fp16 for 8-bit inputs, as in the
    example) and ``cfg`` with the example's BLOCK_K for that width (128 for 8-bit, 32 for tf32); skips tf32 tiles
    wider than the example's 128x128."""
    import torch
    dtype = getattr(torch, name)
    BM, BN, BK, warps, stages = cfg
    if dtype.itemsize == 1:
        BK = 128
    elif dtype.itemsize == 4:
        BK = 32
        if BM * BN > 128 * 128:
            pytest.skip("tf32 at 128x256: the example's config is 128x128")
    M, N, K = shape
    a = torch.randn((M, K), device="cuda").to(dtype)
    b = torch.randn((N, K), device="cuda").to(dtype)
    out = torch.float16 if dtype.itemsize == 1 else dtype
    return a, b, out, (BM, BN, BK, warps, stages)


def assert_same_and_close08(got, want, a, b) -> None:
    """``got`` (knob on) has no NaN left of the poisoned C, equals ``want`` (knob off) bit for bit, and is close
    to a @ b.T in fp64 (relative Frobenius error 1e-2 for 16-bit inputs, 2e-3 otherwise)."""
    import torch
    assert not torch.isnan(got).any()
    assert torch.equal(got, want)
    ref = a.double() @ b.double().T
    tol = 2e-3 if a.dtype.itemsize != 2 else 1e-2
    assert ((got.double() - ref).norm() / ref.norm()).item() < tol


def two_k_loops():
    """A persistent tile loop (``warp_specialize=WS``) holding two K loops over tensor descriptors: with the
    producer-warp knob, the first takes the producer warp and the second keeps its copies in the consumers
    (tests/gpu/test_ws_hint.py runs it, tests/nvidia_compile/test_ws_hint.py reads its PTX)."""
    import tritium
    import tritium.language as tl

    @tritium.jit
    def two_k(a_desc, b_desc, c_desc, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
              NUM_SMS: tl.constexpr, WS: tl.constexpr):
        # two K loops in one tile loop: the first takes the producer warp, the second keeps its copies in the
        # consumers (thread 0) and its barriers must be the consumers' named barriers
        pid = tl.program_id(0)
        npm = tl.cdiv(M, BM)
        npn = tl.cdiv(N, BN)
        for t in tl.range(pid, npm * npn, NUM_SMS, warp_specialize=WS):
            om = (t % npm) * BM
            on = (t // npm) * BN
            acc = tl.zeros((BM, BN), dtype=tl.float32)
            for ki in range(tl.cdiv(K, BK)):
                acc = tl.dot(a_desc.load([om, ki * BK]), b_desc.load([on, ki * BK]).T, acc)
            acc2 = tl.zeros((BM, BN), dtype=tl.float32)
            for ki in range(tl.cdiv(K, BK)):
                acc2 = tl.dot(b_desc.load([om, ki * BK]), a_desc.load([on, ki * BK]).T, acc2)
            c_desc.store([om, on], (acc - acc2 * 0.5).to(tl.float16))
    return two_k

