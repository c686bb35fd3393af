"""LLVM_EXTRACT_DI_LOCAL_VARIABLES on a kernel compiled for sm_90: the LLVM IR describes the kernel's named
values (a tile: the thread's first register) with DILocalVariable records and dbg.value, the PTX carries full
DWARF (``.target sm_90a, debug``), ptxas accepts it and the cubin's DWARF names the variables. Without the knob the
PTX keeps its directives-only line table (the line-info tests)."""
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
def scaled_sum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros((BLOCK, ), tl.float32)
    for i in range(0, n, BLOCK):
        offsets = i + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offsets, mask=offsets < n, other=0.0)
        acc += x * 2
    tl.store(out_ptr + pid * BLOCK + tl.arange(0, BLOCK), acc)


SIG = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}


@pytest.fixture
def nvidia(fresh_cache):
    from tritium import knobs, plugins
    registry = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(registry), knobs.compilation.scope():
        yield knobs


def compile_kernel():
    return tritium.compile(ASTSource(scaled_sum, SIG, {"BLOCK": 256}), target=GPUTarget("cuda", 90, 32))


def test_variables_reach_the_ptx_and_the_cubin(nvidia):
    plain = compile_kernel()
    nvidia.compilation.dump_ir_extract_di_local_variables = True
    k = compile_kernel()
    assert k.hash != plain.hash                    # part of the cache key
    llir = k.asm["llir"]
    names = set(re.findall(r'!DILocalVariable\(name: "(\w+)"', llir))
    assert {"pid", "acc", "offsets", "x"} <= names, names
    assert re.search(r"#dbg_value\(|call void @llvm\.dbg\.value\(", llir)
    assert "emissionKind: FullDebug" in llir
    ptx = k.asm["ptx"]
    # full DWARF: ptxas builds a debug (unoptimized: it refuses "optimized debugging") cubin from it
    assert re.search(r"^\.target sm_90a, debug", ptx, re.M) and ".section\t.debug_info" in ptx
    cubin = k.asm["cubin"]
    assert cubin[:4] == b"\x7fELF" and b".debug_info" in cubin
    for name in (b"pid", b"acc", b"offsets", b"x"):
        assert name + b"\0" in cubin, name
    assert "DILocalVariable" not in plain.asm["llir"] and not re.search(r"^\.target .*debug", plain.asm["ptx"], re.M)
