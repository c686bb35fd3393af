"""sm_90, examples/07's backward at the tutorial's settings with the last register-A dot of each loop (dK += dS^T Q,
dQ += dS K) left running into the next iteration (TRITIUM_NVIDIA_CARRY_REGISTER_A): ptxas must keep the wgmma
pipelined (no C7514/C7515 note: with one, ptxas serializes every wgmma of the kernel, a warpgroup.arrive and a
wait around each of the 44 of the D64 kernel).

Such a loop is tested at its entry and at its end, and its last iteration leaves through a block of its own that
retires the running dot (gpu/lower/carry_dot.py ``exit_edge``). Before, the retiring wait was in the loop's exit
block, which the path that skips the loop also reaches with copies of the initial (zero) accumulator: with LLVM's
loop strength reduction on (TRITIUM_NVIDIA_LSR=1) those copies landed in a block of that path only and ptxas
printed C7515 for the D64 kernel; with LSR off (the default for these kernels) they happened to land before the
loop's entry test."""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess

import pytest

import tritium
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")


def _bwd_ptx(D: int, causal: bool, **knobs) -> str:
    from tritium import plugins
    from tritium_nvidia.knobs import nvidia
    spec = importlib.util.spec_from_file_location("ex07_bwd_carry_exit", os.path.join(ROOT, "examples",
                                                                                      "07-fused-attention.py"))
    ex = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex)
    sig = {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "sm_scale": "fp32", "DO": "*fp16", "DQ": "*fp16",
           "DK": "*fp16", "DV": "*fp16", "M": "*fp32", "D": "*fp32", "stride_z": "i32", "stride_h": "i32",
           "stride_tok": "i32", "H": "i32", "N_CTX": "i32"}
    consts = dict(ex.BWD, HEAD_DIM=D, CAUSAL=causal)
    opts = {"num_warps": consts.pop("num_warps"), "num_stages": consts.pop("num_stages")}
    sig.update({k: "constexpr" for k in consts})
    attrs = {name: [["tt.divisibility", 16]] for name in ("Q", "K", "V", "DO", "DQ", "DK", "DV", "M", "D",
                                                           "stride_z", "stride_h", "stride_tok", "N_CTX")}
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(reg), nvidia.scope():
        for k, v in knobs.items():
            setattr(nvidia, k, v)
        return tritium.compile(ASTSource(ex.attn_bwd, sig, consts, attrs), target=GPUTarget("cuda", 90, 32),
                               options=opts).asm["ptx"]


def _ptxas_notes(ptx: str, tmp_path) -> str:
    from tritium_nvidia.toolchain import find_ptxas
    p = tmp_path / "k.ptx"
    p.write_text(ptx)
    r = subprocess.run([find_ptxas(), "-arch=sm_90a", "-v", str(p), "-o", str(tmp_path / "k.cubin")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stderr


def _dot_loops(ptx: str) -> list[str]:
    out = []
    for m in re.finditer(r"^\s*@%p\d+ bra\s+(\$L__BB\d+_\d+);", ptx, re.M):
        start = ptx.find(m.group(1) + ":")
        if 0 <= start < m.start() and "wgmma.mma_async" in ptx[start:m.end()]:
            out.append(ptx[start:m.end()])
    return out


@pytest.mark.parametrize("lsr", ["1", "auto"])
@pytest.mark.parametrize("causal", [False, True])
def test_carried_register_a_dots_stay_pipelined(tmp_path, causal, lsr):
    ptx = _bwd_ptx(64, causal, carry_register_a=1, lsr=lsr)
    notes = _ptxas_notes(ptx, tmp_path)
    assert "C7515" not in notes and "C7514" not in notes, notes
    loops = _dot_loops(ptx)
    assert [b.count("wgmma.wait_group") for b in loops] == [2] * (4 if causal else 2)

