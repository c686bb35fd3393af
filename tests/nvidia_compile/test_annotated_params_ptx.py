"""Annotated kernel parameters (``a: tl.uint8``, ``c: tl.float16``...) on the NVIDIA path, without a GPU: the
signature a launch builds from them (the runtime's binder, as ``kernel[grid](...)`` runs it) gives PTX parameters
of the annotated widths, metadata ``arg_types`` the launcher packs by, and a parameter buffer holding the values
Triton's launcher would pass (300 as u8 is 44)."""
from __future__ import annotations

import ctypes
import os
import shutil

import numpy as np
import pytest

pytest.importorskip("tritium_nvidia", reason="the NVIDIA backend is not installed")
pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")

import tritium  # noqa: E402
import tritium.language as tl  # noqa: E402
from tritium.backends.compiler import GPUTarget  # noqa: E402
from tritium.compiler import ASTSource  # noqa: E402


@tritium.jit
def _annotated(out, a: tl.uint8, b: tl.int16, c: tl.float16, d: tl.bfloat16, e: tl.float64):
    tl.store(out, a + b + c + d + e)


@pytest.fixture(scope="module")
def nvidia_registry(isolated_tritium):
    from tritium import plugins
    return plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})


def test_annotated_parameters_reach_ptx_and_the_argument_buffer(nvidia_registry):
    from tritium import plugins
    from tritium.runtime.signature import compile_inputs
    from tritium.runtime.specialize import make_binder
    from tritium_nvidia.driver import ArgumentBuffer

    key, runtime, bound, _ = make_binder(_annotated)(np.zeros(1), 300, 40000, 0.5, 1 / 3, 1 / 3)
    sig, consts, attrs, keep = compile_inputs(_annotated, key, bound)
    assert sig == {"out": "*fp64", "a": "u8", "b": "i16", "c": "fp16", "d": "bf16", "e": "fp64"}
    with plugins.use(nvidia_registry):
        k = tritium.compile(ASTSource(_annotated, sig, consts, attrs), target=GPUTarget("cuda", 90, 32))
    types = k.metadata_dict["arg_types"]
    assert types == ["ptr addrspace(1)", "i8", "i16", "half", "bfloat", "double"]
    params = [line.strip() for line in k.asm["ptx"].split("\n") if line.strip().startswith(".param")]
    assert params[1].startswith(".param .u8") and params[2].startswith(".param .u16"), params
    assert params[5].startswith(".param .f64"), params

    buf = ArgumentBuffer(types)
    assert buf.pack((0, ) + tuple(runtime[1:]))

    def read(i, ctype):
        return ctypes.cast(buf.params[i], ctypes.POINTER(ctype)).contents.value

    assert read(1, ctypes.c_uint8) == 44                      # 300 wrapped to u8, as Triton's launcher
    assert read(2, ctypes.c_int16) == 40000 - 65536
    assert read(3, ctypes.c_uint16) == 0x3800                 # 0.5 in fp16
    assert read(4, ctypes.c_uint16) == 0x3EAA                 # 1/3: the fp32 bits' upper half (Triton truncates)
    assert read(5, ctypes.c_double) == 1 / 3
