"""Errors that Triton's own language tests match by their key phrase (``pytest.raises(match=...)`` or a regex over
``str(err.__cause__)``): tritium keeps its own style (kernel, line, what to do) and carries Triton's phrase inside
it. Each test names the Triton test that checks the phrase."""
from __future__ import annotations

import re

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl


def _error(kernel, *args) -> triton.CompilationError:
    with pytest.raises(triton.CompilationError) as info:
        kernel[(1, )](*args)
    return info.value


def _text(err: BaseException) -> str:
    """The error with everything it was raised from (Triton's tests read ``__cause__``)."""
    parts = []
    while err is not None:
        parts.append(str(err))
        err = err.__cause__
    return "\n".join(parts)


@triton.jit
def _mixed_div(x_ptr, y_ptr, DIV: tl.constexpr):
    a = tl.load(x_ptr + tl.arange(0, 16))
    b = tl.load(y_ptr + tl.arange(0, 16))
    if DIV:
        c = a / b
    else:
        c = a % b
    tl.store(x_ptr + tl.arange(0, 16), c)


@pytest.mark.parametrize("div", [True, False])
@pytest.mark.parametrize("tx, ty", [(np.int8, np.uint8), (np.uint32, np.int16), (np.int64, np.uint64)])
def test_mixed_signedness_division(backend, div, tx, ty):
    # test_core.py::test_bin_op[...-int8-uint8-/]: match='Cannot use .* because they have different signedness'
    err = _error(_mixed_div, np.ones(16, tx), np.ones(16, ty), div)
    text = _text(err)
    assert re.search("Cannot use .* because they have different signedness", text), text
    assert "_mixed_div" in text


@triton.jit
def _pid_axis(x_ptr, AXIS: tl.constexpr):
    tl.store(x_ptr, tl.program_id(AXIS))


def test_program_id_axis(backend):
    # test_core.py::test_invalid_pid_axis: "program_id axis must be 0, 1, or 2 but got 20" in str(err.__cause__)
    err = _error(_pid_axis, np.zeros(1, np.int32), 20)
    assert re.search(r"program_id axis must be 0, 1, or 2 but got 20", str(err.__cause__)), _text(err)


@triton.jit
def _expand(x_ptr, AXES: tl.constexpr, SCALAR: tl.constexpr):
    v = tl.arange(0, 8)
    if SCALAR:
        v = tl.sum(v)
    t = tl.expand_dims(v, AXES)
    tl.store(x_ptr + tl.arange(0, 1), tl.sum(tl.reshape(t, [t.numel])))


@pytest.mark.parametrize("axes, scalar, phrase", [
    (-3, False, "invalid axis -3"), (2, False, "invalid axis 2"), (1, True, "invalid axis 1"),
    ((0, 0), False, r"duplicate axes, normalized axes = \[0, 0\]"),
    ((0, -3), False, r"duplicate axes, normalized axes = \[0, 0\]")])
def test_expand_dims_bad_axes(backend, axes, scalar, phrase):
    # test_core.py::test_expand_dims_error_cases
    err = _error(_expand, np.zeros(1, np.int32), axes, scalar)
    assert re.search(phrase, str(err.__cause__)), _text(err)


def test_expand_dims_good_axes(backend):
    out = np.zeros(1, np.int32)
    _expand[(1, )](out, (0, -1), False)
    assert out[0] == sum(range(8))


@triton.jit
def _narrow_descriptor(ptr, STORE: tl.constexpr):
    if STORE:
        desc = tl.make_tensor_descriptor(ptr, [128, 128], [128, 1], [8, 4])
        desc.store([0, 0], tl.zeros([8, 4], dtype=tl.int16))
    else:
        desc = tl.make_tensor_descriptor(ptr, [128, 128], [128, 1], [1, 2])
        desc.load([0, 0])


@pytest.mark.parametrize("store, dtype", [(False, np.int32), (True, np.int16)])
def test_descriptor_block_narrower_than_16_bytes(backend, store, dtype):
    # test_core.py::test_tma_load_block_shape_err / test_tma_store_block_shape_err
    err = _error(_narrow_descriptor, np.zeros((128, 128), dtype), store)
    assert "Descriptor block shape must have at least 16 bytes" in str(err.__cause__), _text(err)


@triton.must_use_result("Assign it.")
@triton.jit
def _cube(x):
    return x * x * x


@triton.jit
def _discards(x_ptr, DISCARD: tl.constexpr, ADVANCE: tl.constexpr):
    v = tl.load(x_ptr + tl.arange(0, 16))
    if ADVANCE:
        p = tl.make_block_ptr(x_ptr, (16, ), (1, ), (0, ), (8, ), (0, ))
        tl.advance(p, (8, ))
    elif DISCARD:
        _cube(v)
    else:
        v = _cube(v)
    tl.store(x_ptr + tl.arange(0, 16), v)


def test_must_use_result(backend):
    # test_compile_errors.py::test_unused_result: the last line is "The result of cube is not being used. <why>"
    x = np.full(16, 2.0, np.float32)
    _discards[(1, )](x, False, False)
    assert x[0] == 8.0
    err = _error(_discards, x, True, False)
    assert str(err).split("\n")[-1] == "The result of _cube is not being used. Assign it.", str(err)
    assert "_cube(v)" in str(err)
    err = _error(_discards, x, False, True)
    assert "The result of tl.advance is not being used. Note that tl.advance does not have any side effects" \
        in str(err), str(err)


@triton.jit(do_not_specialize=["N"])
def _constexpr_not_specialized(x_ptr, N: tl.constexpr):
    tl.store(x_ptr, N)


def test_constexpr_listed_in_do_not_specialize(backend):
    # test_compile_errors.py::test_err_constexpr_and_do_not_specialize
    with pytest.raises(triton.CompilationError, match="N marked as constexpr and listed in do_not_specialize"):
        _constexpr_not_specialized[(1, )](np.zeros(1, np.int32), 5)


CONSTEXPR_ANNOTATED: tl.constexpr = 42


@triton.jit
def _reads_annotated_global(x_ptr):
    tl.store(x_ptr, CONSTEXPR_ANNOTATED)


def test_global_annotated_but_not_wrapped(backend):
    # test_compile_errors.py::test_constexpr_annotated_global_var_access: "Cannot access global variable"
    from tritium import knobs
    if knobs.runtime.interpret:
        pytest.skip("the interpreter runs the kernel as Python and reads globals as Python does (as Triton's)")
    err = _error(_reads_annotated_global, np.zeros(1, np.int32))
    assert "Cannot access global variable `CONSTEXPR_ANNOTATED`" in str(err), str(err)


@triton.jit
def _where_on_uint(x_ptr):
    a = tl.full((16, ), 0, tl.uint32)
    tl.store(x_ptr + tl.arange(0, 16), tl.where(a, 1.0, 2.0))


def test_where_with_a_non_boolean_condition_warns(backend):
    # test_compile_errors.py::test_where_warning
    x = np.zeros(16, np.float32)
    with pytest.warns(UserWarning, match="non-boolean condition"):
        _where_on_uint[(1, )](x)
    assert (x == 2.0).all()
