"""A kernel's ``assert`` on a compile-time condition, on the GPU side (tests/cpu/test_assert_like_triton.py says
why): as Triton, left out without debug; with debug a false one fails when the kernel runs."""
import numpy as np
import pytest

import tritium as triton
import tritium.language as tl


@triton.jit
def _constexpr_assert(X, BLOCK: tl.constexpr):
    assert BLOCK % 3 == 0, "BLOCK must be a multiple of 3"
    tl.store(X + tl.arange(0, BLOCK), tl.arange(0, BLOCK) + 1)


def test_false_constexpr_assert_is_left_out_without_debug(dev):
    x = dev.put(np.zeros(32, np.int32))
    _constexpr_assert[(1, )](x, BLOCK=32)
    np.testing.assert_array_equal(dev.get(x), np.arange(1, 33))


def test_false_constexpr_assert_fails_with_debug(dev):
    if dev.name != "emu":
        pytest.skip("a failed device assert ends the GPU context; the emulator shows the same code path")
    x = dev.put(np.zeros(32, np.int32))
    with pytest.raises(AssertionError, match="BLOCK must be a multiple of 3"):
        _constexpr_assert[(1, )](x, BLOCK=32, debug=True)
        dev.sync()
