"""The pieces of Triton's API that Triton's own test-suite and libraries use, with Triton's semantics:
``_unsafe_update_src``, @jit on exec()-defined functions, ``TritonError``, ``str_to_ty(name, c)``,
``runtime._allocation`` and the torch-style helpers of ``TensorWrapper``."""
from __future__ import annotations

import textwrap
from collections import namedtuple

import numpy as np
import pytest

import tritium
import tritium.language as tl

SCALE_SRC = textwrap.dedent('''
    @tritium.jit
    def scale(X, Y, N: tl.constexpr):
        o = tl.arange(0, N)
        tl.store(Y + o, double(tl.load(X + o)))
''')


@tritium.jit
def double(x):
    return x * 2


@tritium.jit
def times(X, Y, N: tl.constexpr):
    o = tl.arange(0, N)
    tl.store(Y + o, tl.load(X + o) * 2)


def _exec_kernel():
    ns: dict = {}
    exec(SCALE_SRC, {"tritium": tritium, "tl": tl, "double": double}, ns)
    return ns["scale"]


def _run(kernel, interpret: bool) -> np.ndarray:
    x = np.arange(16, dtype=np.float32)
    y = np.zeros(16, np.float32)
    kernel.interpret = interpret
    kernel[(1, )](x, y, N=16)
    return y


@pytest.mark.parametrize("interpret", [False, True])
def test_unsafe_update_src_recompiles(interpret):
    k = tritium.JITFunction(times.fn)
    np.testing.assert_array_equal(_run(k, interpret), np.arange(16) * 2)
    old_key = k.cache_key
    k._unsafe_update_src(k.src.replace("* 2", "* 3"))
    assert k.cache_key != old_key
    np.testing.assert_array_equal(_run(k, interpret), np.arange(16) * 3)


def test_src_is_not_assignable():
    k = tritium.JITFunction(times.fn)
    with pytest.raises(AttributeError, match="_unsafe_update_src"):
        k.src = "def times(X, Y, N): pass"
    with pytest.raises(TypeError, match="str"):
        k._unsafe_update_src(None)


def test_exec_defined_kernel_runs_in_the_interpreter():
    k = _exec_kernel()
    assert k.src is None
    np.testing.assert_array_equal(_run(k, True), np.arange(16) * 2)


SCAN_SRC = textwrap.dedent('''
    @tritium.jit
    def scan(X, Y, N: tl.constexpr):
        o = tl.arange(0, N)
        tl.store(Y + o, tl.associative_scan(tl.load(X + o), 0, add_fn))
''')


@tritium.jit
def add_fn(a, b):
    return a + b


def test_exec_defined_kernel_with_a_combine_function_in_the_interpreter():
    ns: dict = {}
    exec(SCAN_SRC, {"tritium": tritium, "tl": tl, "add_fn": add_fn}, ns)
    np.testing.assert_array_equal(_run(ns["scan"], True), np.cumsum(np.arange(16)))


def test_exec_defined_kernel_compiles_once_given_its_source():
    k = _exec_kernel()
    with pytest.raises(ValueError, match=r"scale .*no source code.*_unsafe_update_src"):
        _run(k, False)
    k._unsafe_update_src(SCALE_SRC)
    np.testing.assert_array_equal(_run(k, False), np.arange(16) * 2)


@tritium.jit
def _bad(X):
    tl.store(X, undefined_name)  # noqa: F821


def test_triton_error_is_the_base_of_kernel_errors():
    from tritium.compiler.errors import CompilationError, CompileTimeAssertionFailure, OutOfResources
    for cls in (CompilationError, CompileTimeAssertionFailure, OutOfResources):
        assert issubclass(cls, tritium.TritonError)
    with pytest.raises(tritium.TritonError, match="undefined_name"):
        _bad[(1, )](np.zeros(1, np.float32))


