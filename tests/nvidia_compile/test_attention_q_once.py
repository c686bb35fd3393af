"""sm_90: an operand written to shared memory before a loop for wgmma (Q of attention) is written once when a later
loop of the same block reads it too: the causal forward's diagonal loop reuses the first loop's copy. Before, it
wrote Q again, so Q's registers stayed live through the first loop (D128 causal spilled 72 bytes; D64 causal used
255 registers, 244 after). The buffer is freed after the last loop that reads it: shared memory does not grow."""
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

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "gpu"))
import attention as A  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")


def _compile(causal: bool):
    from tritium import plugins
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    kernel = A.attn_fwd_ptr
    consts = {"N_CTX": 1024, "HEAD_DIM": 64, "BLOCK_M": 128, "BLOCK_N": 64, "STAGE": 3 if causal else 1}
    sig, attrs = {}, {}
    for name in kernel.arg_names:
        if name in ("stride_qk", "stride_kk", "stride_vn", "stride_on"):
            sig[name], consts[name] = "constexpr", 1     # specialized to 1, as at a launch
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


def test_causal_forward_writes_q_to_shared_once(isolated_tritium):
    plain, causal = _compile(False), _compile(True)
    # the only 16-byte shared stores of the forward are Q's write (K and V arrive by cp.async)
    writes = [len(re.findall(r"\bst\.shared\.v4", k.asm["ptx"])) for k in (plain, causal)]
    assert writes[0] > 0 and writes[1] == writes[0], writes
    assert causal.metadata.shared == plain.metadata.shared


@triton.jit
def _nested(A, B, C, n, flag):
    r = tl.arange(0, 64)
    a = tl.load(A + r[:, None] * 64 + r[None, :])
    acc = tl.zeros([64, 64], dtype=tl.float32)
    if flag > 0:
        for i in range(0, n):
            acc = tl.dot(a, tl.load(B + i * 4096 + r[:, None] * 64 + r[None, :]), acc)
    for j in range(0, n):
        acc = tl.dot(a, tl.load(B + j * 4096 + r[:, None] * 64 + r[None, :]), acc)
    tl.store(C + r[:, None] * 64 + r[None, :], acc + a.to(tl.float32))


def test_operand_read_by_loops_of_different_blocks(isolated_tritium):
    # the search for a later loop walked up from a use outside the first loop's block to the module, whose
    # block the MLIR bindings abort on (the process died)
    from tritium import plugins
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(reg):
        k = tritium.compile(ASTSource(_nested, {"A": "*fp16", "B": "*fp16", "C": "*fp32", "n": "i32", "flag": "i32"},
                                      {}, {}), target=GPUTarget("cuda", 90, 32),
                            options={"num_warps": 4, "num_stages": 3})
    assert k.asm["ptx"].count("wgmma.mma_async") == 8
