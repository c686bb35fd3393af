"""A @jit function that returns a value inside a run-time ``if`` and falls off its end on the other path: Triton
3.6 compiles it, the value on the fall-off path being poison (Triton's test_core.py::test_poison_return); tritium
refused it ("the branches of this `if` return different numbers of values"). The fall-off path now returns zeros
of the same types, a value poison may take, so the path that returns is exact and the kernel compiles. Non-number
compile-time values returned (a dtype) stay compile-time, the same on both paths."""
import numpy as np

import tritium as triton
import tritium.language as tl


@triton.jit
def _double_if_positive(x):
    if x > 0:
        return x * 2


@triton.jit
def _constant_if(flag):
    if flag:
        return 5


@triton.jit
def _row_or_nothing(X, i, B: tl.constexpr):
    if i < 2:
        return tl.load(X + i * B + tl.arange(0, B)), X + i * B


@triton.jit
def _kernel(X, Out, B: tl.constexpr):
    i = tl.program_id(0)
    v = tl.load(X + i)
    tl.store(Out + i, _double_if_positive(v))
    tl.store(Out + 4 + i, _constant_if(v > 0))


@triton.jit
def _rows(X, Out, B: tl.constexpr):
    i = tl.program_id(0)
    row, ptr = _row_or_nothing(X, i, B)
    if i < 2:
        tl.store(Out + i * B + tl.arange(0, B), row + 1)
        tl.store(Out + 4 * B + i, tl.load(ptr))


def test_value_returned_on_one_path_only():
    x = np.array([3, -1, 4, 0], np.int32)
    out = np.full(8, -7, np.int32)
    _kernel[(4, )](x, out, 4)
    assert out[[0, 2]].tolist() == [6, 8]   # the path that returns is exact
    # a returned number is a run-time value, as in Triton 3.6 (whose fall-off path is poison): exact where returned
    assert out[[4, 6]].tolist() == [5, 5]


def test_tuple_with_pointer_returned_on_one_path_only():
    x = np.arange(16, dtype=np.float32)
    out = np.zeros(20, np.float32)
    _rows[(4, )](x, out, 4)
    np.testing.assert_array_equal(out[:8], x[:8] + 1)
    np.testing.assert_array_equal(out[16:18], [0.0, 4.0])
