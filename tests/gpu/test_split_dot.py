"""fp32 dots asked for as ``tf32x3``, ``bf16x3`` and ``bf16x6`` (tt-split-dot): close to the fp64 product, far
closer than one tf32 or bf16 dot, with infinities and NaNs where the IEEE dot puts them. On the GPU emulator the
pass is put in the ttir pipeline through the pipeline hook (the emulator's own pipeline does not split: its dots
are IEEE anyway), so the split arithmetic itself is checked here; on an NVIDIA GPU (whose pipeline has it) the
narrow dots run on the tensor cores."""
from __future__ import annotations

import types

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium.hookspecs import PLUGIN_API, hookimpl


@triton.jit
def _dot(X, Y, Z, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, PRECISION: tl.constexpr):
    m, n, k = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    x = tl.load(X + m[:, None] * K + k[None, :])
    y = tl.load(Y + k[:, None] * N + n[None, :])
    tl.store(Z + m[:, None] * N + n[None, :], tl.dot(x, y, input_precision=PRECISION))


def _split_in_ttir() -> types.SimpleNamespace:
    @hookimpl
    def tritium_pipeline(stage, pipeline):
        if stage == "ttir" and "tt-split-dot" not in pipeline:
            pipeline.insert_after("tt-combine", "tt-split-dot")
    return types.SimpleNamespace(TRITIUM_PLUGIN_API=PLUGIN_API, tritium_pipeline=tritium_pipeline)


@pytest.fixture(params=["emu", "cuda"])
def dev(request):
    """The emulator with tt-split-dot in its ttir pipeline, or an NVIDIA GPU (the `gpu` marker follows the name)."""
    if request.param == "cuda":
        request.getfixturevalue("cuda")
        yield "cuda"
        return
    from tritium import knobs, plugins
    request.getfixturevalue("isolated_tritium")
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "gpu-emu": "tritium.gpu.emulator",
                                               "split": _split_in_ttir()})
    with plugins.use(reg), knobs.runtime.scope():
        knobs.runtime.default_backend = "gpu-emu"
        yield "emu"


def _run(dev, x, y, precision, M, N, K, warps=4):
    z = np.zeros((M, N), np.float32)
    if dev == "emu":
        k = _dot[(1,)](x, y, z, M=M, N=N, K=K, PRECISION=precision, num_warps=warps)
    else:
        import torch
        zt = torch.from_numpy(z).cuda()
        k = _dot[(1,)](torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda(), zt, M=M, N=N, K=K,
                       PRECISION=precision, num_warps=warps)
        z = zt.cpu().numpy()
    assert k.asm["ttir"].count('"tt.dot"') == (6 if precision == "bf16x6" else 3)     # the pass ran
    return z


# relative error bounds against the fp64 product, and what one narrow dot gets (the split must beat it)
BOUND = {"tf32x3": 2e-6, "bf16x3": 2e-5, "bf16x6": 2e-6}
SINGLE = {"tf32x3": "tf32", "bf16x3": None, "bf16x6": None}


@pytest.mark.parametrize("precision", ["tf32x3", "bf16x3", "bf16x6"])
def test_close_to_the_fp64_product(dev, precision):
    M = N = 64 if dev == "cuda" else 16
    K = 64 if dev == "cuda" else 32
    rng = np.random.default_rng(5)
    x = rng.standard_normal((M, K)).astype(np.float32)
    y = rng.standard_normal((K, N)).astype(np.float32)
    exact = x.astype(np.float64) @ y.astype(np.float64)
    scale = np.abs(x).astype(np.float64) @ np.abs(y).astype(np.float64)
    got = _run(dev, x, y, precision, M, N, K)
    err = np.max(np.abs(got - exact) / scale)
    assert err < BOUND[precision], err
    # the narrow parts alone would be off by about 2**-11 (tf32) or 2**-8 (bf16): truncate the inputs by hand
    keep = 0xFFFFE000 if precision == "tf32x3" else 0xFFFF0000
    xt, yt = ((a.view(np.uint32) & np.uint32(keep)).view(np.float32) for a in (x, y))
    err_hi = np.max(np.abs(xt.astype(np.float64) @ yt.astype(np.float64) - exact) / scale)
    assert err < err_hi / 20, (err, err_hi)


def test_infinities_and_nans_as_ieee(dev):
    M = N = 64 if dev == "cuda" else 16
    K = 32
    rng = np.random.default_rng(6)
    x = rng.standard_normal((M, K)).astype(np.float32)
    y = np.abs(rng.standard_normal((K, N))).astype(np.float32) + 0.5
    x[3, 5] = np.inf
    x[7, :] = np.abs(x[7, :])
    x[7, 2] = np.nan
    for precision in ("tf32x3", "bf16x3", "bf16x6"):
        got = _run(dev, x, y, precision, M, N, K)
        assert np.all(got[3] == np.inf), precision          # inf * positive, plus finite terms
        assert np.all(np.isnan(got[7])), precision
        assert np.all(np.isfinite(np.delete(got, [3, 7], axis=0))), precision
