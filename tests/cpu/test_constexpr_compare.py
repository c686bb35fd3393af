"""Compile-time comparisons of a Python list or tuple with a list written in the kernel (a ``tuple_value``).

Triton's own test_tensor_descriptor.py checks ``assert desc.block_shape == [M_BLOCK, N_BLOCK]`` inside kernels.
``desc.block_shape`` is a Python list and the literal a ``tuple_value``: the code generator called the list's
``__eq__`` directly, got NotImplemented (truthy), and every such assert passed, right or wrong. Python's own
dispatch asks the other operand next, as the interpreter does.
"""
import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium.compiler.errors import CompilationError
from tritium.runtime.allocation import get_allocator, set_allocator


def _alloc(size, align, stream):
    return np.empty(size, dtype=np.int8)


@tritium.jit
def _desc_shape(a_ptr, M, N, M_BLOCK: tl.constexpr, N_BLOCK: tl.constexpr, WANT_N: tl.constexpr,
                NE: tl.constexpr):
    desc = tl.make_tensor_descriptor(a_ptr, shape=[M, N], strides=[N, 1], block_shape=[M_BLOCK, N_BLOCK])
    if NE:
        assert desc.block_shape != [M_BLOCK, WANT_N]
    else:
        assert desc.block_shape == [M_BLOCK, WANT_N]
    desc.store([0, 0], desc.load([0, 0]) + 1)


@pytest.fixture(autouse=True)
def _allocator():
    before = get_allocator()
    set_allocator(_alloc)
    yield
    set_allocator(before)


@pytest.mark.parametrize("ne", [False, True])
def test_true_comparison_of_a_list_with_a_kernel_list_compiles(ne):
    a = np.zeros((8, 8), dtype=np.float32)
    _desc_shape[(1,)](a, 8, 8, 8, 8, 9 if ne else 8, ne)
    assert a[0, 0] == 1.0


@pytest.mark.parametrize("ne", [False, True])
def test_false_comparison_of_a_list_with_a_kernel_list_fails_the_assert(ne):
    # an assert is a device assert, as in Triton: checked with debug only, and then when the kernel runs
    a = np.zeros((8, 8), dtype=np.float32)
    with pytest.raises(AssertionError, match="Assertion `desc.block_shape") as info:
        _desc_shape[(1,)](a, 8, 8, 8, 8, 8 if ne else 9, ne, debug=True)
    assert not isinstance(info.value, CompilationError)
    a[:] = 0
    _desc_shape[(1,)](a, 8, 8, 8, 8, 8 if ne else 9, ne)
    assert a[0, 0] == 1.0


@tritium.jit
def _tuple_order(X, T: tl.constexpr, A: tl.constexpr, B: tl.constexpr):
    tl.static_assert(T == [A, B])
    tl.store(X, 1)


def test_constexpr_tuple_equals_a_kernel_list():
    x = np.zeros(1, dtype=np.int32)
    _tuple_order[(1,)](x, (2, 3), 2, 3)
    assert x[0] == 1
    with pytest.raises(CompilationError):
        _tuple_order[(1,)](x, (2, 3), 2, 4)
