"""Tuple and host tensor-descriptor parameters compile for NVIDIA GPUs with no backend support of their own:
the frontend flattens them into scalar and pointer arguments and rebuilds the values in the kernel."""
from __future__ import annotations

import os
import shutil

import pytest

import tritium
import tritium.language as tl
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")


@tritium.jit
def _sum_pair(ptrs, offs):
    return tl.load(ptrs[0] + offs) + tl.load(ptrs[1] + offs)


@tritium.jit
def tuple_kernel(ins, out, params, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    acc = _sum_pair(ins, offs)
    for p in ins:
        acc += tl.load(p + offs)
    tl.store(out + offs, acc * params[0] + params[1][0] + params[1][1])


@tritium.jit
def desc_kernel(src, dst, BM: tl.constexpr, BN: tl.constexpr):
    pm, pn = tl.program_id(0) * BM, tl.program_id(1) * BN
    v = src.load([pm, pn])
    dst.store([pm, pn], v + src.shape[0].to(v.dtype))


CASES = [
    ("tuple", tuple_kernel, {"ins": ("*fp32", "*fp32"), "out": "*fp32", "params": ("fp32", ("constexpr", "i32")),
                             "BLOCK": "constexpr"},
     {(2, 1, 0): 1, "BLOCK": 256}, {(0, 0): [["tt.divisibility", 16]], (0, 1): [["tt.divisibility", 16]]}),
    ("tensordesc", desc_kernel, {"src": "tensordesc<fp16[64, 64]>", "dst": "tensordesc<fp16[64, 64]>",
                                 "BM": "constexpr", "BN": "constexpr"}, {"BM": 64, "BN": 64}, {}),
]


@pytest.fixture(scope="module")
def nvidia_registry(isolated_tritium):
    from tritium import plugins
    return plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})


@pytest.mark.parametrize("capability", [80, 90])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_structured_parameters_compile_to_cubin(nvidia_registry, case, capability):
    from tritium import plugins
    name, fn, sig, consts, attrs = case
    with plugins.use(nvidia_registry):
        k = tritium.compile(ASTSource(fn, sig, consts, attrs), target=GPUTarget("cuda", capability, 32))
    assert isinstance(k.asm["cubin"], bytes) and k.asm["cubin"][:4] == b"\x7fELF"
    ptx = k.asm["ptx"]
    entry = ptx[ptx.index(".entry"):ptx.index(")")]
    # flattened parameters: two pointers + out + one float + one int; or two (base, 2 shapes, 1 stride), and on
    # sm_90 each descriptor's tensor map (test_tma_params_ptx.py)
    want = 5 if name == "tuple" else 8
    maps = len(k.metadata_dict.get("tensor_map_params", ()))
    assert maps == (2 if name == "tensordesc" and capability == 90 else 0)
    assert entry.count(".param") == want + maps + entry.count("_scratch"), entry
