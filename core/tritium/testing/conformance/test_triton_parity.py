"""Semantics that Triton's own language tests (python/test/unit/language) rely on and that tritium once got
wrong: each test names the Triton test that exposed the gap."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl


@triton.jit
def _flip3d(x_ptr, z_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, DIM: tl.constexpr):
    off = (tl.arange(0, M)[:, None, None] * N * K + tl.arange(0, N)[None, :, None] * K
           + tl.arange(0, K)[None, None, :])
    tl.store(z_ptr + off, tl.flip(tl.load(x_ptr + off), DIM))


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -2, -3])
def test_flip_negative_dim(backend, dim):
    # test_standard.py::test_flip[-2-...]: a negative dim counts from the last, as in torch.flip
    x = np.arange(4 * 2 * 8, dtype=np.int32).reshape(4, 2, 8)
    z = np.zeros_like(x)
    _flip3d[(1, )](x, z, 4, 2, 8, dim)
    np.testing.assert_array_equal(z, np.flip(x, dim))


@triton.jit
def _dot_nd(x_ptr, y_ptr, c_ptr, z_ptr, RANK: tl.constexpr, M: tl.constexpr, USE_ACC: tl.constexpr):
    n: tl.constexpr = M * M << (RANK - 2)
    shape: tl.constexpr = [2] * (RANK - 2) + [M, M]
    x = tl.load(x_ptr + tl.arange(0, n)).reshape(shape)
    y = tl.trans(tl.load(y_ptr + tl.arange(0, n)).reshape(shape))
    if USE_ACC:
        z = tl.dot(x, y, tl.load(c_ptr + tl.arange(0, n)).reshape(shape), input_precision="ieee")
    else:
        z = tl.dot(x, y, input_precision="ieee")
    tl.store(z_ptr + tl.arange(0, n), z.reshape([n]))


@pytest.mark.parametrize("rank", [4, 5])
@pytest.mark.parametrize("use_acc", [False, True])
def test_dot_of_rank_above_3(backend, rank, use_acc):
    # test_core.py::test_dot_multidim: every leading dimension is a batch dimension
    backend.require("dot-fp32")
    m = 16
    shape = (2, ) * (rank - 2) + (m, m)
    rng = np.random.default_rng(rank)
    x = rng.integers(-4, 5, shape).astype(np.float32)
    y = rng.integers(-4, 5, shape).astype(np.float32)
    c = rng.integers(-4, 5, shape).astype(np.float32)
    z = np.zeros(shape, np.float32)
    _dot_nd[(1, )](x, y, c, z, rank, m, use_acc)
    np.testing.assert_array_equal(z, x @ np.swapaxes(y, -1, -2) + (c if use_acc else 0))


@triton.jit
def _shapes_equal_lists(out_ptr):
    s = tl.full([], 1, tl.int32)
    tl.static_assert(s.shape == [])
    r = tl.sum(tl.arange(0, 8))
    tl.static_assert(r.shape == [])
    b = tl.zeros([2, 4], tl.int32)
    tl.static_assert(b.shape == [2, 4])
    tl.static_assert(b.shape != [4, 2])
    tl.store(out_ptr, s + r)


def test_shape_equals_list(backend):
    # test_core.py::test_full / test_slice / test_expand_dims: `x.shape == []` is true of a scalar
    out = np.zeros(1, np.int32)
    _shapes_equal_lists[(1, )](out)
    assert out[0] == 29


@triton.jit
def _if_one_element_block(x_ptr):
    condition = tl.load(x_ptr + tl.arange(0, 1)) > 42
    if condition:
        tl.store(x_ptr, 42)


@pytest.mark.filterwarnings("ignore:If conditional called with multidimensional Tensor")
@pytest.mark.parametrize("value, want", [(41, 41), (43, 42)])
def test_if_on_a_one_element_block(backend, value, want):
    # test_core.py::test_unsplat: Triton takes a one-element block as its element in an `if`
    x = np.full(1, value, np.int32)
    _if_one_element_block[(1, )](x)
    assert x[0] == want


@triton.jit
def _split_to_scalars(x_ptr, z_ptr):
    z1, z2 = tl.split(tl.load(x_ptr + tl.arange(0, 2)))
    tl.static_assert(isinstance(z1, tl.tensor))
    tl.static_assert(not isinstance(z2, tl.constexpr))
    tl.static_assert(z1.shape == [])
    tl.store(z_ptr, z2)
    tl.store(z_ptr + 1, z1)


def test_isinstance_of_a_tensor_and_split_to_scalars(backend):
    # test_core.py::test_split_to_scalar: isinstance() of a run-time tensor is answered at compile time
    x = np.array([3, 5], np.int32)
    z = np.zeros(2, np.int32)
    _split_to_scalars[(1, )](x, z)
    np.testing.assert_array_equal(z, [5, 3])


@triton.jit
def _assigned_numbers(x_ptr, out_ptr, big_ptr, lo, hi, STEP: tl.constexpr):
    one = 100                                    # a name bound to a number holds an int32 scalar tensor
    x = tl.load(x_ptr + tl.arange(0, 16))        # int8
    tl.static_assert(one.dtype == tl.int32)
    y = x + one                                  # int8 + int32 tensor -> int32: no int8 wrap-around
    tl.static_assert(y.dtype == tl.int32)
    tl.store(out_ptr + tl.arange(0, 16), y)
    value = 1
    tl.store(out_ptr + 16 + tl.arange(0, 16), tl.full([16], value=value, dtype=value.dtype))
    big = 1e+50                                  # too large for fp32: an fp64 tensor
    tl.static_assert(big.dtype == tl.float64)
    acc = 0
    acc = acc.to(tl.int64)
    for i in range(lo, hi, STEP):
        acc += i
    tl.store(big_ptr, acc)
    half = 0.5
    h = tl.load(x_ptr + tl.arange(0, 16)).to(tl.float16) * half
    tl.static_assert(h.dtype == tl.float32)      # fp16 block * fp32 scalar tensor -> fp32 (a literal keeps fp16)
    k: tl.constexpr = 0.5
    tl.static_assert((tl.load(x_ptr + tl.arange(0, 16)).to(tl.float16) * k).dtype == tl.float16)


def test_numbers_bound_by_assignment_are_tensors(backend):
    # test_core.py::test_store_constant (value.dtype), test_for_iv (acc = 0; acc.to(tl.int64)), test_constexpr:
    # Triton's `x = <number>` makes a scalar tensor (int32/uint32/int64, fp32/fp64), which then promotes as a
    # tensor; only `x: tl.constexpr = ...` keeps a compile-time number
    x = np.full(16, 100, np.int8)
    out = np.zeros(32, np.int32)
    big = np.zeros(1, np.int64)
    lo = 2**35
    _assigned_numbers[(1, )](x, out, big, lo, lo + 20, 3)
    assert out[:16].tolist() == [200] * 16
    assert out[16:].tolist() == [1] * 16
    assert big[0] == sum(range(lo, lo + 20, 3))


@triton.jit
def _masked_by_false(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = False
    tl.store(out_ptr + offs, offs < n, mask=mask)


def test_store_masked_by_an_assigned_false(backend):
    # test_core.py::test_store_constant[mask]: `mask = False` is an int1 scalar tensor; nothing is stored
    out = np.zeros(16, np.int8)
    _masked_by_false[(1, )](out, 16, 16)
    assert not out.any()


class _Span(__import__("typing").NamedTuple):
    ptr: object
    n: object


@triton.jit
def _make_span(ptr, n):
    return _Span(n=n, ptr=ptr)


@triton.jit
def _scaled(x, s):
    return x * s


@triton.jit
def _namedtuples(src, dst, closure, BLOCK: tl.constexpr):
    a = _make_span(src.ptr, src.n)               # built in a device function, returned with its field names
    offs = tl.arange(0, BLOCK)
    if hasattr(a.ptr, "dtype") and not hasattr(a.n, "no_such_attribute"):
        v = tl.load(a.ptr + offs, mask=offs < a.n, other=0.0)
        tl.store(dst.ptr + offs, closure.fn(v, closure.factor), mask=offs < dst.n)


def test_namedtuples_in_kernels(backend):
    # test_tuple.py::test_namedtuple: a namedtuple class called in a kernel, returned from a device function,
    # and a @jit function carried in a namedtuple argument (a compile-time value); test_short_circuiting: hasattr
    # on a tensor asks the Python object
    import collections
    closure = collections.namedtuple("Closure", ["fn", "factor"])(_scaled, 3.0)
    x = np.arange(16, dtype=np.float32)
    y = np.zeros(16, np.float32)
    _namedtuples[(1, )](_Span(x, 10), _Span(y, 16), closure, 16)
    np.testing.assert_array_equal(y, np.where(np.arange(16) < 10, x * 3, 0))


@triton.jit
def _constexpr_in_tuple(out_ptr, t):
    tl.static_assert(t[1] == 4)
    tl.store(out_ptr, tl.load(t[0]) + t[1])


def test_constexpr_element_of_a_tuple_argument(backend):
    # test_tuple.py::test_serialize: tl.constexpr(4) inside a tuple argument is a compile-time value
    x = np.array([8], np.int32)
    out = np.zeros(1, np.int32)
    _constexpr_in_tuple[(1, )](out, (x, tl.constexpr(4)))
    assert out[0] == 12


@triton.jit
def _void_ternary(out_ptr, a_ptr, b_ptr):
    pid = tl.program_id(0)
    tl.store(out_ptr + pid, tl.load(a_ptr)) if pid % 2 == 0 else tl.store(out_ptr + pid, tl.load(b_ptr))


def test_conditional_expression_of_two_stores(backend):
    # test_core.py::test_if[if_exp_dynamic_void]: both branches are void, evaluated for their effect
    out = np.zeros(4, np.float32)
    _void_ternary[(4, )](out, np.ones(1, np.float32), np.full(1, 2.0, np.float32))
    assert out.tolist() == [1.0, 2.0, 1.0, 2.0]


@triton.jit
def _constexpr_types(out_ptr, LIT: tl.constexpr):
    lit: tl.constexpr = LIT
    tl.static_assert(lit.type == tl.core.constexpr_type(LIT))
    v = LIT                                       # plain assignment: a tensor of the literal's type
    tl.static_assert(v.type == tl.float32)
    tl.store(out_ptr, v)


def test_constexpr_type_attribute(backend):
    # test_core.py::test_constexpr_assignment: a constexpr's .type is constexpr_type(value)
    from tritium import knobs
    if knobs.runtime.interpret:
        pytest.skip("the interpreter holds compile-time values as plain Python values")
    out = np.zeros(1, np.float32)
    _constexpr_types[(1, )](out, 32.5)
    assert out[0] == 32.5
