"""In a loop pipelined for its dots, loads that do not feed a dot are staged only when small (a row of
statistics): a large tile (here a 128 x 128 fp32 bias, 64 KB a stage) stays a plain load, so a kernel that
fit in shared memory before still does; a 1-D row is staged (cp.async of 4-byte elements)."""
from __future__ import annotations

import os
import shutil

import pytest

import tritium
import tritium.language as tl
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")


@tritium.jit
def dot_plus(A, B, X, C, NK, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, ROW: tl.constexpr):
    offs_m = tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for i in range(NK):
        a = tl.load(A + offs_m[:, None] * (NK * BK) + (i * BK + offs_k)[None, :])
        b = tl.load(B + (i * BK + offs_k)[:, None] * BN + offs_n[None, :])
        if ROW:
            x = tl.load(X + i * BM + offs_m)[:, None]
        else:
            x = tl.load(X + i * BM * BN + offs_m[:, None] * BN + offs_n[None, :])
        acc = tl.dot(a, b, acc) + x
    tl.store(C + offs_m[:, None] * BN + offs_n[None, :], acc)


def _shared(row: bool) -> tuple[int, str]:
    from tritium import plugins
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    sig = {"A": "*fp16", "B": "*fp16", "X": "*fp32", "C": "*fp32", "NK": "i32", "BM": "constexpr", "BN": "constexpr",
           "BK": "constexpr", "ROW": "constexpr"}
    attrs = {n: [["tt.divisibility", 16]] for n in ("A", "B", "X", "C")}
    with plugins.use(reg):
        k = tritium.compile(ASTSource(dot_plus, sig, {"BM": 128, "BN": 128, "BK": 64, "ROW": row}, attrs),
                            target=GPUTarget("cuda", 90, 32), options={"num_warps": 8, "num_stages": 3})
    return k.metadata.shared, k.asm["ptx"]


def test_large_non_dot_tile_is_not_staged(isolated_tritium):
    shared, _ = _shared(False)
    operand_stages = 3 * (128 * 64 + 64 * 128) * 2
    assert shared < operand_stages + 3 * 128 * 128 * 4, shared


def test_row_is_staged(isolated_tritium):
    _, ptx = _shared(True)
    assert "cp.async.ca.shared.global" in ptx
