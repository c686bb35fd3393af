"""``tl.extra.cuda`` (tritium-nvidia's) on the CPU backend and in the interpreter: each function is refused with a
message that names it and says it reads an NVIDIA GPU, at the call; ``num_warps`` too, since the CPU's code does not
depend on the launch's warps (Triton's interpreter has no answer for it either). tests/nvidia_compile/
test_extra_cuda_ptx.py compiles them for the GPU."""
from __future__ import annotations

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium import knobs, plugins


@pytest.fixture
def with_nvidia_extra(isolated_tritium):
    # the NVIDIA plugin is installed beside the CPU one (its driver finds no GPU here: the CPU runs kernels)
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "cpu": "tritium_cpu.plugin",
                                               "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(reg), knobs.runtime.scope():
        knobs.runtime.default_backend = "cpu"
        yield reg


@tritium.jit
def _read(Out, WHAT: tl.constexpr):
    if WHAT == "smid":
        v = tl.extra.cuda.smid()
    elif WHAT == "globaltimer":
        v = tl.extra.cuda.globaltimer()
    elif WHAT == "num_warps":
        v = tl.extra.cuda.num_warps()
    else:
        v = tl.extra.cuda.num_threads()
    tl.store(Out, v)


@pytest.mark.parametrize("interpret", [False, True])
@pytest.mark.parametrize("what", ["smid", "globaltimer", "num_warps", "num_threads"])
def test_refused_naming_the_function(with_nvidia_extra, interpret, what):
    out = np.zeros(1, np.int64)
    knobs.runtime.interpret = interpret
    with pytest.raises(Exception) as info:
        _read[(1,)](out, WHAT=what)
    text = str(info.value)
    assert f"tl.extra.cuda.{what}() reads an NVIDIA GPU" in text
    assert f"tl.extra.cuda.{what}()" in text and "^" in text      # the call is pointed at
    assert "compiled for " + ("the interpreter" if interpret else "a target that is not an NVIDIA GPU") in text
