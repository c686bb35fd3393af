"""fp32 ``/`` on NVIDIA is ``div.full.f32`` (full range, 2 ulp), as Triton lowers ``arith.divf``: ptxas makes it a
reciprocal and a multiply and shares the reciprocal between divisions by one value (attention's epilogue,
``acc / l_i[:, None]``, had 64 correctly rounded division subroutines per thread). ``tl.math.div_rn`` stays the
IEEE division, and so are ``libdevice.div_rn`` and fp64 ``/``; fp16/bf16 ``/`` computes in fp32 as in Triton."""
from __future__ import annotations

import os
import re
import shutil

import pytest

import tritium
import tritium as triton
import tritium.language as tl
from tritium.language.extra import libdevice
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")


@triton.jit
def _divide(x_ptr, y_ptr, z_ptr):
    offs = tl.arange(0, 128)
    tl.store(z_ptr + offs, tl.load(x_ptr + offs) / tl.load(y_ptr + offs))


@triton.jit
def _divide_rn(x_ptr, y_ptr, z_ptr):
    offs = tl.arange(0, 128)
    tl.store(z_ptr + offs, tl.math.div_rn(tl.load(x_ptr + offs), tl.load(y_ptr + offs)))


@triton.jit
def _libdevice_div_rn(x_ptr, y_ptr, z_ptr):
    offs = tl.arange(0, 128)
    tl.store(z_ptr + offs, libdevice.div_rn(tl.load(x_ptr + offs), tl.load(y_ptr + offs)))


def _divisions(fn, ty):
    from tritium import plugins
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(reg):
        ptx = tritium.compile(ASTSource(fn, {"x_ptr": ty, "y_ptr": ty, "z_ptr": ty}, {}, {}),
                              target=GPUTarget("cuda", 90, 32), options={"num_warps": 4}).asm["ptx"]
    return set(re.findall(r"\bdiv\.(?:full|rn|approx)[\w.]*", ptx))


@pytest.mark.parametrize("ty", ["*fp32", "*fp16", "*bf16"])
def test_slash_is_div_full(isolated_tritium, ty):
    assert _divisions(_divide, ty) == {"div.full.f32"}


def test_div_rn_and_fp64_stay_ieee(isolated_tritium):
    assert _divisions(_divide_rn, "*fp32") == {"div.rn.f32"}
    assert _divisions(_divide, "*fp64") == {"div.rn.f64"}


@pytest.mark.parametrize("ty,want", [("*fp32", "div.rn.f32"), ("*fp64", "div.rn.f64")])
def test_libdevice_div_rn_stays_ieee(isolated_tritium, ty, want):
    # was arith.divf, which became div.full.f32 with `/` (conformance test_directed_rounding[div-float32])
    assert _divisions(_libdevice_div_rn, ty) == {want}
