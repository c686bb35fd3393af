"""``tl.inline_asm_elementwise`` with AMDGCN assembly: compiled through LLVM's AMDGPU backend into a code object
(no AMD GPU here: the instruction is found in the assembly, not run), packing bytes four to a VGPR as on NVIDIA."""
from __future__ import annotations

import re

import tritium
import tritium.language as tl
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource


@tritium.jit
def _shift(X, Z, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    z = tl.inline_asm_elementwise("v_lshlrev_b32 $0, 3, $1", "=v,v", [x], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(Z + tl.arange(0, BLOCK), z)


@tritium.jit
def _bytes(X, Z, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    z = tl.inline_asm_elementwise("v_and_b32 $0, 0x1f1f1f1f, $1", "=v,v", [x], dtype=tl.uint8, is_pure=True, pack=4)
    tl.store(Z + tl.arange(0, BLOCK), z)


def _compile(registry, fn, sig, block):
    from tritium import plugins
    with plugins.use(registry):
        c = tritium.compile(ASTSource(fn, sig, {"BLOCK": block}, {}), target=GPUTarget("hip", "gfx942", 64))
    assert c.asm["hsaco"]
    return c.asm["amdgcn"]


def test_one_instruction_per_element(amd_registry):
    # 1024 elements over 4 waves of 64: four per lane
    asm = _compile(amd_registry, _shift, {"X": "*i32", "Z": "*i32"}, 1024)
    assert len(re.findall(r"^\s*v_lshlrev_b32 v\d+, 3, v\d+", asm, re.M)) == 4


def test_four_bytes_per_register(amd_registry):
    # 4096 bytes: sixteen per lane, four registers of four
    asm = _compile(amd_registry, _bytes, {"X": "*u8", "Z": "*u8"}, 4096)
    assert len(re.findall(r"^\s*v_and_b32 v\d+, 0x1f1f1f1f, v\d+", asm, re.M)) == 4
