"""Triton's fused-attention forward (tests/gpu/attention.py) compiled for sm_90 without a GPU: the largest
tutorial configuration (BLOCK_M = BLOCK_N = HEAD_DIM = 128, 8 warps, 3 stages) fits in the H100/H200's
227 KB of shared memory per program, causal (two pipelined loops) as well as not, because buffers whose
lifetimes do not overlap share bytes. It asked 428 KB when every loop's stages had bytes of their own."""
from __future__ import annotations

import os
import re
import shutil
import sys

import pytest

import tritium
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "gpu"))
import attention as A  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")
SM90_SHARED_LIMIT = 227 * 1024
UNIT_STRIDES = ("stride_qk", "stride_kk", "stride_vn", "stride_on")   # specialized to 1, as at a launch


@pytest.fixture(scope="module")
def nvidia_registry(isolated_tritium):
    from tritium import plugins
    return plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})


def _compile(registry, kernel, causal: bool, N: int, D: int, BM: int, BN: int, warps: int, stages: int):
    from tritium import plugins
    sig, attrs = {}, {}
    consts = {"N_CTX": N, "HEAD_DIM": D, "BLOCK_M": BM, "BLOCK_N": BN, "STAGE": 3 if causal else 1}
    for name in kernel.arg_names:
        if name in UNIT_STRIDES:
            sig[name], consts[name] = "constexpr", 1
        elif name in consts:
            sig[name] = "constexpr"
        elif name in ("Q", "K", "V", "Out"):
            sig[name] = "*fp16"
        elif name == "M":
            sig[name] = "*fp32"
        elif name == "sm_scale":
            sig[name] = "fp32"
        else:
            sig[name] = "i32"
        if sig[name].startswith("*") or name.startswith("stride_") and sig[name] == "i32":
            attrs[name] = [["tt.divisibility", 16]]
    with plugins.use(registry):
        return tritium.compile(ASTSource(kernel, sig, consts, attrs), target=GPUTarget("cuda", 90, 32),
                               options={"num_warps": warps, "num_stages": stages})


@pytest.mark.parametrize("causal", [False, True])
def test_largest_tutorial_config_fits_in_shared_memory(nvidia_registry, causal):
    k = _compile(nvidia_registry, A.attn_fwd_ptr, causal, 1024, 128, 128, 128, 8, 3)
    ptx = k.asm["ptx"]
    assert "wgmma.mma_async" in ptx and "cp.async" in ptx          # tensor cores, pipelined loads
    stages = 2 * 3 * 128 * 128 * 2                                  # K and V, 3 stages of 128 x 128 fp16
    print(f"attention fwd 128/128/128, 8 warps, 3 stages, causal={causal}: {k.metadata.shared} bytes of shared "
          f"memory, {k.metadata.n_regs} registers")
    assert stages <= k.metadata.shared <= SM90_SHARED_LIMIT
    assert k.asm["cubin"][:4] == b"\x7fELF"
    # P @ V reads P from registers (the accumulator fragments of Q @ K^T are wgmma's A fragments): one
    # register-operand wgmma per 16 columns of P, per loop
    register_a = re.findall(r"wgmma\.mma_async[^;]*\}, \{%r\d+, %r\d+, %r\d+, %r\d+\}, %rd\d+, p, 1, 1, 1;", ptx)
    assert len(register_a) == (2 if causal else 1) * 128 // 16


def test_causal_second_loop_reuses_the_first_loops_stages(nvidia_registry):
    sizes = [_compile(nvidia_registry, A.attn_fwd_ptr, causal, 256, 64, 64, 64, 4, 3).metadata.shared
             for causal in (False, True)]
    assert sizes[1] == sizes[0], sizes


def test_loop_writes_no_shared_memory_of_its_own(nvidia_registry):
    """In the loop, K and V arrive by asynchronous copies; Q (computed before the loop) is written to shared
    memory once, before it; P stays in registers (wgmma's register operand). So the loop body stores nothing
    to shared memory itself."""
    llir = _compile(nvidia_registry, A.attn_fwd_ptr, False, 1024, 128, 128, 128, 8, 3).asm["llir"]
    lines = llir.splitlines()
    body = next(i for i, ln in enumerate(lines) if ln.startswith("pforbody"))
    end = next(i for i, ln in enumerate(lines) if ln.startswith("pforexit"))
    assert body < end
    stores = [ln for ln in lines[body:end] if ln.strip().startswith("store") and "addrspace(3)" in ln]
    assert not stores, stores[:3]
    assert any("addrspace(3)" in ln and ln.strip().startswith("store") for ln in lines[:body])   # Q, once

