"""fp16 x fp16 dots with an fp16 result accumulate in fp16 on the tensor cores, as Triton does (its test_dot checks
``.f16.f16.f16`` in the PTX): ``wgmma ... .f16.f16.f16`` on sm_90 with N/4 f16x2 accumulator registers per
instruction, ``mma.sync ... .f16.f16.f16.f16`` with two on sm_80 (and on sm_90 for tiles wgmma does not fit).
fp32 results of fp16 dots and bf16 dots (which have no fp16 accumulator) keep ``.f32``. ptxas assembles every
kernel, which checks the instruction forms and their operand counts. Values: tests/gpu/test_f16_acc_dots.py."""
from __future__ import annotations

import os
import re
import shutil
import sys

import pytest

import tritium
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "gpu"))
from f16_acc_dots import loop_chain, loop_dot, tile_dot  # noqa: E402
from typed_dots import typed_matmul  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")

INST = re.compile(r"((?:wgmma\.mma_async|mma)\.sync\.aligned\.[\w.]+) \{([^}]*)\}")
WGMMA_F16 = "wgmma.mma_async.sync.aligned.m64n{}k16.f16.f16.f16"
MMA_F16 = "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16"
# Triton's test_dot check for fp16 results (its "[mma|wgmma.mma_async]" is a character class: any character)
TRITON_F16 = re.compile(r"[mma|wgmma.mma_async].sync.aligned.m\d+n\d+k16(?:.row.col)?.f16.f16.f16")


def _compile(fn, sig: dict, consts: dict, capability: int, num_warps: int, num_stages: int = 3):
    from tritium import plugins
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    sig = dict(sig, **{k: "constexpr" for k in consts})
    attrs = {n: [["tt.divisibility", 16]] for n, t in sig.items() if t != "constexpr"}
    with plugins.use(reg):
        k = tritium.compile(ASTSource(fn, sig, consts, attrs), target=GPUTarget("cuda", capability, 32),
                            options={"num_warps": num_warps, "num_stages": num_stages})
    assert k.asm["cubin"][:4] == b"\x7fELF"
    return k.asm["ptx"]


def _forms(ptx: str) -> dict[str, set[int]]:
    """Each tensor-core instruction form in ``ptx`` -> the numbers of registers its first operand (D) has."""
    out: dict[str, set[int]] = {}
    for name, d in INST.findall(ptx):
        out.setdefault(name, set()).add(len(d.split(",")))
    return out


