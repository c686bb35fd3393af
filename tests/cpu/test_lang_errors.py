"""Bad input: every misuse is a CompilationError naming the kernel, showing the line with a caret and saying
what to do (or, for launches, a TypeError); no MLIR or LLVM text ever reaches the user."""
from __future__ import annotations

import re

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl

X = np.zeros(64, np.float32)
I = np.zeros(64, np.int32)


def _compile_error(kernel, *args, grid=(1, ), **kwargs) -> triton.CompilationError:
    with pytest.raises(triton.CompilationError) as info:
        kernel[grid](*args, **kwargs)
    return info.value


def _check(err: triton.CompilationError, kernel, line_fragment: str, *phrases: str) -> str:
    text = str(err)
    name = kernel.__name__
    assert f"in kernel `{name}`" in text, text
    lines = text.splitlines()
    caret = [i for i, ln in enumerate(lines) if ln.strip() and set(ln.strip()) == {"^"}]
    assert caret, f"no caret line in:\n{text}"
    assert line_fragment in lines[caret[0] - 1], f"the line above the caret is not the offending one:\n{text}"
    for p in phrases:
        assert re.search(p, text, re.I), f"{p!r} not in:\n{text}"
    # no compiler internals: MLIR ops and types, LLVM IR, Python tracebacks
    for leak in ("tt\\.", "arith\\.", "!tt", "%[0-9]", "llvm", "Traceback", "tensor<"):
        assert not re.search(leak, text.split("\n", 1)[1] if "\n" in text else text), f"{leak} leaked:\n{text}"
    return text


# -- arguments -----------------------------------------------------------------------------------------

@triton.jit
def _two_args(x_ptr, n):
    tl.store(x_ptr, n)


def test_wrong_argument_count_and_names():
    with pytest.raises(TypeError, match="_two_args|argument"):
        _two_args[(1, )](X)
    with pytest.raises(TypeError, match="_two_args|argument"):
        _two_args[(1, )](X, 1, 2)
    with pytest.raises(TypeError, match="bogus|argument"):
        _two_args[(1, )](X, bogus=3)


@triton.jit
def _needs_constexpr(x_ptr, n):
    offs = tl.arange(0, n)
    tl.store(x_ptr + offs, 1.0)


def test_non_constexpr_where_constexpr_needed():
    err = _compile_error(_needs_constexpr, X, 16)
    _check(err, _needs_constexpr, "tl.arange(0, n)", "compile-time", "name: tl.constexpr")


@triton.jit
def _helper_const(x, K: tl.constexpr):
    return x + tl.zeros((K, ), tl.float32)


@triton.jit
def _passes_tensor_as_constexpr(x_ptr, k):
    tl.store(x_ptr + tl.arange(0, 4), _helper_const(1.0, k))


def test_tensor_passed_to_constexpr_parameter():
    """As in Triton, a device function's tl.constexpr parameter accepts a run-time value; where the function
    then needs a compile-time one, the error says so at that line."""
    err = _compile_error(_passes_tensor_as_constexpr, X, 4)
    text = _check(err, _passes_tensor_as_constexpr, "tl.zeros((K, ), tl.float32)", "constexpr|compile-time")
    assert "in @jit function `_helper_const`" in text
    assert "_helper_const(1.0, k)" in text.split("called from", 1)[1]  # the call that brought the value in


@triton.jit
def _arange_not_pow2(x_ptr):
    tl.store(x_ptr + tl.arange(0, 12), 1.0)


def test_arange_not_power_of_two():
    err = _compile_error(_arange_not_pow2, X)
    _check(err, _arange_not_pow2, "tl.arange(0, 12)", "power of 2", "next_power_of_2|round")


@triton.jit
def _bad_shapes(x_ptr):
    a = tl.arange(0, 16)
    b = tl.arange(0, 32)
    tl.store(x_ptr + a, (a + b).to(tl.float32))


def test_incompatible_shapes():
    err = _compile_error(_bad_shapes, X)
    _check(err, _bad_shapes, "a + b", "incompatible shapes", r"16.*32|32.*16")


# -- unsupported Python --------------------------------------------------------------------------------

@triton.jit
def _uses_try(x_ptr):
    try:
        tl.store(x_ptr, 1.0)
    except Exception:
        pass


@triton.jit
def _uses_with(x_ptr):
    with open("f"):
        tl.store(x_ptr, 1.0)


@triton.jit
def _uses_lambda(x_ptr):
    f = lambda v: v + 1  # noqa: E731
    tl.store(x_ptr, f(1.0))


