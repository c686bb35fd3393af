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
    from tritium import plugins
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    BM, BN, BK = 128, 128, 128 // (4 if elem == "fp32" else 2 if kstep == 16 else 1)
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
    ptx = k.asm["ptx"]
    insts = set(re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n\d+k\d+\.[\w.]+", ptx))
    assert insts == {f"wgmma.mma_async.sync.aligned.m64n128k{kstep}.{ptx_types}"}, insts
    assert "mma.sync" not in ptx and "cp.async" in ptx
    assert k.asm["cubin"][:4] == b"\x7fELF"
