"""List comprehensions in kernels, compiled (CPU backend) and interpreted: unrolled while compiling into a tuple,
over tuples, ``tl.static_range`` and ``range`` of constexpr bounds; run-time items or conditions are refused."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl


@triton.jit
def _plus_one(values):
    return tl.tuple([v + 1 for v in values])


@triton.jit
def _over_tuple(ptrs, values):
    values = _plus_one(values)
    for i in tl.static_range(len(values)):
        tl.store(ptrs[i], values[i])


@pytest.mark.parametrize("interpret", [False, True])
@pytest.mark.parametrize("size", [0, 1, 3])
def test_comprehension_over_a_tuple_argument(kit, interpret, size):
    outs = [np.zeros(1, np.float32) for _ in range(size)]
    vals = tuple(float(i + 1) for i in range(size))
    from tritium import knobs
    with knobs.runtime.scope():
        knobs.runtime.interpret = False
        _over_tuple.interpret = interpret
        try:
            _over_tuple[(1, )](tuple(outs), vals)
        finally:
            _over_tuple.interpret = False
    assert [o[0] for o in outs] == [v + 1 for v in vals]


@triton.jit
def _shapes(x_ptr, o_ptr, N: tl.constexpr):
    i = 100
    # tensors as items, nested generators, a compile-time filter; `i` is the comprehension's own
    rows = [tl.load(x_ptr + i * 4 + tl.arange(0, 4)) * (j + 1) for i in range(N) for j in tl.static_range(2)
            if (i + j) % 2 == 0]
    acc = tl.zeros([4], tl.float32)
    for r in rows:
        acc += r
    tl.store(o_ptr + tl.arange(0, 4), acc)
    squares = [k * k for k in tl.static_range(1, 4)]
    tl.static_assert(len(squares) == 3)
    tl.store(o_ptr + 4, squares[2] + i)        # 9 + 100: the comprehension did not rebind `i`
    pairs = [(a, b) for a, b in ((1, 2), (3, 4))]
    tl.store(o_ptr + 5, pairs[1][0] * 10 + pairs[1][1])


def test_tensor_items_nested_and_filtered(kit):
    x = np.arange(16, dtype=np.float32)
    out = np.zeros(6, np.float32)
    got = kit.assert_same_as_compiled(_shapes, (1, ), x, out, N=3)[1]
    rows = x.reshape(4, 4)
    expected = rows[0] * 1 + rows[1] * 2 + rows[2] * 1      # (i, j) with i + j even: (0,0) (1,1) (2,0)
    np.testing.assert_array_equal(got[:4], expected)
    assert got[4] == 109 and got[5] == 34


@triton.jit
def _runtime_range(o_ptr, n):
    vals = [i for i in range(n)]
    tl.store(o_ptr, vals[0])


@triton.jit
def _tensor_condition(x_ptr):
    x = tl.load(x_ptr)
    vals = [k for k in tl.static_range(3) if x > k]
    tl.store(x_ptr, vals[0])


@pytest.mark.parametrize("interpret", [False, True])
@pytest.mark.parametrize("kernel,args,fragment,phrase", [
    (_runtime_range, (np.zeros(1, np.int32), 3), "range(n)", "compile-time items"),
    (_tensor_condition, (np.zeros(1, np.float32), ), "x > k", "compile-time condition"),
])
def test_run_time_items_are_refused(interpret, kernel, args, fragment, phrase):
    from tritium import knobs
    with knobs.runtime.scope():
        knobs.runtime.interpret = False
        kernel.interpret = interpret
        try:
            with pytest.raises(triton.CompilationError) as info:
                kernel[(1, )](*args)
        finally:
            kernel.interpret = False
    text = str(info.value)
    assert kernel.__name__ in text and fragment in text and "^" in text and phrase in text, text