def _expect(capability: int, n_inst: int | None) -> dict[str, set[int]]:
    """The f16-accumulator form: wgmma m64n{n_inst} (n_inst / 4 f16x2 registers) or mma.sync (2)."""
    if capability >= 90 and n_inst:
        return {WGMMA_F16.format(n_inst): {n_inst // 4}}
    return {MMA_F16: {2}}


def _tile(BM, BN, BK, nw, add, capability, out_f16=True, elem="fp16"):
    sig = {"X": f"*{elem}", "Y": f"*{elem}", "Z": "*fp16" if out_f16 else "*fp32"}
    return _compile(tile_dot, sig, {"BM": BM, "BN": BN, "BK": BK, "ADD": add, "OUT_F16": out_f16}, capability, nw)


# (BM, BN, BK, warps, N per wgmma instruction on sm_90 or None where the tile keeps mma.sync there)
TILES = [(64, 64, 64, 4, 64), (128, 128, 64, 8, 128), (64, 128, 32, 4, 128), (128, 64, 64, 8, 64),
         (32, 32, 32, 4, None), (16, 16, 16, 4, None), (128, 128, 64, 2, None)]


@pytest.mark.parametrize("capability", [90, 80])
@pytest.mark.parametrize("add", [False, True], ids=["none", "add-matrix"])
@pytest.mark.parametrize("BM,BN,BK,nw,n_inst", TILES, ids=[f"{t[0]}x{t[1]}x{t[2]}w{t[3]}" for t in TILES])
def test_tile_dot_accumulates_in_f16(isolated_tritium, BM, BN, BK, nw, n_inst, add, capability):
    ptx = _tile(BM, BN, BK, nw, add, capability)
    assert _forms(ptx) == _expect(capability, n_inst)
    assert TRITON_F16.search(ptx)


@pytest.mark.parametrize("capability", [90, 80])
@pytest.mark.parametrize("BM,BN,BK,nw,n_inst", [(128, 128, 64, 8, 128), (64, 64, 64, 4, 64), (64, 128, 32, 4, 128)])
def test_pipelined_loop_carries_an_f16_accumulator(isolated_tritium, BM, BN, BK, nw, n_inst, capability):
    sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
           "stride_am": "i32", "stride_bk": "i32", "stride_cm": "i32"}
    ptx = _compile(loop_dot, sig, {"BM": BM, "BN": BN, "BK": BK}, capability, nw)
    assert _forms(ptx) == _expect(capability, n_inst)
    assert "cp.async" in ptx
    if capability >= 90:
        # the dot waits for itself in its iteration: no wait across the back edge with its registers in flight
        assert "wgmma.wait_group.sync.aligned 1;" not in ptx


@pytest.mark.parametrize("capability", [90, 80])
def test_loop_of_two_f16_dots(isolated_tritium, capability):
    """S = Q K^T and O += S V, both fp16 results, in one loop: the second reads S from registers (wgmma's register
    A on sm_90). Such a loop's last dot is not left running into the next iteration (its packed accumulator is
    waited for in its own iteration); the loop planned to carry it failed to compile before."""
    sig = {"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16", "o_ptr": "*fp16", "L": "i32"}
    ptx = _compile(loop_chain, sig, {"D": 64, "BM": 64, "BN": 64}, capability, 4)
    assert _forms(ptx) == _expect(capability, 64)
    if capability >= 90:
        # P @ V reads its A (S, packed from S's halves) from registers: 4 registers, then B's descriptor
        assert re.search(r"wgmma\.mma_async\.sync\.aligned\.m64n64k16\.f16\.f16\.f16 \{[^}]*\}, "
                         r"\{%r\d+, %r\d+, %r\d+, %r\d+\}, %rd\d+", ptx)


@pytest.mark.parametrize("capability", [90, 80])
@pytest.mark.parametrize("BM,BN,BK,nw,n_inst", [(64, 64, 64, 4, 64), (128, 128, 64, 8, 128), (32, 32, 32, 4, None)])
def test_f32_results_keep_f32_accumulators(isolated_tritium, BM, BN, BK, nw, n_inst, capability):
    ptx = _tile(BM, BN, BK, nw, True, capability, out_f16=False)
    if capability >= 90 and n_inst:
        assert _forms(ptx) == {f"wgmma.mma_async.sync.aligned.m64n{n_inst}k16.f32.f16.f16": {n_inst // 2}}
    else:
        assert _forms(ptx) == {"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32": {4}}


@pytest.mark.parametrize("capability", [90, 80])
@pytest.mark.parametrize("elem,types", [("fp16", "f16.f16"), ("bf16", "bf16.bf16")])
def test_f32_accumulating_loops_unchanged(isolated_tritium, elem, types, capability):
    sig = {"a_ptr": f"*{elem}", "b_ptr": f"*{elem}", "c_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32",
           "stride_am": "i32", "stride_ak": "i32", "stride_bk": "i32", "stride_bn": "i32", "stride_cm": "i32"}
    consts = {"stride_ak": 1, "stride_bn": 1, "BM": 128, "BN": 128, "BK": 64, "ACC_INT": False}
    sig = {k: v for k, v in sig.items() if k not in consts}
    ptx = _compile(typed_matmul, sig, consts, capability, 8)
    if capability >= 90:
        assert _forms(ptx) == {f"wgmma.mma_async.sync.aligned.m64n128k16.f32.{types}": {64}}
    else:
        assert _forms(ptx) == {f"mma.sync.aligned.m16n8k16.row.col.f32.{types}.f32": {4}}
