"""A kernel's ``assert`` statement is a device assert, as in Triton: without debug it is left out, even when its
condition is known at compile time; with debug (``@jit(debug=True)``, ``debug=True`` at launch, TRITON_DEBUG=1) a
false condition fails when the kernel runs. Only ``tl.static_assert`` fails the compile.

Checked against Triton 3.6 (``triton.compile`` for sm_90): ``assert BLOCK % 3 == 0`` with BLOCK = 8 compiles with
debug off (no ``tt.assert`` in the TTIR) and becomes ``tt.assert %false`` with debug on; ``tl.static_assert`` of
the same condition raises CompileTimeAssertionFailure both ways. Before, tritium refused the first at compile
time ("assertion failed at compile time"), so a kernel Triton runs did not compile.

The interpreter does as compiled here (its device asserts already did: tests/interpreter/test_debugging.py).
Triton's own interpreter runs a kernel's ``assert`` as a Python assert whatever the debug setting.
"""
import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium import knobs
from tritium.compiler.errors import CompilationError, CompileTimeAssertionFailure


@pytest.fixture
def mode(compiled_or_interpreted):
    return compiled_or_interpreted


@triton.jit
def _constexpr_assert(X, BLOCK: tl.constexpr):
    assert BLOCK % 3 == 0, "BLOCK must be a multiple of 3"
    tl.store(X + tl.arange(0, BLOCK), tl.arange(0, BLOCK) + 1)


@triton.jit
def _constexpr_assert_no_message(X, BLOCK: tl.constexpr):
    assert BLOCK == 5
    tl.store(X + tl.arange(0, BLOCK), tl.arange(0, BLOCK) + 1)


@triton.jit
def _runtime_scalar_assert(X, n, BLOCK: tl.constexpr):
    assert n > 100, "n too small"
    tl.store(X + tl.arange(0, BLOCK), tl.arange(0, BLOCK) + 1)


@triton.jit
def _static_assert(X, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK % 3 == 0, "BLOCK must be a multiple of 3")
    tl.store(X + tl.arange(0, BLOCK), tl.arange(0, BLOCK) + 1)


def test_false_constexpr_assert_is_left_out_without_debug(mode):
    x = np.zeros(8, np.int32)
    _constexpr_assert[(1, )](x, BLOCK=8)
    np.testing.assert_array_equal(x, np.arange(1, 9))
    y = np.zeros(8, np.int32)
    _constexpr_assert_no_message[(1, )](y, BLOCK=8)
    np.testing.assert_array_equal(y, np.arange(1, 9))


def test_false_constexpr_assert_fails_at_run_time_with_debug(mode):
    x = np.zeros(8, np.int32)
    with pytest.raises(AssertionError, match="BLOCK must be a multiple of 3") as info:
        _constexpr_assert[(1, )](x, BLOCK=8, debug=True)
    assert not isinstance(info.value, CompilationError)
    with knobs.runtime.scope():
        knobs.runtime.debug = True          # TRITON_DEBUG=1
        with pytest.raises(AssertionError, match="BLOCK == 5"):
            _constexpr_assert_no_message[(1, )](x, BLOCK=8)


@triton.jit
def _constexpr_true_assert(X, BLOCK: tl.constexpr):
    assert BLOCK % 4 == 0, "BLOCK must be a multiple of 4"
    tl.store(X + tl.arange(0, BLOCK), tl.arange(0, BLOCK) + 1)


def test_true_asserts_run_with_debug(mode):
    x = np.zeros(8, np.int32)
    _constexpr_true_assert[(1, )](x, BLOCK=8, debug=True)
    np.testing.assert_array_equal(x, np.arange(1, 9))
    z = np.zeros(8, np.int32)
    _runtime_scalar_assert[(1, )](z, 101, BLOCK=8, debug=True)
    np.testing.assert_array_equal(z, np.arange(1, 9))


def test_runtime_scalar_assert_follows_debug(mode):
    x = np.zeros(8, np.int32)
    _runtime_scalar_assert[(1, )](x, 5, BLOCK=8)
    np.testing.assert_array_equal(x, np.arange(1, 9))
    with pytest.raises(AssertionError, match="n too small"):
        _runtime_scalar_assert[(1, )](x, 5, BLOCK=8, debug=True)


def test_static_assert_still_fails_the_compile():
    x = np.zeros(8, np.int32)
    for debug in (False, True):
        with pytest.raises(CompileTimeAssertionFailure, match="BLOCK must be a multiple of 3"):
            _static_assert[(1, )](x, BLOCK=8, debug=debug)


def test_ttir_has_the_assert_only_with_debug():
    # the code generator is shared by every backend: what it emits decides for all of them
    x = np.zeros(8, np.int32)
    off = _constexpr_assert.warmup(x, BLOCK=8, grid=(1, ))
    on = _constexpr_assert.warmup(x, BLOCK=8, grid=(1, ), debug=True)
    assert "tt.assert" not in off.asm["ttir"], off.asm["ttir"]
    assert "tt.assert" in on.asm["ttir"], on.asm["ttir"]
