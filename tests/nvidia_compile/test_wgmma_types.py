"""Every operand type Hopper's wgmma has (fp16, bf16, tf32, fp8 e4m3/e5m2, int8) compiles to wgmma for sm_90,
with B K-major (a pipeline stage the descriptors read in place) or N-major (16-bit types read it transposed;
the others need K-major operands, so the stage is rewritten K-major in scratch first). ptxas assembles the
result, which checks the instruction forms (tf32/fp8 take no transpose operands, integers no scale
operands). tf32, fp8 and int8 dots were mma.sync before."""
from __future__ import annotations

import os
import re
import shutil
import sys

import pytest

import tritium
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "tests", "gpu"))
from typed_dots import TYPES, typed_matmul  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")


@pytest.mark.parametrize("k_major_b", [True, False])
@pytest.mark.parametrize("name,elem,acc,kstep,ptx_types", TYPES, ids=[t[0] for t in TYPES])
def test_dot_types_use_wgmma_on_sm90(isolated_tritium, name, elem, acc, kstep, ptx_types, k_major_b):
    ptx, cubin = _compile(elem, acc, kstep, k_major_b, 128, 128)
    insts = set(re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n\d+k\d+\.[\w.]+", ptx))
    assert insts == {f"wgmma.mma_async.sync.aligned.m64n128k{kstep}.{ptx_types}"}, insts
    assert "mma.sync" not in ptx and "cp.async" in ptx
    assert cubin[:4] == b"\x7fELF"


@pytest.mark.parametrize("BN", [32, 64])
@pytest.mark.parametrize("k_major_b", [True, False])
@pytest.mark.parametrize("name,elem,acc,kstep,ptx_types", TYPES, ids=[t[0] for t in TYPES])
def test_64_rows_at_8_warps_split_n_in_parts_under_a_panel(isolated_tritium, name, elem, acc, kstep, ptx_types,
                                                           k_major_b, BN):
    """64 x BN at 8 warps: the two warpgroups split N (Triton's warpsPerCTA [4, 2]). tf32 and 8-bit B are staged
    K-major, so a part of BN / 2 columns starts at a row of the stage: wgmma m64n(BN/2). A 16-bit B may be
    MN-major, where a part must be a whole 64-column panel: under BN 128 it keeps mma.sync."""
    ptx, cubin = _compile(elem, acc, kstep, k_major_b, 64, BN)
    insts = set(re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n\d+k\d+\.[\w.]+", ptx))
    if kstep == 16:
        assert not insts and "mma.sync" in ptx
    else:
        assert insts == {f"wgmma.mma_async.sync.aligned.m64n{BN // 2}k{kstep}.{ptx_types}"}, insts
        assert "mma.sync" not in ptx
    assert cubin[:4] == b"\x7fELF"


def _compile(elem, acc, kstep, k_major_b, BM, BN):
    from tritium import plugins
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    BK = 128 // (4 if elem == "fp32" else 2 if kstep == 16 else 1)
    sig = {"a_ptr": f"*{elem}", "b_ptr": f"*{elem}", "c_ptr": f"*{acc}", "M": "i32", "N": "i32", "K": "i32",
           "stride_am": "i32", "stride_ak": "constexpr", "stride_bk": "i32", "stride_bn": "i32", "stride_cm": "i32",
           "BM": "constexpr", "BN": "constexpr", "BK": "constexpr", "ACC_INT": "constexpr"}
    consts = {"stride_ak": 1, "BM": BM, "BN": BN, "BK": BK, "ACC_INT": acc == "i32"}
    unit = "stride_bk" if k_major_b else "stride_bn"
    sig[unit], consts[unit] = "constexpr", 1
    attrs = {n: [["tt.divisibility", 16]] for n, t in sig.items() if t != "constexpr"}
    with plugins.use(reg):
        k = tritium.compile(ASTSource(typed_matmul, sig, consts, attrs), target=GPUTarget("cuda", 90, 32),
                            options={"num_warps": 8, "num_stages": 3})
    return k.asm["ptx"], k.asm["cubin"]
