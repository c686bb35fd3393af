"""``tl.target_info.has_capability`` answers for the target being compiled, not for the active driver: a kernel
compiled for CUDA on a CPU host sees the CUDA backend's capabilities."""
from __future__ import annotations

import os
import re
import shutil

import pytest

import tritium
import tritium.language as tl
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")


@tritium.jit
def which_memory(o_ptr):
    # "device-memory" is declared by the CUDA backend only, "host-memory" by the CPU backend only
    if tl.target_info.has_capability("device-memory"):
        tl.store(o_ptr, 1111)
    if tl.target_info.has_capability("host-memory"):
        tl.store(o_ptr, 2222)


def test_has_capability_answers_for_the_compile_target(fresh_cache):
    from tritium import knobs, plugins
    from tritium.runtime.driver import driver
    from tritium_cpu.plugin import CAPABILITIES as CPU
    from tritium_nvidia.plugin import CAPABILITIES as CUDA
    assert "device-memory" in CUDA - CPU and "host-memory" in CPU - CUDA
    # both backends installed, the CPU active (no GPU needed): the active driver is not the target
    registry = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "cpu": "tritium_cpu.plugin",
                                                    "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(registry), knobs.runtime.scope():
        knobs.runtime.default_backend = "cpu"
        assert driver.active.get_current_target().backend == "cpu"
        k = tritium.compile(ASTSource(which_memory, {"o_ptr": "*i32"}, {}), target=GPUTarget("cuda", 90, 32))
        ttir = k.asm["ttir"]
        assert re.search(r"arith\.constant 1111 : i32", ttir), ttir
        assert "2222" not in ttir
        # outside a compilation it still answers for the active backend (the CPU here)
        assert tl.target_info.has_capability("host-memory") and not tl.target_info.has_capability("device-memory")


def test_make_ir_with_tritons_five_arguments_still_asks_the_active_driver(fresh_cache):
    """A caller of ASTSource.make_ir written for Triton passes no capabilities: the active driver answers."""
    from tritium import knobs, plugins
    from tritium._mlir import tile_context
    from tritium.compiler.compiler import make_backend
    registry = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "cpu": "tritium_cpu.plugin",
                                                    "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(registry), knobs.runtime.scope():
        knobs.runtime.default_backend = "cpu"
        target = GPUTarget("cuda", 90, 32)
        opts = make_backend(target).parse_options({})
        module = ASTSource(which_memory, {"o_ptr": "*i32"}, {}).make_ir(target, opts, None, None, tile_context())
        assert "2222" in str(module) and "1111" not in str(module)
