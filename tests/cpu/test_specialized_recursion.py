"""A @jit function may call itself with another specialization, as in Triton (test_frontend.py::
test_specialized_recursion: a block halved at each level until one element is left); a call with the same
specialization again would never end and is refused, naming the chain of calls. Compiled and interpreted."""
import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium.compiler.errors import CompilationError


@triton.jit
def _tree_sum(x):
    if x.shape[0] == 1:
        return x
    else:
        x0, x1 = x.reshape((x.shape[0] // 2, 2)).split()
        return _tree_sum(x0) + _tree_sum(x1)


@triton.jit
def _sum_kernel(X, out, N: tl.constexpr):
    total = _tree_sum(tl.load(X + tl.arange(0, N)))
    tl.store(out + tl.arange(0, 1), total)


def _launch(kernel, interpret, *args, **kwargs):
    from tritium import knobs
    with knobs.runtime.scope():
        knobs.runtime.interpret = False
        kernel.interpret = interpret
        try:
            return kernel[(1, )](*args, **kwargs)
        finally:
            kernel.interpret = False


@pytest.mark.parametrize("interpret", [False, True])
@pytest.mark.parametrize("n", [1, 2, 16])
def test_recursion_with_a_shrinking_shape(n, interpret):
    x = np.arange(1, n + 1, dtype=np.int32)
    out = np.zeros(1, np.int32)
    _launch(_sum_kernel, interpret, x, out, N=n)
    assert out[0] == x.sum()


@triton.jit
def _forever(x):
    return _forever(x + 1)


@triton.jit
def _forever_kernel(out):
    tl.store(out, _forever(tl.program_id(0)))


@pytest.mark.parametrize("interpret", [False, True])
def test_recursion_with_the_same_specialization_is_refused(interpret):
    with pytest.raises(CompilationError, match=r"recursive call of @jit function `_forever` \(_forever_kernel -> "
                                               r"_forever -> _forever\) with the same"):
        _launch(_forever_kernel, interpret, np.zeros(1, np.int32))
