"""The address arithmetic of examples/03's pipelined pointer matmul on sm_90a, checked in the PTX without a GPU.

- The copies of one operand into a stage write [one register + constants]: with every dimension a power of two
  the swizzled offset of a register group is this thread's offset plus a constant (tiles.tile_ptr). Before, each
  group's offset was its own loop-invariant register added to the stage's base every iteration (8 adds and 8
  registers at 128x128x64).
- The warp index comes from lane 0 (shfl.sync.idx), so ptxas knows it is warp-uniform and the wgmma descriptors
  that follow from it (a warpgroup's rows of A) stay in uniform registers (before: 8 R2UR per K step).
- The steady-state loop multiplies nothing: pointers advance by adds, offsets are loop-invariant.
"""
from __future__ import annotations

import importlib.util
import os
import re
import shutil

import pytest

import tritium
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")


#: what a launch on contiguous 16-byte aligned tensors with sizes divisible by 16 specializes: pointers, M, N, K and
#: the non-constant strides divisible by 16 (the unit strides are constexpr in COMPILE_CASES)
DIVISIBLE = {(i, ): [["tt.divisibility", 16]] for i in (0, 1, 2, 3, 4, 5, 6, 8, 10)}


def _ptx(BM, BN, BK, warps, stages, dt="fp16"):
    spec = importlib.util.spec_from_file_location("ex03_addr", os.path.join(ROOT, "examples",
                                                                           "03-matrix-multiplication.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    from tritium import plugins
    fn, sig, consts = mod.COMPILE_CASES[0]
    sig = {k: (f"*{dt}" if v.startswith("*") else v) for k, v in sig.items()}
    consts = {**consts, "BLOCK_M": BM, "BLOCK_N": BN, "BLOCK_K": BK}
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(reg):
        k = tritium.compile(ASTSource(fn, sig, consts, DIVISIBLE), target=GPUTarget("cuda", 90, 32),
                            options={"num_warps": warps, "num_stages": stages})
    return k.asm["ptx"]


def _loop(ptx: str) -> str:
    """The body of the loop that holds the wgmma instructions (from its label to its backward branch)."""
    for m in re.finditer(r"@%p\d+ bra\s+(\$L__BB\d+_\d+);", ptx):
        start = ptx.find(f"{m.group(1)}:")
        if 0 <= start < m.start() and "wgmma.mma_async" in ptx[start:m.start()]:
            return ptx[start:m.end()]
    raise AssertionError("no loop around the wgmma instructions")


def _defs(text: str) -> dict[str, str]:
    return {m.group(2): m.group(0) for m in re.finditer(r"^\s*([\w.]+)\s+(%r\d+),[^\n]*$", text, re.M)}


CONFIGS = [(128, 128, 64, 8, 3), (128, 256, 64, 8, 3), (64, 256, 32, 4, 4), (128, 64, 32, 4, 3),
           (256, 128, 64, 8, 3)]
#: registers the copies of a stage address from (before: one per copy, 6 to 12); 64x256x32 at 4 warps has B's
#: rows 4 apart in one copy, which flips a swizzle phase bit the lanes set too: that offset is an XOR, not a sum
BASES = {(64, 256, 32, 4, 4): 3}


@pytest.mark.parametrize("BM,BN,BK,warps,stages", CONFIGS)
def test_stage_copies_share_one_address_per_operand(isolated_tritium, BM, BN, BK, warps, stages):
    loop = _loop(_ptx(BM, BN, BK, warps, stages))
    defs = _defs(loop)
    bases = set()
    dsts = re.findall(r"cp\.async\.cg\.shared\.global \[(%r\d+)\]", loop)
    assert len(dsts) >= 4
    for d in dsts:
        m = re.match(rf"\s*add\.s32\s+{re.escape(d)}, (%r\d+), (\d+);", defs.get(d, ""))
        bases.add(m.group(1) if m else d)
    # A's copies and B's copies: one register each (the rest are immediate offsets ptxas folds into the address)
    assert len(bases) == BASES.get((BM, BN, BK, warps, stages), 2), (bases, loop)


@pytest.mark.parametrize("BM,BN,BK,warps,stages", CONFIGS[:2])
def test_warp_index_is_uniform_and_the_loop_multiplies_nothing(isolated_tritium, BM, BN, BK, warps, stages):
    ptx = _ptx(BM, BN, BK, warps, stages)
    tid = re.search(r"mov\.u32\s+(%r\d+), %tid\.x;", ptx).group(1)
    shr = re.search(rf"shr\.u32\s+(%r\d+), {re.escape(tid)}, 5;", ptx)
    assert shr and re.search(rf"shfl\.sync\.idx\.b32\s+%r\d+, {re.escape(shr.group(1))}, 0, 31, -1;", ptx)
    loop = _loop(ptx)
    assert not re.search(r"\b(mul|mad)\.", loop), loop


def test_uniform_warp_knob_off_keeps_the_plain_shift(isolated_tritium):
    from tritium_nvidia.knobs import nvidia
    with nvidia.scope():
        nvidia.uniform_warp = False
        ptx = _ptx(128, 128, 64, 8, 3)
    assert "shfl.sync" not in ptx and "wgmma.mma_async" in ptx
