"""tl.dot on CDNA matrix cores. Compiled: the code objects hold the MFMA instruction of each operand type and chip.
Run: the same layouts and lowering execute on the GPU host emulator at warp size 64, with the matrix-core
instruction computed by lanes exchanging operands as the ISA documents (tritium_amd.emulated_mfma), so the data
movement around every MFMA (operand fragments, accumulator fragments, repetitions, warp tiling) is checked
numerically. Whether the hardware's lanes are the documented ones cannot be checked without an AMD GPU."""
from __future__ import annotations

import importlib.util
import os
import re
import sys

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource

pytest.importorskip("tritium_amd", reason="tritium-amd is not installed")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _gpu_kernels():
    path = os.path.join(ROOT, "tests", "gpu", "test_kernels.py")
    spec = importlib.util.spec_from_file_location("_mfma_gpu_kernels", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


K = _gpu_kernels()
DOT_SIG = {"a_ptr": "*{t}", "b_ptr": "*{t}", "c_ptr": "*{o}", "M": "constexpr", "N": "constexpr", "K": "constexpr"}


@tritium.jit
def tf32_dot(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b, input_precision="tf32"))


@pytest.fixture
def mfma_emulator(isolated_tritium):
    from tritium import knobs, plugins
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin",
                                               "gpu-emu-mfma": "tritium_amd.emulated_mfma"})
    with plugins.use(reg), knobs.runtime.scope():
        knobs.runtime.default_backend = "gpu-emu-mfma"
        yield reg


@pytest.mark.parametrize("chip,t,out,instr", [
    ("gfx90a", "fp16", "fp32", "v_mfma_f32_16x16x16f16"), ("gfx942", "fp16", "fp32", "v_mfma_f32_16x16x16_f16"),
    ("gfx950", "fp16", "fp32", "v_mfma_f32_16x16x16_f16"), ("gfx90a", "bf16", "fp32", "v_mfma_f32_16x16x16bf16_1k"),
    ("gfx942", "bf16", "fp32", "v_mfma_f32_16x16x16_bf16"), ("gfx942", "fp32", "fp32", "v_mfma_f32_16x16x4_f32"),
    ("gfx90a", "fp32", "fp32", "v_mfma_f32_16x16x4f32"), ("gfx90a", "i8", "i32", "v_mfma_i32_16x16x16i8"),
    ("gfx942", "i8", "i32", "v_mfma_i32_16x16x32_i8"), ("gfx950", "i8", "i32", "v_mfma_i32_16x16x32_i8")])
def test_dot_compiles_to_mfma(amd_registry, chip, t, out, instr):
    from tritium import plugins
    from tritium_amd import codeobj
    from tritium_amd.chips import CHIPS
    sig = {k: v.format(t=t, o=out) for k, v in DOT_SIG.items()}
    with plugins.use(amd_registry):
        k = tritium.compile(ASTSource(K.dot_kernel, sig, {"M": 32, "N": 32, "K": 64}), target=GPUTarget("hip", chip, 64))
    assert '"ttg.dot" = "mfma.' in k.asm["ttgir"] or 'ttg.dot = "mfma.' in k.asm["ttgir"]
    found = set(re.findall(r"\bv_mfma_\w+", k.asm["amdgcn"]))
    assert found == {instr}, found
    codeobj.check(k.asm["hsaco"], CHIPS[chip], k.name, [8, 8, 8])


def test_tf32_uses_xf32_on_gfx942_and_fp32_mfma_elsewhere(amd_registry):
    from tritium import plugins
    from tritium_amd.chips import CHIPS
    sig = {k: v.format(t="fp32", o="fp32") for k, v in DOT_SIG.items()}

    with plugins.use(amd_registry):
        k = tritium.compile(ASTSource(tf32_dot, sig, {"M": 32, "N": 32, "K": 32}),
                            target=GPUTarget("hip", "gfx942", 64))
        assert set(re.findall(r"\bv_mfma_\w+", k.asm["amdgcn"])) == {"v_mfma_f32_16x16x8_xf32"}
        k = tritium.compile(ASTSource(tf32_dot, sig, {"M": 32, "N": 32, "K": 32}),
                            target=GPUTarget("hip", "gfx950", 64))
        assert set(re.findall(r"\bv_mfma_\w+", k.asm["amdgcn"])) == {"v_mfma_f32_16x16x4_f32"}
    assert "xf32" not in CHIPS["gfx950"].mfma


CASES = [(arch, dt, (16, 16, 32), 1) for arch in ("gfx90a", "gfx942") for dt in (np.float16, np.float32, np.int8)] + \
    [("gfx942", np.float16, (32, 64, 32), 4), ("gfx90a", np.int8, (32, 64, 32), 4), ("gfx942", np.int8, (32, 64, 32), 4),
     ("gfx942", np.float32, (64, 32, 16), 2)]


@pytest.mark.parametrize("arch,dtype,shape,warps", CASES)
def test_mfma_layouts_compute_the_product(mfma_emulator, arch, dtype, shape, warps):
    M, N, Kd = shape
    rng = np.random.default_rng(11)
    if dtype == np.int8:
        a = rng.integers(-100, 100, (M, Kd)).astype(np.int8)
        b = rng.integers(-100, 100, (Kd, N)).astype(np.int8)
        c = np.zeros((M, N), np.int32)
    else:
        a = rng.standard_normal((M, Kd)).astype(dtype)
        b = rng.standard_normal((Kd, N)).astype(dtype)
        c = np.zeros((M, N), np.float32)
    k = K.dot_kernel[(1, )](a, b, c, M, N, Kd, num_warps=warps, arch=arch)
    assert 'mfma.' in k.asm["ttgir"] and k.metadata_dict["warp_size"] == 64
    ref = a.astype(np.int64) @ b.astype(np.int64) if dtype == np.int8 else a.astype(np.float64) @ b.astype(np.float64)
    if dtype == np.int8:
        np.testing.assert_array_equal(c, ref)
    else:
        np.testing.assert_allclose(c, ref, rtol=1e-4, atol=1e-4)


def test_mfma_matmul_loop_with_masks(mfma_emulator):
    M, N, Kd = 64, 48, 80
    rng = np.random.default_rng(8)
    a = rng.standard_normal((M, Kd)).astype(np.float16)
    b = rng.standard_normal((Kd, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    k = K.matmul_kernel[(2, 2)](a, b, c, M, N, Kd, Kd, 1, N, 1, N, 1, BLOCK_M=32, BLOCK_N=32, BLOCK_K=16,
                                num_stages=2)
    assert 'mfma.f16' in k.asm["ttgir"]
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-3, atol=1e-3)
