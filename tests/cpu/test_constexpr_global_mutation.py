"""A ``tl.constexpr`` global or closure variable whose ``.value`` is assigned in place after a launch: the next
launch must not run the kernel built from the old value. tritium watched only which object a name held, and
closure variables not at all, so both kept storing the old value (Triton raises instead, test_cache.py::
test_cache_closure; tritium compiles again, as it does when a global is rebound)."""
import numpy as np

import tritium as triton
import tritium.language as tl

WIDTH = tl.constexpr(5)


@triton.jit
def _store_width(X):
    tl.store(X, WIDTH)


def _make(cst):
    @triton.jit
    def store_closure(X):
        tl.store(X, cst)
    return store_closure


def test_in_place_change_of_a_constexpr_global():
    x = np.zeros(1, np.int32)
    try:
        _store_width[(1, )](x)
        assert x[0] == 5
        WIDTH.value = 6
        _store_width[(1, )](x)
        assert x[0] == 6
    finally:
        WIDTH.value = 5


def test_in_place_change_of_a_constexpr_closure_variable():
    cst = tl.constexpr(42)
    kernel = _make(cst)
    x = np.zeros(1, np.int32)
    kernel[(1, )](x)
    assert x[0] == 42
    cst.value = 43
    kernel[(1, )](x)
    assert x[0] == 43
    kernel[(1, )](x)
    assert x[0] == 43
    # closures holding different values are different kernels
    assert _make(tl.constexpr(7)).cache_key != _make(tl.constexpr(9)).cache_key
