"""fp32 ``tl.math.exp2`` is ``ex2.approx.ftz.f32`` as in Triton (subnormal results flush to zero); without .ftz
ptxas wrapped each one in a range test and two multiplications, 204 FMUL instead of 68 in attention's inner loop.
``tl.exp`` keeps Triton's ``ex2.approx.f32`` of x * log2(e)."""
from __future__ import annotations

import os
import re
import shutil

import pytest

import tritium
import tritium as triton
import tritium.language as tl
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")


@triton.jit
def _exps(x_ptr, y_ptr, z_ptr):
    offs = tl.arange(0, 128)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, tl.math.exp2(x))
    tl.store(z_ptr + offs, tl.exp(x))


def test_exp2_flushes_subnormals_exp_does_not(isolated_tritium):
    from tritium import plugins
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(reg):
        ptx = tritium.compile(ASTSource(_exps, {"x_ptr": "*fp32", "y_ptr": "*fp32", "z_ptr": "*fp32"}, {}, {}),
                              target=GPUTarget("cuda", 90, 32), options={"num_warps": 4}).asm["ptx"]
    ops = set(re.findall(r"\bex2\.approx[\w.]*", ptx))
    assert ops == {"ex2.approx.ftz.f32", "ex2.approx.f32"}, ops
