"""``tl.extra.cuda`` (Triton's ``triton.language.extra.cuda``, from tritium-nvidia through hookspecs'
``tritium_language_extras``) compiled for sm_90a, no GPU: the special registers are read as Triton reads them
(test_core.py's test_globaltimer and test_smid count them in the PTX), ``num_threads``/``num_warps`` are constexprs
of the launch's warps (test_num_threads). tests/gpu/test_extra_cuda.py runs them; the CPU backend and the
interpreter refuse them (tests/cpu/test_extra_cuda_refused.py)."""
from __future__ import annotations

import os
import re
import shutil
import sys

import pytest

import tritium
import tritium.language as tl
from tritium import plugins
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "gpu"))
from found_kernels import timed_loop, smid_per_program  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")

REGISTRY = {"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"}






@tritium.jit
def _threads(Out, Warps):
    num_threads: tl.constexpr = tl.extra.cuda.num_threads()
    offs = tl.arange(0, num_threads)
    tl.store(Out + offs, 1)
    tl.store(Warps, tl.extra.cuda.num_warps())


@tritium.jit
def _gdc(X):
    tl.extra.cuda.gdc_wait()
    tl.store(X, tl.load(X) + 1)
    tl.extra.cuda.gdc_launch_dependents()


def _compile(fn, sig, consts, warps=4):
    with plugins.use(plugins.PluginRegistry.from_objects(REGISTRY)):
        k = tritium.compile(ASTSource(fn, sig, consts, {}), target=GPUTarget("cuda", 90, 32),
                            options={"num_warps": warps})
    assert k.asm["cubin"]
    return k


def test_globaltimer_is_read_at_each_call(isolated_tritium):
    with plugins.use(plugins.PluginRegistry.from_objects(REGISTRY)):
        timer = tl.extra.cuda.globaltimer
    ptx = _compile(timed_loop, {"Out1": "*i64", "Out2": "*i64"}, {"func": timer}).asm["ptx"]
    assert ptx.count("%globaltimer") == 2
    # the second read follows the loop's memory accesses, the first precedes them
    first, second = (m.start() for m in re.finditer("%globaltimer", ptx))
    between = ptx[first:second]
    assert "ld.global" in between and "st.global" in between


def test_smid_once(isolated_tritium):
    ptx = _compile(smid_per_program, {"Out": "*i32"}, {}).asm["ptx"]
    assert ptx.count("%smid") == 1


@pytest.mark.parametrize("warps", [2, 8])
def test_num_threads_and_num_warps_are_the_launch_options(isolated_tritium, warps):
    k = _compile(_threads, {"Out": "*i32", "Warps": "*i32"}, {}, warps=warps)
    assert f"end = {32 * warps} : i32" in k.asm["ttir"]
    assert re.search(rf"arith.constant {warps} : i32", k.asm["ttir"])


def test_grid_dependency_control(isolated_tritium):
    ptx = _compile(_gdc, {"X": "*i32"}, {}).asm["ptx"]
    assert ptx.count("griddepcontrol.wait;") == 1 and ptx.count("griddepcontrol.launch_dependents;") == 1


def test_triton_module_path_is_the_extra():
    import importlib
    with plugins.use(plugins.PluginRegistry.from_objects(REGISTRY)):
        cuda = tl.extra.cuda
    assert cuda is importlib.import_module("tritium_nvidia.language_extra")
    assert cuda.libdevice is tl.extra.libdevice
    assert {"globaltimer", "smid", "num_threads", "num_warps", "gdc_wait", "gdc_launch_dependents"} <= set(cuda.__all__)