@triton.jit
def _uses_listcomp(x_ptr):
    vals = [i for i in range(tl.program_id(0))]   # unrolled while compiling: run-time bounds are refused
    tl.store(x_ptr, vals[0])


@triton.jit
def _uses_genexp(x_ptr):
    tl.store(x_ptr, sum(i for i in range(3)))


@triton.jit
def _uses_break(x_ptr, n):
    for i in range(n):
        if i > 2:
            break
        tl.store(x_ptr + i, 1.0)


@triton.jit
def _uses_raise(x_ptr):
    raise ValueError("no")


@triton.jit
def _uses_dict(x_ptr):
    d = {"a": 1}
    tl.store(x_ptr, d["a"])


@triton.jit
def _uses_nested_def(x_ptr):
    def inner(v):
        return v
    tl.store(x_ptr, inner(1.0))


@pytest.mark.parametrize("kernel,fragment,phrase", [
    (_uses_try, "try:", "Try"), (_uses_with, 'with open("f"):', "With"),
    (_uses_lambda, "lambda v: v + 1", "Lambda.*@triton.jit"),
    (_uses_listcomp, "range(tl.program_id(0))", "compile-time items"),
    (_uses_genexp, "i for i in range(3)", "GeneratorExp"), (_uses_break, "break", "break.*not supported"),
    (_uses_raise, 'raise ValueError("no")', "static_assert|device_assert"), (_uses_dict, '{"a": 1}', "dict"),
    (_uses_nested_def, "def inner(v):", "module level")])
def test_unsupported_python_constructs(kernel, fragment, phrase):
    err = _compile_error(kernel, X, 4) if kernel is _uses_break else _compile_error(kernel, X)
    _check(err, kernel, fragment, "unsupported|not supported|cannot", phrase)


def _plain_python(v):
    return v * 2


@triton.jit
def _calls_python(x_ptr):
    tl.store(x_ptr, _plain_python(1.0))


def test_calling_a_plain_python_function():
    err = _compile_error(_calls_python, X)
    _check(err, _calls_python, "_plain_python(1.0)", "_plain_python", "@triton.jit", "constexpr_function")


# -- types ---------------------------------------------------------------------------------------------

@triton.jit
def _ptr_plus_float(x_ptr):
    tl.store(x_ptr + 1.5, 1.0)


def test_pointer_plus_float():
    err = _compile_error(_ptr_plus_float, X)
    _check(err, _ptr_plus_float, "x_ptr + 1.5", "pointer", "integer")


@triton.jit
def _load_non_pointer(x_ptr, n):
    v = tl.load(n + tl.arange(0, 16))
    tl.store(x_ptr + tl.arange(0, 16), v)


@triton.jit
def _store_non_pointer(x_ptr, n):
    tl.store(n, 1.0)


def test_load_store_through_non_pointer():
    err = _compile_error(_load_non_pointer, X, 3)
    _check(err, _load_non_pointer, "tl.load(n + tl.arange(0, 16))", "pointer")
    err = _compile_error(_store_non_pointer, X, 3)
    _check(err, _store_non_pointer, "tl.store(n, 1.0)", "pointer")


@triton.jit
def _mask_not_broadcastable(x_ptr):
    offs = tl.arange(0, 16)
    m = tl.arange(0, 32) < 5
    tl.store(x_ptr + offs, 1.0, mask=m)


@triton.jit
def _other_not_broadcastable(x_ptr):
    offs = tl.arange(0, 16)
    v = tl.load(x_ptr + offs, mask=offs < 4, other=tl.zeros([8], tl.float32))
    tl.store(x_ptr + offs, v)


def test_mask_and_other_must_broadcast_to_the_pointer_block():
    err = _compile_error(_mask_not_broadcastable, X)
    _check(err, _mask_not_broadcastable, "mask=m", "mask", r"\[32\]", r"\[16\]", "same offsets")
    err = _compile_error(_other_not_broadcastable, X)
    _check(err, _other_not_broadcastable, "other=tl.zeros", "other", r"\[8\]")


@triton.jit
def _other_dtype_mismatch(x_ptr):
    offs = tl.arange(0, 16)
    v = tl.load(x_ptr + offs, mask=offs < 4, other=tl.zeros([16], tl.int32))
    tl.store(x_ptr + offs, v)


def test_other_of_another_dtype_is_converted_as_in_triton():
    # Triton casts `other` to the loaded type; FlagGems' topk relies on it (an fp32 bound for an fp16 load)
    x = np.arange(16, dtype=np.float32) + 1
    _other_dtype_mismatch[(1, )](x)
    np.testing.assert_array_equal(x, [1, 2, 3, 4] + [0] * 12)


