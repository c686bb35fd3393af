"""Refusals in Triton's words (Triton's test_frontend.py): Python's min/max of compile-time floats with NaN or
-0.0 (their result depends on the argument order), and `return` inside a loop."""
import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium.compiler.errors import CompilationError


@triton.jit
def _min_kernel(out, a: tl.constexpr, b: tl.constexpr):
    tl.store(out, min(a, b))


@triton.jit
def _max_kernel(out, a: tl.constexpr, b: tl.constexpr):
    tl.store(out, max(a, b))


@pytest.mark.parametrize("kernel, which", [(_min_kernel, "min"), (_max_kernel, "max")])
def test_constexpr_min_max_refuse_nan_and_negative_zero(kernel, which):
    out = np.zeros(1, np.float32)
    with pytest.raises(CompilationError, match=f"constexpr {which} does not support NaN values"):
        kernel[(1, )](out, 1.0, float("nan"))
    with pytest.raises(CompilationError, match=f"constexpr {which} does not support negative zero"):
        kernel[(1, )](out, 1.0, -0.0)
    kernel[(1, )](out, 2.0, 3.0)   # ordinary values still fold at compile time
    assert out[0] == (2.0 if which == "min" else 3.0)


@triton.jit
def _return_in_while(out):
    i = 0
    while i < 10:
        if i == 5:
            return
        i += 1
    tl.store(out, i)


def test_return_in_a_loop_is_refused_in_tritons_words():
    with pytest.raises(CompilationError) as info:
        _return_in_while[(1, )](np.zeros(1, np.int32))
    msg = str(info.value)
    assert "Cannot have `return` statements inside `while` or `for` statements in triton" in msg
    assert "return after the loop" in msg and "^" in msg