def test_str_to_ty_two_argument_form():
    assert tl.str_to_ty("*kfp16", None) == tl.pointer_type(tl.float16, const=True)
    assert tl.str_to_ty("i64") == tl.int64
    from tritium.language.dtypes import constexpr_type
    assert tl.str_to_ty("constexpr", 7) == constexpr_type(7)
    t = tl.str_to_ty(("i32", "*fp32"), None)
    assert list(t) == [tl.int32, tl.pointer_type(tl.float32)]
    pair = namedtuple("pair", ["a", "b"])
    assert tl.str_to_ty(pair("i32", "fp64"), None).fields == ["a", "b"]
    d = tl.str_to_ty("tensordesc<fp16[64, 32]>", None)
    assert list(d.block_type.shape) == [64, 32] and d.block_type.element_ty == tl.float16
    with pytest.raises(TypeError, match="unknown type"):
        tl.str_to_ty("float", None)


def test_runtime_allocation_module():
    from tritium.runtime import _allocation
    seen = []
    _allocation.set_allocator(lambda size, align, stream: seen.append((size, align)) or bytearray(size))
    assert len(_allocation.get_allocator()(64, 16, None)) == 64 and seen == [(64, 16)]
    _allocation.set_allocator(_allocation.NullAllocator())
    with pytest.raises(RuntimeError, match="no allocator"):
        _allocation.get_allocator()(64, 16, None)
    _allocation.set_profile_allocator(lambda size, align, stream: bytearray(size))
    assert len(_allocation._profile_allocator(8, 8, None)) == 8
    _allocation.set_profile_allocator(None)
    with pytest.raises(RuntimeError):
        _allocation._profile_allocator(8, 8, None)


def test_tensor_wrapper_torch_helpers():
    torch = pytest.importorskip("torch")
    base = torch.arange(6, dtype=torch.int8)
    w = tritium.reinterpret(base, tl.float8e5)
    for made in (w.new_empty((3, )), w.clone(), w.to("cpu"), w.cpu()):
        assert isinstance(made, tritium.TensorWrapper) and made.dtype is tl.float8e5
    c = w.clone()
    assert c.base.data_ptr() != base.data_ptr() and torch.equal(c.base, base)
    e = w.new_empty((6, ))
    assert e.copy_(w) is e and torch.equal(e.base, base)
    e.copy_(torch.zeros(6, dtype=torch.int8))
    assert int(e.base.abs().sum()) == 0


@tritium.jit
def _optional_bias(X, B, Y, N: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(X + o)
    if B is not None:
        x += tl.load(B + o)
    if B is None:
        x += 100
    tl.store(Y + o, x)


@pytest.mark.parametrize("interpret", [False, True])
def test_is_none_on_a_tensor_is_decided_at_compile_time(interpret):
    # Triton's idiom for optional pointer arguments: `ptr is not None` is True for a tensor, never an error
    x = np.arange(8, dtype=np.float32)
    b = np.full(8, 0.5, np.float32)
    y = np.zeros(8, np.float32)
    _optional_bias.interpret = interpret
    try:
        _optional_bias[(1, )](x, b, y, N=8)
        np.testing.assert_array_equal(y, x + 0.5)
        _optional_bias[(1, )](x, None, y, N=8)
        np.testing.assert_array_equal(y, x + 100)
    finally:
        _optional_bias.interpret = False


@tritium.jit
def _tensor_identity(X, N: tl.constexpr):
    o = tl.arange(0, N)
    x = tl.load(X + o)
    if x is x:
        tl.store(X + o, x)


@pytest.mark.parametrize("interpret", [False, True])
def test_tensor_identity_is_still_refused(interpret):
    _tensor_identity.interpret = interpret
    try:
        with pytest.raises(tritium.CompilationError, match="compile-time values only"):
            _tensor_identity[(1, )](np.zeros(8, np.float32), N=8)
    finally:
        _tensor_identity.interpret = False
