"""A row vector loaded in a pipelined loop and only broadcast (``s[:, None]``, ``s[None, :]``: the attention
backward's row maxima and sums) stays in its pipeline stage and each broadcast reads it in the layout it needs;
it was read in its own layout and converted through shared memory (two barriers) in every iteration. Numbers on
the GPU emulator (always) and an NVIDIA GPU; without a GPU, the sm_90 PTX has no such conversion."""
from __future__ import annotations

import os
import re
import shutil

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl


@triton.jit
def dot_minus_rows(A, B, S, T, C, NK, BM: tl.constexpr, BK: tl.constexpr):
    offs = tl.arange(0, BM)
    offs_k = tl.arange(0, BK)
    acc = tl.zeros((BM, BM), tl.float32)
    for i in range(NK):
        a = tl.load(A + offs[:, None] * (NK * BK) + (i * BK + offs_k)[None, :])
        b = tl.load(B + (i * BK + offs_k)[:, None] * BM + offs[None, :])
        s = tl.load(S + i * BM + offs)
        t = tl.load(T + i * BM + offs)
        # s broadcast both ways: two readers wanting two layouts
        acc = tl.dot(a, b, acc) - s[None, :] + s[:, None] * t[:, None]
    tl.store(C + offs[:, None] * BM + offs[None, :], acc)


@pytest.mark.parametrize("BM,stages", [(32, 2), (64, 3)])
def test_broadcast_row_vectors_read_from_their_stage(dev, BM, stages):
    NK, BK = 5, 16
    rng = np.random.default_rng(BM + stages)
    a = rng.standard_normal((BM, NK * BK)).astype(np.float16)
    b = rng.standard_normal((NK * BK, BM)).astype(np.float16)
    s = rng.standard_normal(NK * BM).astype(np.float32)
    t = rng.standard_normal(NK * BM).astype(np.float32)
    c = dev.put(np.full((BM, BM), np.nan, np.float32))
    dot_minus_rows[(1, )](dev.put(a), dev.put(b), dev.put(s), dev.put(t), c, NK, BM=BM, BK=BK, num_warps=4,
                          num_stages=stages)
    want = np.zeros((BM, BM))
    for i in range(NK):
        ai = a[:, i * BK:(i + 1) * BK].astype(np.float64)
        bi = b[i * BK:(i + 1) * BK].astype(np.float64)
        si, ti = s[i * BM:(i + 1) * BM].astype(np.float64), t[i * BM:(i + 1) * BM].astype(np.float64)
        want = want + ai @ bi - si[None, :] + (si * ti)[:, None]
    np.testing.assert_allclose(dev.get(c), want, rtol=1e-2, atol=2e-2)


@pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                    reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")
def test_no_conversion_through_shared_memory_on_sm90(isolated_tritium):
    import tritium
    from tritium import plugins
    from tritium.backends.compiler import GPUTarget
    from tritium.compiler import ASTSource
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    sig = {"A": "*fp16", "B": "*fp16", "S": "*fp32", "T": "*fp32", "C": "*fp32", "NK": "i32", "BM": "constexpr",
           "BK": "constexpr"}
    with plugins.use(reg):
        attrs = {(i, ): [["tt.divisibility", 16]] for i in range(6)}    # as a launch with aligned arrays
        ptx = tritium.compile(ASTSource(dot_minus_rows, sig, {"BM": 64, "BK": 16}, attrs),
                              target=GPUTarget("cuda", 90, 32), options={"num_warps": 4, "num_stages": 3}).asm["ptx"]
    lines = ptx.splitlines()
    first = next(i for i, ln in enumerate(lines) if "wgmma.mma_async" in ln)
    loops = [(int(lines.index(f"{m.group(1)}:")), i) for i, ln in enumerate(lines)
             for m in [re.search(r"bra(?:\.uni)?\s+(\$L__BB\d+_\d+);", ln)] if m and f"{m.group(1)}:" in lines]
    start, end = max((a, b) for a, b in loops if a < first < b)
    body = lines[start:end]
    # in the loop the operands arrive by cp.async and wgmma reads them in shared memory: nothing is stored there
    # by hand, and one barrier per iteration remains (the stage's)
    assert not [ln for ln in body if "st.shared" in ln]
    assert sum("bar.sync" in ln for ln in body) == 1
