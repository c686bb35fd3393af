"""Descriptor ``atomic_min``/``atomic_max`` of fp16/bf16 blocks where the tensor-memory unit reduces them (sm_90: the
capability ``descriptor-reduce-half-minmax``), as Triton allows them with native TMA: one cp.reduce.async.bulk.tensor
.min/.max per block; a box that cannot be a TMA one falls back to per-element atomics (a compare-and-swap loop).
Before sm_90, and on the CPU backend, they are refused as Triton's fallback refuses them. PTX through ptxas, no GPU;
tests/gpu/test_descriptor_half_minmax.py checks the values on an H200."""
from __future__ import annotations

import os
import re
import shutil
import sys

import pytest

import tritium
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "gpu"))
from found_kernels import descriptor_minmax  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")




def _compile(cap, dtype, kind, shift=0):
    from tritium import plugins
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    aligned = {n: [["tt.divisibility", 16]] for n in ("out_ptr", "a_ptr", "N")}
    with plugins.use(reg):
        sig = {"out_ptr": f"*{dtype}", "a_ptr": f"*{dtype}", "M": "i32", "N": "i32"}
        k = tritium.compile(ASTSource(descriptor_minmax, sig, {"MB": 8, "NB": 32, "KIND": kind, "SHIFT": shift}, aligned),
                            target=GPUTarget("cuda", cap, 32), options={"num_warps": 4})
    return k.asm["ptx"]


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("kind", ["min", "max"])
def test_one_bulk_reduction_on_sm90(isolated_tritium, dtype, kind):
    ptx = _compile(90, dtype, kind)
    assert re.findall(r"cp\.reduce\.async\.bulk\.tensor\S+", ptx) == \
        [f"cp.reduce.async.bulk.tensor.2d.global.shared::cta.{kind}.bulk_group"]
    assert "atom." not in ptx


def test_unaligned_box_falls_back_to_atomics(isolated_tritium):
    ptx = _compile(90, "fp16", "min", shift=1)
    assert "cp.reduce.async.bulk" not in ptx and "atom.relaxed.gpu.global.cas" in ptx


def test_refused_before_sm90(isolated_tritium):
    with pytest.raises(Exception, match="descriptor atomic_max does not support bf16"):
        _compile(80, "bf16", "max")
