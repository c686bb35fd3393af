"""A tf32 B stored (K, N) (N contiguous: ``a @ b`` on row-major matrices) is staged K-major by the software pipeline,
as Triton 3.6 does (its shared layout for B is ``transposed``, filled by 4-byte cp.async copies), because wgmma reads
tf32 operands only K-major. Before, the stage was N-major and the dot rewrote it K-major in scratch memory in every
iteration, with a barrier, and had to wait for itself there (``wgmma.wait_group 0``), so the tensor cores never
overlapped the next iteration's copies: 66 vs Triton's 83 TFLOP/s at 8192^3 on the H200. Correctness of the path
on the GPU: tests/gpu/test_wgmma_types.py (``k_major_b=False``)."""
from __future__ import annotations

import importlib.util
import os
import re
import shutil

import pytest

import tritium
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "03-matrix-multiplication.py")


def _matmul(dtype: str, n_major_b: bool, capability: int = 90):
    from tritium import plugins
    spec = importlib.util.spec_from_file_location("ex03_stage", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    sig = {"a_ptr": f"*{dtype}", "b_ptr": f"*{dtype}", "c_ptr": f"*{dtype}", "M": "i32", "N": "i32", "K": "i32",
           "stride_am": "i32", "stride_ak": "constexpr", "stride_bk": "i32", "stride_bn": "i32", "stride_cm": "i32",
           "stride_cn": "constexpr", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr",
           "GROUP_M": "constexpr"}
    # as the launcher specializes them: the unit stride is a constant, the others multiples of 16
    unit = "stride_bn" if n_major_b else "stride_bk"
    sig[unit] = "constexpr"
    consts = {"stride_ak": 1, "stride_cn": 1, unit: 1, "BLOCK_M": 128, "BLOCK_N": 128,
              "BLOCK_K": 32 if dtype == "fp32" else 64, "GROUP_M": 8}
    attrs = {k: [["tt.divisibility", 16]] for k, v in sig.items() if v != "constexpr"}
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(reg):
        return tritium.compile(ASTSource(mod.matmul_kernel, sig, consts, attrs),
                               target=GPUTarget("cuda", capability, 32), options={"num_warps": 8, "num_stages": 3})


def _copies(ptx: str) -> dict[int, int]:
    sizes = re.findall(r"cp\.async\.c[ag]\.shared\.global \[[^]]*\], \[[^]]*\], (\d+)", ptx)
    return {int(s): sizes.count(s) for s in set(sizes)}


def test_tf32_n_major_b_is_staged_k_major(isolated_tritium):
    k = _matmul("fp32", n_major_b=True)
    ptx = k.asm["ptx"]
    # B (32 x 128 fp32 per stage, 256 threads): 16 four-byte copies per thread for each of the 3 stages' fills
    # (two in the prologue, one in the loop); A stays 16-byte copies
    assert _copies(ptx) == {4: 48, 16: 12}, _copies(ptx)
    # the dot reads the stage: no scratch tile, so the tensor cores run on while the next copies are issued
    assert re.search(r"wgmma\.wait_group\.sync\.aligned 1;", ptx), "the dot waits for itself in every iteration"
    assert k.metadata_dict["shared"] == 3 * (16384 + 16384), k.metadata_dict["shared"]
    assert k.metadata_dict["n_spills"] == 0


def test_tf32_n_major_b_copies_hit_distinct_banks(isolated_tritium):
    """Each 4-byte copy of a warp writes 32 elements of the K-major stage (128-byte rows n, 16-byte chunk
    k/4 ^ n%8, word k%4). With the coalesced layout (Triton's: 4 consecutive n per thread, 32 lanes along n) a warp's
    elements share one k and n%8 takes two values: two banks, 16-way conflicts. B's load instead has one element per
    thread and copy, 8 lanes along n (a 32-byte sector each row) by 4 along k: 8 chunks x 4 words, 32 banks."""
    ttgir = _matmul("fp32", n_major_b=True).asm["ttgir"]
    loads = re.findall(r'"tt\.load".*?blocked\{spt=\[(\d+),(\d+)\],tpw=\[(\d+),(\d+)\]', ttgir)
    assert len(loads) == 2, loads
    a, b = ({"spt": (int(x[0]), int(x[1])), "tpw": (int(x[2]), int(x[3]))} for x in loads)
    assert a == {"spt": (1, 4), "tpw": (4, 8)}, a       # A: 16-byte copies along K, as before
    assert b == {"spt": (1, 1), "tpw": (4, 8)}, b


def test_k_major_b_and_16_bit_b_keep_16_byte_copies(isolated_tritium):
    for dtype, n_major in (("fp32", False), ("fp16", True)):
        ptx = _matmul(dtype, n_major_b=n_major).asm["ptx"]
        assert set(_copies(ptx)) == {16}, (dtype, n_major, _copies(ptx))


def test_mma_sync_targets_keep_the_n_major_stage(isolated_tritium):
    # sm_80 reads shared tiles into registers for mma.sync in any layout: nothing to restage
    ptx = _matmul("fp32", n_major_b=True, capability=80).asm["ptx"]
    assert set(_copies(ptx)) == {16}, _copies(ptx)
