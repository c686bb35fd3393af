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


@triton.jit
def _pick(a, b, choose_b):
    if choose_b:
        return b
    else:
        return a


@triton.jit(do_not_specialize=["choose"])
def _const_ptrs(in_ptr: tl.const, out, c_out: tl.const, choose, MODE: tl.constexpr):
    offs = tl.arange(0, 16)
    val = tl.load(in_ptr + offs)
    if MODE == "direct":
        dst = c_out
    elif MODE == "call":
        dst = _pick(out, c_out, choose)
    elif MODE == "ternary":
        dst = c_out if choose else out
    else:
        if choose:
            dst = c_out
        else:
            dst = out
    tl.store(dst + offs, val)


@pytest.mark.parametrize("mode, phrase", [
    ("direct", "Cannot store to a constant pointer"), ("call", "Inconsistent return types"),
    ("ternary", "Ternary expression with dynamic condition has inconsistent type"),
    ("if", "Mismatched type for dst")])
def test_const_pointer_errors(backend, mode, phrase):
    # test_core.py::test_const: the error_message of each way a tl.const pointer reaches a store
    from tritium import knobs
    if knobs.runtime.interpret and mode != "direct":
        pytest.skip("the interpreter runs one branch of a run-time if: it has no branch types to compare")
    x = np.ones(16, np.float32)
    err = _error(_const_ptrs, x, np.zeros(16, np.float32), np.zeros(16, np.float32), True, mode)
    assert phrase in err.error_message, str(err)


@triton.jit
def _undefined_inside():
    return xyz  # noqa: F821


@triton.jit
def _calls_undefined(x_ptr):
    # a comment, so that the call is on line 3 of the kernel
    tl.store(x_ptr, _undefined_inside())


def test_error_positions_causes_and_tracebacks(backend):
    # test_compile_errors.py::test_err_in_nested_call and friends: Triton's "at line:col:" (relative to the
    # function, column from 0) next to tritium's file:line:col; the callee's error is the cause of the caller's;
    # no frame of the code generator in the traceback a user sees
    import traceback
    from tritium import knobs
    err = _error(_calls_undefined, np.zeros(1, np.int32))
    assert "at 2:11:" in str(err), str(err)
    if knobs.runtime.interpret:
        return  # the interpreter reports the error where it happened
    assert "at 3:20:" in str(err) and "in @jit function `_undefined_inside`" in str(err), str(err)
    inner = err.__cause__
    assert isinstance(inner, triton.CompilationError) and "at 2:11:" in str(inner), str(inner)
    for e in (err, inner):
        shown = "".join(traceback.format_exception(type(e), e, e.__traceback__, chain=False))
        assert "code_generator.py" not in shown, shown


@triton.jit
def _not_a_tuple(x_ptr, STATIC: tl.constexpr):
    if STATIC:
        tl.static_assert(isinstance(0, tl.tensor))
    else:
        not (0, 0)
    tl.store(x_ptr, 1)


@pytest.mark.parametrize("static", [True, False])
def test_refused_at_compile_time_without_a_cause(backend, static):
    # test_compile_errors.py::test_err_static_assert / test_err_in_unary_op: the error itself, no cause
    from tritium import knobs
    if knobs.runtime.interpret and not static:
        pytest.skip("the interpreter evaluates `not (0, 0)` as Python does (as Triton's interpreter)")
    err = _error(_not_a_tuple, np.zeros(1, np.int32), static)
    assert "at 3:8:" in str(err) if static else "at 5:8:" in str(err), str(err)
    if not knobs.runtime.interpret:
        assert err.__cause__ is None
        assert isinstance(err, triton.compiler.errors.CompileTimeAssertionFailure) == static


@triton.jit
def _whole_messages(x_ptr, WHICH: tl.constexpr):
    if WHICH == 0:
        v = tl.arange(2, 7)
    elif WHICH == 1:
        v = tl.full((4, 33), 0, tl.int32)
    else:
        a = tl.full((32, 64), 0, tl.uint8)
        b = tl.full((64, 32), 0, tl.uint8)
        v = tl.dot_scaled(a, tl.full((32, 4), 0, tl.uint8), "e5m2", b, tl.full((32, 2), 0, tl.uint8), "e5m2")
    tl.store(x_ptr, tl.sum(tl.ravel(v)).to(tl.int32))


@pytest.mark.parametrize("which, cause, hint", [
    (0, "arange's range must be a power of 2", "got 7 - 2 = 5: round it up (triton.next_power_of_2)"),
    (1, "Shape element 1 must be a power of 2", "the shape is [4, 33]: round it up"),
    (2, "lhs_scale must be a tensor of shape [32, 2]. Got ['32', '4']", "[M, K // 32]"),
])
def test_cause_is_tritons_whole_message(backend, which, cause, hint):
    # test_compile_errors.py::test_power_of_two_shapes, _2, test_dot_scaled_shape_verification compare
    # str(err.__cause__) whole: the cause says what is wrong in Triton's words; the error the user reads adds
    # the kernel, the line with a caret, the details and what to do
    err = _error(_whole_messages, np.zeros(1, np.int32), which)
    assert str(err.__cause__) == cause
    text = str(err)
    assert "_whole_messages" in text and "^" in text and f"{cause}; " in text and hint in text, text
