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


def _dot_plans(k):
    """How each tl.dot was planned (``mfma.<kind>`` or ``fma``); the ttgir's locations name this file, so a
    plain substring test for "mfma." would always pass."""
    return re.findall(r'ttg\.dot"? = "([^"]*)"', k.asm["ttgir"])


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
    assert [p.split(".")[0] for p in _dot_plans(k)] == ["mfma"] and k.metadata_dict["warp_size"] == 64
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
    assert _dot_plans(k) == ["mfma.f16"]
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-3, atol=1e-3)


# -- fp8 -----------------------------------------------------------------------------------------------------
# What each chip's MFMA does with fp8 operands, as Triton's AMD backend chooses (MfmaGroup.cpp): gfx942's fp8
# MFMAs read the FNUZ encodings, gfx950's the OCP ones; OCP operands before gfx950 are widened to f16 (exact).
FP8_COMPILE = [
    ("gfx90a", "fp8e5", "fp8e5", "v_mfma_f32_16x16x16f16"),
    ("gfx942", "fp8e4nv", "fp8e4nv", "v_mfma_f32_16x16x16_f16"),
    ("gfx942", "fp8e4nv", "fp8e5", "v_mfma_f32_16x16x16_f16"),
    ("gfx942", "fp8e4b8", "fp8e4b8", "v_mfma_f32_16x16x32_fp8_fp8"),
    ("gfx942", "fp8e4b8", "fp8e5b16", "v_mfma_f32_16x16x32_fp8_bf8"),
    ("gfx950", "fp8e4nv", "fp8e4nv", "v_mfma_f32_16x16x32_fp8_fp8"),
    ("gfx950", "fp8e5", "fp8e4nv", "v_mfma_f32_16x16x32_bf8_fp8"),
    ("gfx950", "fp8e5", "fp8e5", "v_mfma_f32_16x16x32_bf8_bf8")]


@pytest.mark.parametrize("chip,ta,tb,instr", FP8_COMPILE)
def test_fp8_dot_compiles_to_mfma(amd_registry, chip, ta, tb, instr):
    from tritium import plugins
    from tritium_amd import codeobj
    from tritium_amd.chips import CHIPS
    sig = dict(DOT_SIG, a_ptr=f"*{ta}", b_ptr=f"*{tb}", c_ptr="*fp32")
    with plugins.use(amd_registry):
        k = tritium.compile(ASTSource(K.dot_kernel, sig, {"M": 32, "N": 32, "K": 64}), target=GPUTarget("hip", chip, 64))
    found = set(re.findall(r"\bv_mfma_\w+", k.asm["amdgcn"]))
    assert found == {instr}, found
    codeobj.check(k.asm["hsaco"], CHIPS[chip], k.name, [8, 8, 8])


@tritium.jit
def fp8_dot(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, A_T: tl.constexpr,
            B_T: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :]).to(A_T, bitcast=True)
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :]).to(B_T, bitcast=True)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b))


# (exponent bits, mantissa bits, bias, NaN/inf convention), written out here so that the reference does not use
# the decoder under test
FP8_SPEC = {"fp8e4nv": (4, 3, 7, "fn"), "fp8e5": (5, 2, 15, "ieee"), "fp8e4b8": (4, 3, 8, "fnuz"),
            "fp8e5b16": (5, 2, 16, "fnuz")}


def _fp8_finite(fmt):
    """Every finite code of ``fmt`` and its value."""
    e, m, bias, kind = FP8_SPEC[fmt]
    codes = np.arange(256)
    ex, man = (codes >> m) & ((1 << e) - 1), codes & ((1 << m) - 1)
    mag = np.where(ex == 0, man * 2.0 ** (1 - bias - m), (1 + man / 2 ** m) * 2.0 ** (ex - bias))
    val = np.where(codes & 0x80, -mag, mag)
    bad = {"fn": (codes & 0x7F) == 0x7F, "ieee": ex == (1 << e) - 1, "fnuz": codes == 0x80}[kind]
    return codes[~bad].astype(np.uint8), val[~bad]


def _fp8_operand(rng, fmt, shape):
    codes, vals = _fp8_finite(fmt)
    pick = rng.integers(0, len(codes), shape)
    # the extremes: largest magnitudes and the smallest subnormals, of both signs
    extremes = np.argsort(np.abs(vals))[[1, 2, -2, -1]]
    pick.flat[:len(extremes)] = extremes
    return codes[pick], vals[pick]


FP8_RUN = [("gfx942", "fp8e4nv", "fp8e5", (32, 32, 32), 1, "f8f16"),
           ("gfx90a", "fp8e5", "fp8e5", (16, 16, 32), 1, "f8f16"),
           ("gfx942", "fp8e4b8", "fp8e5b16", (32, 64, 64), 4, "fp8e4b8_fp8e5b16"),
           ("gfx950", "fp8e5", "fp8e4nv", (32, 64, 64), 4, "fp8e5_fp8e4nv"),
           ("gfx950", "fp8e4nv", "fp8e4nv", (16, 16, 64), 1, "fp8e4nv_fp8e4nv")]


def _run_fp8_dot(arch, ta, tb, shape, warps):
    """The kernel's result and what Triton defines: fp8 products (exact in f32) summed in f32, in k order, as the
    emulated matrix core and the FMA lowering add them."""
    M, N, Kd = shape
    rng = np.random.default_rng(5)
    a, av = _fp8_operand(rng, ta, (M, Kd))
    b, bv = _fp8_operand(rng, tb, (Kd, N))
    c = np.zeros((M, N), np.float32)
    k = fp8_dot[(1, )](a, b, c, M, N, Kd, getattr(tl, ta.replace("fp8", "float8")),
                       getattr(tl, tb.replace("fp8", "float8")), num_warps=warps, arch=arch)
    ref = np.zeros((M, N), np.float32)
    for kk in range(Kd):
        ref = ref + np.outer(av[:, kk], bv[kk, :]).astype(np.float32)
    return k, c, ref


@pytest.mark.parametrize("arch,ta,tb,shape,warps,plan", FP8_RUN)
def test_fp8_mfma_computes_fp8_products_accumulated_in_fp32(mfma_emulator, arch, ta, tb, shape, warps, plan):
    k, c, ref = _run_fp8_dot(arch, ta, tb, shape, warps)
    assert _dot_plans(k) == [f"mfma.{plan}"]
    np.testing.assert_array_equal(c, ref)


@pytest.mark.parametrize("arch", ["gfx90a", "gfx950"])
def test_mixed_fnuz_fp8_dot_without_an_mfma_decodes_each_operand_in_its_format(mfma_emulator, arch):
    # no MFMA of these chips reads FNUZ fp8 (Triton leaves such dots to the FMA lowering too)
    k, c, ref = _run_fp8_dot(arch, "fp8e4b8", "fp8e5b16", (16, 16, 32), 1)
    assert _dot_plans(k) == ["fma"]
    np.testing.assert_array_equal(c, ref)
