"""``tl.inline_asm_elementwise`` is GPU assembly: the CPU backend and the interpreter refuse it with a message that
names it, says why and what to use, and points at the call (the NVIDIA backend runs it:
tests/nvidia_compile/test_inline_asm_ptx.py, tests/gpu/test_inline_asm.py)."""
from __future__ import annotations

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium import knobs


@tritium.jit
def _shifted(X, Z, BLOCK: tl.constexpr):
    x = tl.load(X + tl.arange(0, BLOCK))
    z = tl.inline_asm_elementwise("shl.b32 $0, $1, 3;", "=r,r", [x], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(Z + tl.arange(0, BLOCK), z)


@pytest.mark.parametrize("interpret", [False, True])
def test_refused_with_the_call_pointed_at(isolated_tritium, interpret):
    x = np.arange(64, dtype=np.int32)
    z = np.zeros_like(x)
    with knobs.runtime.scope():
        knobs.runtime.interpret = interpret
        with pytest.raises(Exception) as info:
            _shifted[(1,)](x, z, BLOCK=64)
    text = str(info.value)
    assert "inline_asm_elementwise runs GPU assembly" in text
    assert "tl operations" in text                       # what to do instead
    assert "z = tl.inline_asm_elementwise(" in text and "^" in text
    assert "test_inline_asm_refused.py" in text


def test_pack_must_divide_the_elements(isolated_tritium):
    @tritium.jit
    def _bad(X, BLOCK: tl.constexpr):
        x = tl.load(X + tl.arange(0, BLOCK))
        tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tl.int8, is_pure=False, pack=3)

    with pytest.raises(Exception, match="pack=3 must be a positive divisor of the 64 elements"):
        _bad[(1,)](np.zeros(64, np.int8), BLOCK=64)


@pytest.mark.parametrize("constraints, pack, dtype, said", [
    ("=r,r,r", 1, tl.int32, "name 1 output(s) and 2 input(s), but with pack=1 the results take 1 register(s) and "
                            "the arguments 1"),
    ("=r,=r,=r,=r,r", 4, tl.int8, "name 4 output(s) and 1 input(s), but with pack=4 the results take 1"),
])
def test_constraints_must_name_every_register(isolated_tritium, constraints, pack, dtype, said):
    """Checked before anything reaches LLVM, whose own message would name neither the kernel nor the line."""
    @tritium.jit
    def _k(X, C: tl.constexpr, P: tl.constexpr, D: tl.constexpr, BLOCK: tl.constexpr):
        x = tl.load(X + tl.arange(0, BLOCK))
        tl.inline_asm_elementwise("mov.b32 $0, $1;", C, [x], dtype=D, is_pure=False, pack=P)

    with pytest.raises(Exception) as info:
        _k[(1,)](np.zeros(64, np.int8), C=constraints, P=pack, D=dtype, BLOCK=64)
    assert said in str(info.value) and "one constraint per register" in str(info.value)
    assert "tl.inline_asm_elementwise(" in str(info.value)
