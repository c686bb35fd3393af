"""Control flow and functions: ``tl.range`` with its keyword arguments, ``tl.static_range``, while loops and
``tl.condition``, run-time if/else with early returns, @jit device functions, tuples, ``map_elementwise``,
compile-time evaluation."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl


@triton.jit
def _loops(o_ptr, n, step):
    acc = 0
    for i in tl.range(0, n, 1, num_stages=2, loop_unroll_factor=2, disallow_acc_multi_buffer=True, flatten=True,
                      warp_specialize=False, disable_licm=True):
        acc += i
    tl.store(o_ptr, acc)
    down = 0
    for i in range(n, 0, -step):          # negative run-time steps count down
        down += i
    tl.store(o_ptr + 1, down)
    stat = 0
    for i in tl.static_range(1, 5, 2):    # unrolled at compile time: i is a constexpr
        tl.static_assert(i % 2 == 1)
        stat += i * 100
    tl.store(o_ptr + 2, stat)
    k = 0
    j = 0
    while tl.condition(k < n, disable_licm=True):
        k += 3
        j += 1
    tl.store(o_ptr + 3, j)
    m = 1
    while m < 1000:
        m *= 2
    tl.store(o_ptr + 4, m)
    nested = 0
    for a in range(n):
        for b in range(a):
            if (a + b) % 3 == 0:
                nested += 1
            else:
                nested -= 1
    tl.store(o_ptr + 5, nested)
    empty = 7
    for i in range(n, n):
        empty += 1
    tl.store(o_ptr + 6, empty)
    big = tl.full((), 0, tl.int64)
    for i in range(0, 3 * n, n):
        big += i.to(tl.int64) * (2**33)
    tl.store(o_ptr + 7, (big >> 33).to(tl.int32))


@pytest.mark.parametrize("n,step", [(0, 1), (1, 2), (10, 3)])
def test_loops(backend, n, step):
    out = np.zeros(8, np.int32)
    _loops[(1, )](out, n, step)
    nested = sum(1 if (a + b) % 3 == 0 else -1 for a in range(n) for b in range(a))
    assert out.tolist() == [sum(range(n)), sum(range(n, 0, -step)), 400, -(-n // 3), 1024, nested, 7,
                            (0 + n + 2 * n) if n else 0]


@triton.jit
def _sign(x):
    if x > 0:
        return 1
    elif x < 0:
        return -1
    return 0


@triton.jit
def _clipped(x, lo: tl.constexpr, hi: tl.constexpr = 10):
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


@triton.jit
def _stats(v):
    return tl.sum(v, 0), tl.max(v, 0), (tl.min(v, 0), v.shape[0])


@triton.jit(noinline=True)
def _twice(x):
    return x * 2


@triton.jit
def _functions(x_ptr, o_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    v = tl.load(x_ptr + offs)
    s, mx, (mn, count) = _stats(v)
    tl.static_assert(_stats(v)[2][1] == N)  # `count` itself is a tensor: names bound by `=` hold tensors
    tl.store(o_ptr + 0, s)
    tl.store(o_ptr + 1, mx)
    tl.store(o_ptr + 2, mn)
    first = tl.load(x_ptr)
    tl.store(o_ptr + 3, _sign(first))
    tl.store(o_ptr + 4, _clipped(first, -3))
    tl.store(o_ptr + 5, _clipped(first, -3, hi=2))
    tl.store(o_ptr + 6, _twice(first))
    t = (first, first + 1, first + 2)
    total = 0
    for item in t:
        total += item
    tl.store(o_ptr + 7, total + t[1] * len(t))
    lo, hi = min(first, 1), max(first, 1, -5)
    tl.store(o_ptr + 8, lo * 100 + hi)


@pytest.mark.parametrize("first", [-7, 0, 5, 20])
def test_device_functions_and_tuples(backend, first):
    N = 8
    x = np.arange(N, dtype=np.int32) - 3
    x[0] = first
    out = np.zeros(9, np.int32)
    _functions[(1, )](x, out, N)
    clip = lambda v, lo, hi: lo if v < lo else (hi if v > hi else v)  # noqa: E731
    assert out.tolist() == [x.sum(), x.max(), x.min(), int(np.sign(first)), clip(first, -3, 10),
                            clip(first, -3, 2), 2 * first, 3 * first + 3 + 3 * (first + 1),
                            min(first, 1) * 100 + max(first, 1)]


@triton.jit
def _shifted(x, OFFS: tl.constexpr, K: tl.constexpr):
    return x + OFFS * K


@triton.jit(noinline=True)
def _shifted_noinline(x, OFFS: tl.constexpr):
    return x - OFFS


@triton.jit
def _constexpr_params_take_tensors(o_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    # Triton ignores a device function's tl.constexpr annotation when a run-time tensor is passed
    # (its fused-attention tutorial passes block offsets that way); compile-time values stay constant
    tl.store(o_ptr + offs, _shifted(offs, offs, 3) + _shifted(offs, 2, 10) + _shifted_noinline(offs, offs * 2))


def test_constexpr_annotated_device_params_take_tensors(backend):
    N = 16
    out = np.zeros(N, np.int32)
    _constexpr_params_take_tensors[(1, )](out, N)
    r = np.arange(N)
    assert out.tolist() == ((r + 3 * r) + (r + 20) + (r - 2 * r)).tolist()


@triton.jit
def _tuple_args(o_ptr, x, PAIR: tl.constexpr, SCALE: tl.constexpr):
    a, b = PAIR
    t = (x, x * 2, (x * 3, PAIR))
    tl.store(o_ptr, (a + b) * SCALE + t[2][0])
    tl.store(o_ptr + 1, PAIR[0] - t[2][1][1] + t[1])
    tl.static_assert(len(t) == 3 and len(t[2]) == 2)


def test_tuples(backend):
    out = np.zeros(2, np.int32)
    _tuple_args[(1, )](out, 5, (7, 3), 2)
    assert out.tolist() == [35, 14]


@triton.jit
def _piecewise(x, k):
    if x < 0:
        y = x * k
    else:
        y = tl.sqrt(x)
    return y


@triton.jit
def _swap_pack(a0, a1, b0, b1):
    return b0, b1, a0, a1


@triton.jit
def _mapped(x_ptr, y_ptr, o_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(o_ptr + offs, tl.map_elementwise(_piecewise, x, 3.0))
    p, q = tl.map_elementwise(_swap_pack, x, y, pack=2)
    tl.store(o_ptr + N + offs, p)
    tl.store(o_ptr + 2 * N + offs, q)


def test_map_elementwise(backend, rng):
    N = 32
    x = rng.uniform(-4, 4, N).astype(np.float32)
    y = rng.uniform(-4, 4, N).astype(np.float32)
    out = np.zeros((3, N), np.float32)
    _mapped[(1, )](x, y, out, N)
    np.testing.assert_allclose(out[0], np.where(x < 0, x * 3, np.sqrt(np.abs(x))), rtol=1e-6)
    np.testing.assert_array_equal(out[1], y)
    np.testing.assert_array_equal(out[2], x)


CONST = tl.constexpr(5)


@tl.constexpr_function
def _plus_one(v):
    return v + 1


@triton.jit
def _compile_time(o_ptr, FLAG: tl.constexpr, NAME: tl.constexpr):
    v: tl.constexpr = _plus_one(CONST)
    tl.static_assert(v == 6)
    if FLAG and NAME == "b":
        r = 1
    elif FLAG or NAME.startswith("x"):
        r = 2
    else:
        r = 3
    tl.static_print("compile-time value:", v, NAME)
    w = 10 if FLAG else 20
    tl.store(o_ptr, r * 100 + w + CONST)


@pytest.mark.parametrize("flag,name,want", [(True, "b", 115), (True, "a", 215), (False, "xy", 225), (False, "a", 325)])
def test_compile_time_evaluation(backend, capsys, flag, name, want):
    out = np.zeros(1, np.int32)
    _compile_time[(1, )](out, flag, name)
    assert out[0] == want
    assert f"compile-time value: 6 {name}" in capsys.readouterr().out


@triton.jit
def _scalar_if(x_ptr, o_ptr, n):
    v = tl.load(x_ptr)
    if v > 0:
        a = v * 2
        b = 1.5
    else:
        a = v - 1
        b = 2.5
    c = a if n > 3 else -a
    tl.store(o_ptr, a + c)
    tl.store(o_ptr + 1, b.to(tl.int32))
    if n == 0:
        return
    tl.store(o_ptr + 2, n)


@pytest.mark.parametrize("v,n", [(3, 5), (-2, 0), (0, 2)])
def test_runtime_if(backend, v, n):
    x = np.array([v], np.int32)
    out = np.zeros(3, np.int32)
    _scalar_if[(1, )](x, out, n)
    a = v * 2 if v > 0 else v - 1
    c = a if n > 3 else -a
    assert out.tolist() == [a + c, 1 if v > 0 else 2, n]


@triton.jit
def _capability(o_ptr):
    if tl.target_info.has_capability("fp64"):
        tl.store(o_ptr, 1)
    else:
        tl.store(o_ptr, 2)


def test_target_info(backend):
    out = np.zeros(1, np.int32)
    _capability[(1, )](out)
    assert out[0] == (1 if backend.has("fp64") else 2)
    assert tl.target_info.current_target() is not None
