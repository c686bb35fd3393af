"""The kernel's Python runs as Python, with the compiler's semantics: numpy arrays and torch tensors, autotune
and heuristics, device functions, run-time control flow, and the compiler's errors."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl


@triton.jit
def _add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


def test_numpy_arrays_and_torch_tensors(interpret):
    torch = pytest.importorskip("torch")
    x, y = np.random.rand(1000).astype(np.float32), np.random.rand(1000).astype(np.float32)
    out = np.zeros_like(x)
    _add[(8, )](x, y, out, 1000, BLOCK=128)
    np.testing.assert_array_equal(out, x + y)
    tx, ty = torch.from_numpy(x), torch.rand(1000)
    tout = torch.empty(1000)
    _add[(8, )](tx, ty, tout, 1000, BLOCK=128)
    assert torch.equal(tout, tx + ty)
    # a non-contiguous view: the kernel sees its data pointer and strides, as when compiled
    t2 = torch.arange(2000, dtype=torch.float32)[::2]
    tout2 = torch.empty(1000)
    _add[(8, )](t2, t2, tout2, 1000, BLOCK=128)   # reads every other element of t2's span
    assert torch.equal(tout2, 2 * torch.arange(1000, dtype=torch.float32))


def test_the_per_kernel_switch():
    from tritium import knobs
    with knobs.runtime.scope():
        knobs.runtime.interpret = False
        _add.interpret = True
        try:
            x = np.ones(64, np.float32)
            out = np.zeros(64, np.float32)
            assert _add[(1, )](x, x, out, 64, BLOCK=64) is None   # interpreted launches return no kernel
            np.testing.assert_array_equal(out, 2 * x)
        finally:
            _add.interpret = False


@triton.autotune(configs=[triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 128}, num_warps=8)], key=["n"])
@triton.jit
def _tuned(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 3, mask=offs < n)


@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def _even(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(out_ptr + offs, tl.load(x_ptr + offs) + 1)
    else:
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 2, mask=offs < n)


def test_autotune_and_heuristics(interpret):
    x = np.arange(1000, dtype=np.float32)
    out = np.zeros_like(x)
    _tuned[lambda meta: (triton.cdiv(1000, meta["BLOCK"]), )](x, out, 1000)
    np.testing.assert_array_equal(out, 3 * x)
    assert _tuned.best_config.kwargs["BLOCK"] in (32, 128)
    _even[(8, )](x, out, 1000, BLOCK=128)
    np.testing.assert_array_equal(out, x + 2)
    x2 = np.arange(1024, dtype=np.float32)
    out2 = np.zeros_like(x2)
    _even[(8, )](x2, out2, 1024, BLOCK=128)
    np.testing.assert_array_equal(out2, x2 + 1)


@triton.jit
def _pick_larger(a, ia, b, ib):
    if a > b:          # control flow on the combined values: the interpreter combines element by element
        return a, ia
    return b, ib


@triton.jit
def _argmax_user(x_ptr, out_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    v, i = tl.reduce((x, tl.arange(0, N)), 0, _pick_larger)
    tl.store(out_ptr, i)
    tl.store(out_ptr + 1, v.to(tl.int32))


@triton.jit
def _combine_add(a, b):
    return a + b


@triton.jit
def _scan_user(x_ptr, out_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.store(out_ptr + tl.arange(0, N), tl.associative_scan(x, 0, _combine_add, reverse=True))


def test_user_combine_functions(interpret):
    x = np.array([3, 9, 1, 9, 4, 0, 2, 8], np.int32)
    out = np.zeros(2, np.int32)
    _argmax_user[(1, )](x, out, 8)
    assert out.tolist() == [3, 9]       # ties keep the later index: `a > b` picks b on equality
    s = np.zeros(8, np.int32)
    _scan_user[(1, )](x, s, 8)
    np.testing.assert_array_equal(s, np.cumsum(x[::-1])[::-1])


@triton.jit
def _clip_scalar(v, lo):
    if v < lo:
        return lo
    return v


@triton.jit
def _mapped(x_ptr, out_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.store(out_ptr + tl.arange(0, N), tl.map_elementwise(_clip_scalar, x, 0.0))


def test_map_elementwise_with_branches(interpret):
    x = np.array([-2, 3, -1, 5], np.float32)
    out = np.zeros(4, np.float32)
    _mapped[(1, )](x, out, 4)
    np.testing.assert_array_equal(out, np.maximum(x, 0))


@triton.jit
def _carried(x_ptr, out_ptr, n):
    total = 0                      # becomes an int32 tensor in the run-time loop, as when compiled
    small = tl.load(x_ptr)         # an int8
    for _ in range(n):
        total += small             # int32 + int8 stays int32: 100 * 3 does not wrap at 8 bits
    tl.store(out_ptr, total.to(tl.int64))
    flag = 0
    if n > 2:
        flag = 1
    tl.store(out_ptr + 1, flag.to(tl.int64) * 7)


def test_run_time_control_flow_makes_tensors(interpret):
    x = np.array([100], np.int8)
    out = np.zeros(2, np.int64)
    _carried[(1, )](x, out, 3)
    assert out.tolist() == [300, 7]


@triton.jit
def _semantics(x_ptr, u_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    u = tl.load(u_ptr + offs)
    tl.store(out_ptr + offs, x // 3)                       # C division: truncates toward zero
    tl.store(out_ptr + N + offs, x % 3)                    # C remainder: the sign of the dividend
    tl.store(out_ptr + 2 * N + offs, (x * 1000000000).to(tl.int32))       # int32 wraps
    tl.store(out_ptr + 3 * N + offs, (u > 5).to(tl.int32))                # unsigned comparison
    both = (x > 0) and (u > 5)                                            # `and` on tensors: elementwise
    tl.store(out_ptr + 4 * N + offs, both.to(tl.int32))
    m = tl.reshape(offs, (2, N // 2)).T
    tl.store(out_ptr + 5 * N + tl.reshape(m, (N, )), offs)


def test_integer_semantics_are_the_compilers(interpret):
    x = np.array([-7, -1, 0, 5, 7, 3, -4, 9], np.int32)
    u = np.array([1, 2**32 - 1, 6, 0, 7, 5, 10, 3], np.uint32)
    out = np.zeros(6 * 8, np.int32)
    _semantics[(1, )](x, u, out, 8)
    o = out.reshape(6, 8)
    np.testing.assert_array_equal(o[0], np.trunc(x / 3).astype(np.int32))
    np.testing.assert_array_equal(o[1], np.fmod(x, 3))
    np.testing.assert_array_equal(o[2], (x.astype(np.int64) * 1000000000).astype(np.int32))
    np.testing.assert_array_equal(o[3], (u > 5).astype(np.int32))
    np.testing.assert_array_equal(o[4], ((x > 0) & (u > 5)).astype(np.int32))
    np.testing.assert_array_equal(o[5], np.arange(8).reshape(2, 4).T.reshape(-1).argsort())


_SCALE = tl.constexpr(3)


def test_globals_and_closures(interpret):
    factor = 2

    @triton.jit
    def helper(v):
        return v * _SCALE

    @triton.jit
    def kernel(out_ptr, N: tl.constexpr):
        offs = tl.arange(0, N)
        tl.store(out_ptr + offs, helper(offs) + factor)

    out = np.zeros(8, np.int32)
    kernel[(1, )](out, 8)
    np.testing.assert_array_equal(out, np.arange(8) * 3 + 2)


def _plain(v):
    return v


@triton.jit
def _calls_plain(x_ptr):
    tl.store(x_ptr, _plain(1.0))


@triton.jit
def _uses_break(x_ptr, n):
    for i in range(n):
        if i > 2:
            break
        tl.store(x_ptr + i, 1.0)


def test_what_does_not_compile_does_not_interpret(interpret):
    x = np.zeros(8, np.float32)
    with pytest.raises(triton.CompilationError, match="cannot call the Python function `_plain`"):
        _calls_plain[(1, )](x)
    with pytest.raises(triton.CompilationError, match=r"(?s)for i in range\(n\):\n.*break.*\n.*\^+\n.*"
                                                      "`break` is not supported"):
        _uses_break[(1, )](x, 5)
