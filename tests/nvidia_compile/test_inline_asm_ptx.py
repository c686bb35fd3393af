"""``tl.inline_asm_elementwise`` on NVIDIA (sm_90a PTX through ptxas, no GPU): the user's PTX once per group of
``pack`` elements a thread holds, sub-32-bit elements of a group packed into one 32-bit register, several results,
and an impure statement kept although its result is unused. tests/gpu/test_inline_asm.py checks the values on a
GPU; the CPU backend and the interpreter refuse it (tests/cpu/test_inline_asm_refused.py)."""
from __future__ import annotations

import os
import re
import shutil
import sys

import pytest

import tritium
import tritium.language as tl
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "gpu"))
from found_kernels import funnel_shift, bytes_times_8, widen_and_max, copy_shifted  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")










def _compile(fn, sig, consts, warps=4):
    from tritium import plugins
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(reg):
        k = tritium.compile(ASTSource(fn, sig, consts, {}), target=GPUTarget("cuda", 90, 32),
                            options={"num_warps": warps})
    assert k.asm["cubin"]
    return k.asm["ptx"]


def test_one_statement_per_element(isolated_tritium):
    # 512 elements over 128 threads: four per thread, each its own statement
    ptx = _compile(funnel_shift, {"X": "*u32", "Y": "*u32", "Z": "*u32"}, {"SHIFT": 17, "BLOCK": 512})
    assert len(re.findall(r"shf\.l\.wrap\.b32", ptx)) == 4


def test_four_bytes_share_a_register(isolated_tritium):
    # a thread's 16 bytes are four groups of four, one 32-bit register each
    ptx = _compile(bytes_times_8, {"X": "*u8", "Y": "*u8"}, {"BLOCK": 2048})
    assert len(re.findall(r"and\.b32\s+%r\d+, %r\d+, 0x1F1F1F1F", ptx)) == 4


def test_several_results_and_mixed_widths(isolated_tritium):
    ptx = _compile(widen_and_max, {"A": "*u8", "B": "*fp32", "C": "*i32", "D": "*fp32"}, {"BLOCK": 512})
    # one group per thread: the four bytes of A in one register, B's four floats in four
    assert len(re.findall(r"mov\.b32 \{t0, t1, t2, t3\}", ptx)) == 1
    assert len(re.findall(r"max\.f32", ptx)) == 4


def test_impure_statement_without_used_result_is_kept(isolated_tritium):
    ptx = _compile(copy_shifted, {"X": "*u8", "Y": "*u8"}, {"BLOCK": 512})
    assert len(re.findall(r"st\.global\.b8", ptx)) == 4


@tritium.jit
def _lane_id(O):
    lane = tl.inline_asm_elementwise("mov.u32 $0, %laneid;", "=r", [], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(O + tl.arange(0, 128), tl.full([128], lane, tl.int32))


def test_no_arguments_is_one_statement_on_scalars(isolated_tritium):
    ptx = _compile(_lane_id, {"O": "*i32"}, {})
    assert len(re.findall(r"mov\.u32 %r\d+, %laneid;", ptx)) == 1
