"""libdevice's correctly rounded basic operations on NVIDIA: ``add_rn``/``sub_rn``/``mul_rn`` are each their own
rounded instruction, never contracted into an fma with a neighbour (Triton calls ``__nv_fmul_rn`` and kin, which
are ``mul.rn``/``add.rn``; compensated algorithms such as TwoProduct rely on it), while plain ``a * b + c`` still
fuses; ``sqrt_rn`` is ``sqrt.rn``, not the approximate square root that ``tl.sqrt`` is."""
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
def _two_product(x_ptr, y_ptr, z_ptr):
    offs = tl.arange(0, 128)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    p = libdevice.mul_rn(x, y)
    tl.store(z_ptr + offs, libdevice.sub_rn(libdevice.mul_rn(x, y), p) + libdevice.add_rn(libdevice.mul_rn(y, x), y))


@triton.jit
def _fused(x_ptr, y_ptr, z_ptr):
    offs = tl.arange(0, 128)
    x = tl.load(x_ptr + offs)
    tl.store(z_ptr + offs, x * tl.load(y_ptr + offs) + x)


@triton.jit
def _sqrt_rn(x_ptr, y_ptr, z_ptr):
    offs = tl.arange(0, 128)
    tl.store(z_ptr + offs, libdevice.sqrt_rn(tl.load(x_ptr + offs)) + tl.sqrt(tl.load(y_ptr + offs)))


def _ops(fn, ty="*fp32"):
    from tritium import plugins
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(reg):
        ptx = tritium.compile(ASTSource(fn, {"x_ptr": ty, "y_ptr": ty, "z_ptr": ty}, {}, {}),
                              target=GPUTarget("cuda", 90, 32), options={"num_warps": 4}).asm["ptx"]
    return set(re.findall(r"\b(?:fma|mul|add|sub|sqrt)\.(?:rn|approx)[\w.]*", ptx))


@pytest.mark.parametrize("ty", ["*fp32", "*fp64"])
def test_rn_ops_are_not_contracted(isolated_tritium, ty):
    bits = ty[-2:]
    ops = _ops(_two_product, ty)
    assert f"fma.rn.f{bits}" not in ops, ops
    assert {f"mul.rn.f{bits}", f"add.rn.f{bits}"} <= ops | {f"sub.rn.f{bits}"}, ops


def test_plain_arithmetic_still_fuses(isolated_tritium):
    assert "fma.rn.f32" in _ops(_fused)


def test_sqrt_rn_is_correctly_rounded(isolated_tritium):
    assert {"sqrt.rn.f32", "sqrt.approx.f32"} <= _ops(_sqrt_rn)
