"""After ``warmup`` and ``_init_handles()``, a compiled kernel reports its registers, spills and shared memory
as Triton's does (tutorial 02 sizes its persistent grid from ``kernel.n_regs`` and ``metadata.shared``): the
launcher takes them from ptxas's report, before any device loads the binary, so this needs no GPU."""
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
def row_softmax(y_ptr, x_ptr, n_cols, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + tl.program_id(0) * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + tl.program_id(0) * n_cols + cols, e / tl.sum(e, axis=0), mask=cols < n_cols)


def test_launcher_reports_registers_before_loading(isolated_tritium):
    from tritium import plugins
    from tritium_nvidia.driver import CudaLauncher
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    sig = {"y_ptr": "*fp32", "x_ptr": "*fp32", "n_cols": "i32", "BLOCK": "constexpr"}
    with plugins.use(reg):
        k = tritium.compile(ASTSource(row_softmax, sig, {"BLOCK": 512}), target=GPUTarget("cuda", 90, 32),
                            options={"num_warps": 4})
    assert k.n_regs == 0                      # nothing known before a launcher exists
    CudaLauncher(k, None)                     # what driver.make_launcher builds for _init_handles
    assert k.n_regs == k.metadata.n_regs > 0 and k.n_spills == k.metadata.n_spills
    assert k.metadata.shared > 0              # the rows' maximum and sum cross warps through shared memory
