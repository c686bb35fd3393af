"""A wgmma whose accumulator comes from a load in another layout (``tl.dot(x, y) + tl.load(Z)``, folded into the
dot's C operand) converts it through shared memory *before* writing its operands there (sm_90a PTX, no GPU). The
conversion used to run after, in the same scratch bytes: it wrote the f32 accumulator over A, and the tensor cores
multiplied that (Triton 3.6's test_core.py::test_dot[...add-matrix...] on an H200; tests/gpu/test_triton_core_found.py
runs it). A conversion through shared memory while another operation's data sits in scratch is now an internal
error rather than a wrong result."""
from __future__ import annotations

import os
import re
import shutil

import pytest

import tritium
import tritium.language as tl
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")


@tritium.jit
def _dot_plus_loaded(X, Y, Z, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    m, n, k = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    x = tl.load(X + m[:, None] * K + k[None, :])
    y = tl.load(Y + k[:, None] * N + n[None, :])
    zs = Z + m[:, None] * N + n[None, :]
    tl.store(zs, tl.dot(x, y) + tl.load(zs))


@pytest.mark.parametrize("M, N, K, warps", [(64, 64, 64, 4), (128, 128, 64, 4), (64, 128, 32, 8)])
def test_accumulator_converted_before_the_operands_are_written(isolated_tritium, M, N, K, warps):
    from tritium import plugins
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(reg):
        k = tritium.compile(ASTSource(_dot_plus_loaded, {"X": "*fp16", "Y": "*fp16", "Z": "*fp32"},
                                      {"M": M, "N": N, "K": K}, {}),
                            target=GPUTarget("cuda", 90, 32), options={"num_warps": warps})
    assert "ttg.convert_layout" not in k.asm["ttgir"] and "wgmma" in k.asm["ttgir"]
    body = k.asm["ptx"].split("wgmma.fence", 1)[0]
    stores = re.findall(r"\bst\.shared(?:\.v\d)?\.b(\d+)", body)
    # the fp16 operands' stores (b16) come last: no 32-bit store of the accumulator after the first of them
    assert "16" in stores and "32" in stores
    assert "32" not in stores[stores.index("16"):]
