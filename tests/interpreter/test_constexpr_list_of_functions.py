"""A list of @jit functions passed as a tl.constexpr to a device function (Triton's
test_frontend.py::test_list_of_functions): the call's specialization key hashes the list as a ``tl.tuple``, whose
hash recursed without end (its ``tuple`` was ``tl.tuple`` itself) until memory ran out. Compiled and
interpreted."""
import numpy as np
import pytest

import tritium as triton
import tritium.language as tl


def test_tl_tuple_hash_is_by_value():
    assert hash(tl.tuple([1, 2])) == hash(tl.tuple([1, 2]))
    assert {tl.tuple([1, 2]): "a"}[tl.tuple([1, 2])] == "a"


@triton.jit
def _plus_one(x):
    return x + 1


@triton.jit
def _times_two(x):
    return x * 2


@triton.jit
def _apply_all(x, fns: tl.constexpr):
    for i in tl.static_range(len(fns)):
        x = fns[i](x)
    return x


@triton.jit
def _kernel(out):
    offs = tl.arange(0, 4)
    tl.store(out + offs, _apply_all(offs, [_plus_one, _times_two]))


@pytest.mark.parametrize("interpret", [False, True])
def test_list_of_functions_as_constexpr(interpret):
    from tritium import knobs
    out = np.zeros(4, np.int32)
    with knobs.runtime.scope():
        knobs.runtime.interpret = False
        _kernel.interpret = interpret
        try:
            _kernel[(1, )](out)
        finally:
            _kernel.interpret = False
    assert out.tolist() == [2, 4, 6, 8]
