"""A Hopper tensor-core dot (wgmma) runs asynchronously and may be left in flight into the next loop iteration
when it only accumulates into a loop-carried value. If one of its operands had to be written to shared
scratch memory (a register tile, not a pipeline stage), the next iteration's scratch writes would race with
its reads: such a dot must be waited for before its scratch memory is released."""
from __future__ import annotations

import os
import shutil

import sys

import pytest

import tritium
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "tests", "gpu"))
from scratch_dot import scaled_a_matmul  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")


def test_dot_reading_scratch_is_waited_for_in_the_loop(isolated_tritium):
    from tritium import plugins
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "K": "i32", "BM": "constexpr", "BN": "constexpr",
           "BK": "constexpr"}
    attrs = {name: [["tt.divisibility", 16]] for name, t in sig.items() if t != "constexpr"}
    with plugins.use(reg):
        k = tritium.compile(ASTSource(scaled_a_matmul, sig, {"BM": 64, "BN": 64, "BK": 32}, attrs),
                            target=GPUTarget("cuda", 90, 32), options={"num_stages": 3})
    lines = [ln.strip() for ln in k.asm["ptx"].splitlines()]
    assert any("cp.async" in ln for ln in lines)                     # b is pipelined, so the loop defers dots
    commit = next(i for i, ln in enumerate(lines) if ln.startswith("wgmma.commit_group"))
    first_wait = next(ln for ln in lines[commit:] if ln.startswith("wgmma.wait_group"))
    assert first_wait == "wgmma.wait_group.sync.aligned 0;"
