"""sm_90: the causal attention forward's CTA barriers (Triton 3.6 has 9 in the whole kernel, one between the two
causal loops).

Two causes of extra ones, each with its own test:
- index arithmetic (``offs_m = start_m * BLOCK_M + tl.arange(...)``, aranges broadcast along another axis) was
  computed in one layout and converted to its users' through shared memory, a barrier each; it is now computed
  again in the layout it is needed in (rematerialized), as Triton does;
- parts of the lowering that each need a barrier (a loop's drain, the next loop's prologue, a scratch buffer)
  asked for one back to back; a barrier that follows another with no memory access between is dropped
  (``tritium_nvidia.barriers``).
"""
from __future__ import annotations

import os
import re
import shutil
import sys

import pytest

import tritium
import tritium as triton
import tritium.language as tl
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource
from tritium_nvidia.barriers import drop_repeated_barriers

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "gpu"))
import attention as A  # noqa: E402

needs_ptxas = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                 reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")
BAR = "call void @llvm.nvvm.barrier0()"


def _fn(*body: str) -> str:
    return "\n".join(["define void @k(ptr addrspace(3) %p) {", "entry:", *("  " + b for b in body), "}"])


def test_barrier_after_register_arithmetic_is_dropped():
    text = _fn(BAR, "%a = add i32 1, 2", "%g = getelementptr i8, ptr addrspace(3) %p, i32 %a", BAR, "ret void")
    assert drop_repeated_barriers(text).count("barrier0") == 1
    # the optimizer's spelling, with debug locations
    upgraded = "tail call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0), !dbg !7"
    assert drop_repeated_barriers(_fn(upgraded, "%a = mul nsw i32 3, 4", upgraded, "ret void")).count("aligned.all") == 1


@pytest.mark.parametrize("between", [
    "store i32 1, ptr addrspace(3) %p, align 4",
    "%v = load i32, ptr addrspace(3) %p, align 4",
    'call void asm sideeffect "cp.async.wait_group 0;", "~{memory}"()',
    "%r = atomicrmw add ptr addrspace(3) %p, i32 1 monotonic",
    "call void @other()",
])
def test_barrier_after_memory_access_stays(between):
    assert drop_repeated_barriers(_fn(BAR, between, BAR, "ret void")).count("barrier0") == 2


def test_barrier_after_a_label_stays():
    # the block may be entered from elsewhere, where no barrier preceded it
    text = _fn(BAR, "br label %next", "next:", BAR, "ret void")
    assert drop_repeated_barriers(text).count("barrier0") == 2


def _compile_fwd(causal: bool):
    from tritium import plugins
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    kernel = A.attn_fwd_ptr
    consts = {"N_CTX": 1024, "HEAD_DIM": 64, "BLOCK_M": 128, "BLOCK_N": 64, "STAGE": 3 if causal else 1}
    sig, attrs = {}, {}
    for name in kernel.arg_names:
        if name in ("stride_qk", "stride_kk", "stride_vn", "stride_on"):
            sig[name], consts[name] = "constexpr", 1
        elif name in consts:
            sig[name] = "constexpr"
        elif name in ("Q", "K", "V", "Out"):
            sig[name] = "*fp16"
        elif name == "M":
            sig[name] = "*fp32"
        elif name == "sm_scale":
            sig[name] = "fp32"
        else:
            sig[name] = "i32"
        if sig[name].startswith("*") or sig[name] == "i32" and name.startswith("stride_"):
            attrs[name] = [["tt.divisibility", 16]]
    with plugins.use(reg):
        return tritium.compile(ASTSource(kernel, sig, consts, attrs), target=GPUTarget("cuda", 90, 32),
                               options={"num_warps": 4, "num_stages": 3})


@needs_ptxas
def test_causal_forward_barriers(isolated_tritium):
    ptx = _compile_fwd(True).asm["ptx"]
    # before: 19 (offs_m and two aranges through shared memory, three barriers each at the top; four back to
    # back between the loops); Triton 3.6: 9
    assert ptx.count("bar.sync") <= 9, ptx.count("bar.sync")
    # between the first loop's exit and the second loop's first copies: one barrier (the drain)
    loops = [m.start() for m in re.finditer(r"cp\.async\.wait_group 0;", ptx)]
    assert len(loops) == 2
    between = ptx[loops[0]:ptx.index("cp.async.commit_group", loops[0])]
    assert between.count("bar.sync") == 1, between


@triton.jit
def _rows_twice(X, Out, stride, BLOCK: tl.constexpr):
    # offs_m is used as rows of a 2-D load (one layout) and as a 1-D store's offsets (another)
    offs_m = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    offs_n = tl.arange(0, BLOCK)
    x = tl.load(X + offs_m[:, None] * stride + offs_n[None, :])
    tl.store(Out + offs_m, tl.sum(x, 1))


@needs_ptxas
def test_index_arithmetic_is_recomputed_not_converted(isolated_tritium):
    from tritium import plugins
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(reg):
        k = tritium.compile(ASTSource(_rows_twice, {"X": "*fp32", "Out": "*fp32", "stride": "i32"},
                                      {"BLOCK": 64}, {}), target=GPUTarget("cuda", 90, 32),
                            options={"num_warps": 4, "num_stages": 1})
    ptx = k.asm["ptx"]
    # the row sums go through shared memory to the store's layout (one barrier); offs_m never needs to
    assert ptx.count("bar.sync") == 1, ptx.count("bar.sync")
