"""The examples whose kernels take no COMPILE_CASES (fused attention, persistent matmul on tensor descriptors, the
launch-overhead kernel) compiled for AMD GPUs through the examples' own launch code, in compile-only mode
(TRITIUM_AMD_COMPILE_ONLY: host tensors stand in for device memory, nothing runs). Every kernel launched becomes a
checked code object; dots are MFMA instructions."""
from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import sys

import pytest

pytest.importorskip("tritium_amd", reason="tritium-amd is not installed")
torch = pytest.importorskip("torch", reason="the example's launch code uses torch tensors")
from tritium_amd import codeobj, driver as hipdrv  # noqa: E402
from tritium_amd.chips import CDNA, CHIPS  # noqa: E402
from tritium_amd.compiler import ARG_BYTES  # noqa: E402
from tritium_amd.knobs import amd as amd_knobs  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _example(file):
    path = os.path.join(ROOT, "examples", file)
    spec = importlib.util.spec_from_file_location(f"_amd_{file[:2]}", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


@contextlib.contextmanager
def compile_only(registry, chip):
    from tritium import knobs, plugins
    with plugins.use(registry), knobs.runtime.scope(), amd_knobs.scope():
        knobs.runtime.default_backend = "amd"
        amd_knobs.compile_only, amd_knobs.arch = True, chip
        start = len(hipdrv.compiled)
        got: list = []
        yield got
        got += hipdrv.compiled[start:]


def check_all(kernels, chip):
    for kk in kernels:
        md = kk.metadata_dict
        assert md["arch"] == chip
        codeobj.check(kk.asm["hsaco"], CHIPS[chip], kk.name, [ARG_BYTES.get(t, 8) for t in md["arg_types"]],
                      md["num_warps"] * 64)


@pytest.mark.parametrize("chip", CDNA)
@pytest.mark.parametrize("causal", [False, True])
def test_fused_attention_compiles_for_amd(amd_registry, chip, causal):
    mod = _example("07-fused-attention.py")
    Z, H, N, D = 1, 2, 128, 64
    q, k, v, do = (torch.randn((Z, H, N, D), dtype=torch.float16) for _ in range(4))
    bwd = dict(mod.BWD, BLOCK_M1=32, BLOCK_N1=64, BLOCK_M2=64, BLOCK_N2=32, num_stages=2)
    with compile_only(amd_registry, chip) as kernels:
        o, M = mod.forward(q, k, v, causal, 0.125, (64, 64, 4, 2))
        mod.backward(q, k, v, o, M, do, causal, 0.125, bwd)
    assert sorted({kk.name for kk in kernels}) == ["attn_bwd", "attn_bwd_preprocess", "attn_fwd"]
    check_all(kernels, chip)
    for kk in kernels:
        if kk.name != "attn_bwd_preprocess":
            assert re.search(r"\bv_mfma_f32_16x16x16_?f16\b", kk.asm["amdgcn"]), kk.name


@pytest.mark.parametrize("chip,dtype", [(c, "float16") for c in CDNA] + [("gfx942", "bfloat16"),
                                                                        ("gfx942", "float32")])
def test_persistent_descriptor_matmul_compiles_for_amd(amd_registry, chip, dtype):
    mod = _example("08-persistent-matmul-descriptors.py")
    a, b, c = mod.inputs(dtype, 256, 192, 128, "cpu")
    with compile_only(amd_registry, chip) as kernels:
        mod.matmul(a, b, c, 4, (64, 64, 32, 4, 2))
    assert [kk.name for kk in kernels] == ["matmul_persistent"]
    check_all(kernels, chip)
    assert re.search(r"\bv_mfma_", kernels[0].asm["amdgcn"])


def test_launch_overhead_kernel_compiles_for_amd(amd_registry):
    mod = _example("06-launch-overhead.py")
    out = torch.zeros(1)
    with compile_only(amd_registry, "gfx90a") as kernels:
        mod.store_one[(1, )](out, 1.0)
    assert [kk.name for kk in kernels] == ["store_one"]
    check_all(kernels, "gfx90a")
