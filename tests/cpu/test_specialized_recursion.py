"""A @jit function may call itself with another specialization, as in Triton (test_frontend.py::
test_specialized_recursion: a block halved at each level until one element is left); a call with the same
specialization again would never end and is refused, naming the chain of calls."""
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


@pytest.mark.parametrize("n", [1, 2, 16])
def test_recursion_with_a_shrinking_shape(n):
    x = np.arange(1, n + 1, dtype=np.int32)
    out = np.zeros(1, np.int32)
    _sum_kernel[(1, )](x, out, N=n)
    assert out[0] == x.sum()


@triton.jit
def _forever(x):
    return _forever(x + 1)


@triton.jit
def _forever_kernel(out):
    tl.store(out, _forever(tl.program_id(0)))


def test_recursion_with_the_same_specialization_is_refused():
    with pytest.raises(CompilationError, match=r"recursive call of @jit function `_forever` \(_forever_kernel -> "
                                               r"_forever -> _forever\)"):
        _forever_kernel[(1, )](np.zeros(1, np.int32))
