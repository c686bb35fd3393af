"""On NVIDIA GPUs tl.dot needs K of at least 16 (the tensor-core shapes; Triton's min_dot_size): compiling a smaller dot
for a CUDA target is a compile error that names the kernel, points at the dot and says what to do. (The CPU
backend and the interpreter accept any size: tests/cpu/test_small_dots.py.)"""
from __future__ import annotations

import pytest

import tritium
import tritium.language as tl
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource
from tritium.compiler.errors import CompilationError


@tritium.jit
def _small_dot(x_ptr):
    a = tl.zeros((8, 8), tl.float32)
    tl.store(x_ptr + tl.arange(0, 8), tl.sum(tl.dot(a, a), 0))


def test_dot_below_16_is_refused_for_a_gpu_target():
    from tritium import plugins
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(reg), pytest.raises(CompilationError) as info:
        tritium.compile(ASTSource(_small_dot, {"x_ptr": "*fp32"}, {}, {}), target=GPUTarget("cuda", 90, 32))
    text = str(info.value)
    assert "_small_dot" in text and "tl.dot(a, a)" in text and "^" in text
    assert "K >= 16" in text and "larger blocks" in text