@triton.jit
def _bad_program_id(x_ptr):
    tl.store(x_ptr, tl.program_id(3).to(tl.float32))


def test_program_id_axis_out_of_range():
    err = _compile_error(_bad_program_id, X)
    _check(err, _bad_program_id, "tl.program_id(3)", "0, 1, or 2")


@triton.jit
def _other_out_of_range(x_ptr):
    offs = tl.arange(0, 16)
    v = tl.load(x_ptr + offs, mask=offs < 4, other=300)
    tl.store(x_ptr + offs, v)


def test_other_out_of_range_for_element_type():
    x = np.zeros(16, np.int8)
    err = _compile_error(_other_out_of_range, x)
    _check(err, _other_out_of_range, "other=300", "300", "int8")


# -- more misuse Triton rejects --------------------------------------------------------------------------

@triton.jit
def _mixed_sign_div(x_ptr, u_ptr):
    a = tl.load(x_ptr + tl.arange(0, 16))
    b = tl.load(u_ptr + tl.arange(0, 16))
    tl.store(x_ptr + tl.arange(0, 16), a // b)


@triton.jit
def _exp_fp16(x_ptr):
    offs = tl.arange(0, 16)
    tl.store(x_ptr + offs, tl.exp(tl.load(x_ptr + offs)))


@triton.jit
def _kernel_returns(x_ptr):
    return 1


@triton.jit
def _carried_type_changes(x_ptr, n):
    acc = 0
    for i in range(n):
        acc += 0.5
    tl.store(x_ptr, acc)


@triton.jit
def _block_if(x_ptr):
    v = tl.load(x_ptr + tl.arange(0, 16))
    if v > 0:
        tl.store(x_ptr, 1.0)


@triton.jit
def _undefined_name(x_ptr):
    tl.store(x_ptr, undefined_thing)  # noqa: F821


@triton.jit
def _assign_element(x_ptr):
    v = tl.zeros((16, ), tl.float32)
    v[0] = 1.0
    tl.store(x_ptr + tl.arange(0, 16), v)


@triton.jit
def _other_without_mask(x_ptr):
    v = tl.load(x_ptr + tl.arange(0, 16), other=0.0)
    tl.store(x_ptr + tl.arange(0, 16), v)


@triton.jit
def _too_big(x_ptr):
    tl.store(x_ptr + tl.arange(0, 1 << 21), 1.0)


@triton.jit
def _bad_cache_modifier(x_ptr):
    v = tl.load(x_ptr + tl.arange(0, 16), cache_modifier=".zz")
    tl.store(x_ptr + tl.arange(0, 16), v)


@triton.jit
def _recursive(x):
    return _recursive(x)


@triton.jit
def _calls_recursive(x_ptr):
    tl.store(x_ptr, _recursive(1.0))


@triton.jit
def _int_to_fp8(x_ptr):
    v = tl.load(x_ptr + tl.arange(0, 16))
    tl.store(x_ptr + tl.arange(0, 16), v.to(tl.float8e5).to(tl.int32))


@pytest.mark.parametrize("kernel,args,fragment,phrases", [
    (_mixed_sign_div, (I, np.zeros(64, np.uint32)), "a // b", ("signedness", "cast")),
    (_exp_fp16, (np.zeros(64, np.float16), ), "tl.exp(", ("fp32", "x.to\\(tl.float32\\)")),
    (_kernel_returns, (X, ), "return 1", ("cannot return", "pointer")),
    (_carried_type_changes, (X, 3), "for i in range(n):", ("acc", "int32", "fp32")),
    (_block_if, (X, ), "if v > 0:", ("scalar", "tl.where")),
    (_undefined_name, (X, ), "undefined_thing", ("not defined", )),
    (_assign_element, (X, ), "v[0] = 1.0", ("immutable", "tl.where")),
    (_other_without_mask, (X, ), "other=0.0", ("mask", )),
    (_too_big, (X, ), "tl.arange(0, 1 << 21)", ("limit", )),
    (_bad_cache_modifier, (X, ), 'cache_modifier=".zz"', ("cache_modifier", ".ca")),
    (_calls_recursive, (X, ), "return _recursive(x)", ("recursive", "loop")),
    (_int_to_fp8, (I, ), "v.to(tl.float8e5)", ("convert", "int32", "fp8e5", r"x.to\(tl.float16\)"))])
def test_misuse_triton_rejects(kernel, args, fragment, phrases):
    err = _compile_error(kernel, *args)
    text = _check(err, kernel, fragment, *phrases)
    if kernel is _calls_recursive:  # the error is in the device function; the call that led there is shown
        assert "in @jit function `_recursive`" in text and "called from `_calls_recursive`" in text
