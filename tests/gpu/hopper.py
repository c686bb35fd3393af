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


def run08(a, b, out_dtype, cfg: tuple, programs: int, **knob_values):
    """examples/08's persistent kernel, C = a @ b.T (a: (M, K), b: (N, K)) into a NaN-poisoned C of
    ``out_dtype``, at ``cfg`` = (BLOCK_M, BLOCK_N, BLOCK_K, warps, stages) on ``programs`` programs, with the
    tritium_nvidia knobs ``knob_values`` set in a scope. Returns (C, the compiled kernel)."""
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
            WARP_SPECIALIZE=False, num_warps=warps, num_stages=stages)
    torch.cuda.synchronize()
    return c, k
