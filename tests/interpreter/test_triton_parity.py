"""What Triton's own interpreter accepts, ours accepts with the same results (gaps found by running Triton's
python/test/unit/language tests with TRITON_INTERPRET=1)."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl


@triton.jit
def _small_dot(a_ptr, b_ptr, c_ptr, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    ob = tl.arange(0, B)[:, None, None]
    om = tl.arange(0, M)[None, :, None]
    on = tl.arange(0, N)[None, None, :]
    ok = tl.arange(0, K)
    a = tl.load(a_ptr + ob * M * K + om * K + ok[None, None, :])
    b = tl.load(b_ptr + ob * K * N + ok[None, :, None] * N + on)
    tl.store(c_ptr + ob * M * N + om * N + on, tl.dot(a, b, input_precision="ieee"))


@pytest.mark.parametrize("B, M, N, K", [(1, 1, 32, 32), (2, 4, 2, 8), (1, 16, 16, 1)])
def test_dot_below_16_like_tritons_interpreter(interpret, B, M, N, K):
    # Triton's interpreter has min_dot_size (1, 1, 1); the 16 minimum belongs to compiled backends
    rng = np.random.default_rng(0)
    a = rng.standard_normal((B, M, K)).astype(np.float32)
    b = rng.standard_normal((B, K, N)).astype(np.float32)
    c = np.zeros((B, M, N), np.float32)
    _small_dot[(1, )](a, b, c, B, M, N, K)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


_NO_SOURCE = '''
def shapes(out_ptr):
    s = tl.full([], 1, tl.int32)
    tl.static_assert(s.shape == [])
    b = tl.zeros([2, 4], tl.int32)
    tl.static_assert(b.shape == [2, 4])
    tl.store(out_ptr, s)
'''


def test_shape_equals_list_without_source(interpret):
    # Triton's test_core.py patch_kernel exec()s kernels in interpreter mode: they run as plain Python, with
    # no rewritten comparison, so the shape itself must equal a list (Triton's tl.tuple does)
    ns = {"tl": tl}
    exec(_NO_SOURCE, ns)
    kernel = triton.jit(ns["shapes"])
    out = np.zeros(1, np.int32)
    kernel[(1, )](out)
    assert out[0] == 1


@triton.jit
def _serialized_add(data, lock):
    ptrs = data + tl.arange(0, 128)
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    tl.store(ptrs, tl.load(ptrs) + 1.0)
    tl.atomic_xchg(lock, 0)


def test_spin_lock_over_more_programs_than_the_recursion_limit(interpret):
    # test_core.py::test_atomic_cas: each split of a batch on the lock peels one program off; splitting by
    # recursion hit Python's recursion limit (RecursionError) past ~1000 programs in one batch
    import sys
    n = sys.getrecursionlimit() + 100
    data = np.zeros(128, np.float32)
    lock = np.zeros(1, np.int32)
    _serialized_add[(n, )](data, lock)
    np.testing.assert_array_equal(data, np.full(128, n, np.float32))
    assert lock[0] == 0


_NO_SOURCE_CONTROL = '''
def strided_rows(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(pid, tl.cdiv(N, BLOCK), tl.num_programs(0)):
        acc += tl.load(x_ptr + start * BLOCK + tl.arange(0, BLOCK))
    if pid > 0:
        acc = acc * 2.0
    tl.store(y_ptr + pid * BLOCK + tl.arange(0, BLOCK), acc)
'''


def test_run_time_loop_and_if_without_source(interpret):
    # test_core.py::test_optimize_thread_locality (exec()ed by patch_kernel): Python's own range() and `if` meet
    # scalar tensors that differ between programs (program id, num_programs): they take each program's value
    ns = {"tl": tl}
    exec(_NO_SOURCE_CONTROL, ns)
    kernel = triton.jit(ns["strided_rows"])
    block, n, progs = 8, 8 * 7, 3
    x = np.arange(n, dtype=np.float32)
    y = np.zeros(progs * block, np.float32)
    kernel[(progs, )](x, y, n, block)
    rows = x.reshape(-1, block)
    for p in range(progs):
        want = rows[p::progs].sum(axis=0) * (2.0 if p > 0 else 1.0)
        np.testing.assert_array_equal(y[p * block:(p + 1) * block], want)


@triton.jit
def _int_of_tensor(x_ptr):
    n = tl.load(x_ptr)
    tl.store(x_ptr, int(n))


def test_python_int_of_a_tensor_stays_a_compile_error_with_source(interpret):
    # the leniency above is only for functions without source: a rewritten kernel keeps the compiler's rule
    with pytest.raises(triton.CompilationError, match="cannot take run-time tensors"):
        _int_of_tensor[(1, )](np.ones(1, np.int32))


@triton.jit
def _bad_axis(x_ptr):
    tl.store(x_ptr, tl.program_id(7))


def test_kernel_errors_are_also_interpreter_errors(interpret):
    # test_core.py::test_tma_load_block_shape_err expects triton.runtime.errors.InterpreterError in interpreter
    # mode; tritium's tests (and users) catch CompilationError: the error is both, and keeps the line and caret
    from tritium.interpreter.errors import InterpreterError
    with pytest.raises(InterpreterError) as info:
        _bad_axis[(1, )](np.zeros(1, np.int32))
    assert isinstance(info.value, triton.CompilationError)
    text = str(info.value)
    assert "in kernel `_bad_axis`" in text and "tl.program_id(7)" in text and "^" in text
    assert "program_id axis must be 0, 1, or 2 but got 7" in str(info.value.__cause__)
