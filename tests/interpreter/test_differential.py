"""The interpreter against the compiled CPU backend, bit for bit, wherever the CPU backend is exact
(everything but transcendental functions, whose last bit differs, and the order of a dot's additions)."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl

ALL_BINARY = ("add", "sub", "mul", "div", "floordiv", "mod", "and", "or", "xor", "shl", "shr", "lt", "le", "eq",
              "ne", "gt", "min", "max", "minall", "maxall", "where", "umulhi", "fma", "clamp", "addc", "subc", "mulc")


@triton.jit
def _binary(x_ptr, y_ptr, o_ptr, N: tl.constexpr, OPS: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    for k in tl.static_range(len(OPS)):
        op: tl.constexpr = OPS[k]
        if op == "add":
            r = x + y
        elif op == "sub":
            r = x - y
        elif op == "mul":
            r = x * y
        elif op == "div":
            r = x / y
        elif op == "floordiv":
            r = x // y
        elif op == "mod":
            r = x % y
        elif op == "and":
            r = x & y
        elif op == "or":
            r = x | y
        elif op == "xor":
            r = x ^ y
        elif op == "shl":
            r = x << (y & 7)
        elif op == "shr":
            r = x >> (y & 7)
        elif op == "lt":
            r = x < y
        elif op == "le":
            r = x <= y
        elif op == "eq":
            r = x == y
        elif op == "ne":
            r = x != y
        elif op == "gt":
            r = x > y
        elif op == "min":
            r = tl.minimum(x, y)
        elif op == "max":
            r = tl.maximum(x, y)
        elif op == "minall":
            r = tl.minimum(x, y, propagate_nan=tl.PropagateNan.ALL)
        elif op == "maxall":
            r = tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL)
        elif op == "where":
            r = tl.where(x > y, x, y)
        elif op == "umulhi":
            r = tl.umulhi(x, y)
        elif op == "fma":
            r = tl.fma(x, y, x)
        elif op == "clamp":
            r = tl.clamp(x, -tl.abs(y), tl.abs(y))
        elif op == "addc":
            r = x + 3
        elif op == "subc":
            r = 7 - x
        else:
            r = x * 2.5
        tl.store(o_ptr + k * N + offs, r.to(tl.float64))


def _data(dtype: str, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        v = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        v[: n // 2] = rng.integers(max(info.min, -50), 50, n // 2).astype(dt)
        return v
    v = (rng.standard_normal(n) * 10.0 ** rng.integers(-4, 4, n)).astype(dt)
    v[:8] = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0]).astype(dt)
    return v


@pytest.mark.parametrize("dtype", ["int8", "int32", "uint32", "int64", "float16", "float32", "float64"])
def test_elementwise(kit, dtype):
    is_int = np.dtype(dtype).kind in "iu"
    ops = [op for op in ALL_BINARY if (op not in ("umulhi", "shl", "shr", "and", "or", "xor", "floordiv") or is_int)
           and (op not in ("fma", "clamp", "minall", "maxall", "mulc") or not is_int)
           and (op != "umulhi" or np.dtype(dtype).itemsize >= 4)]
    n = 256
    x, y = _data(dtype, n, 0), _data(dtype, n, 1)
    if is_int:
        y = np.where(y == 0, 1, y).astype(dtype)  # division by zero: the CPU traps
    out = np.zeros(len(ops) * n, np.float64)
    kit.assert_same_as_compiled(_binary, (1, ), x, y, out, n, tuple(ops))


@tl.constexpr_function
def _narrowing(src, dst):
    return src.is_floating() and dst.is_floating() and dst.primitive_bitwidth < src.primitive_bitwidth


@tl.constexpr_function
def _bits_of(dst):
    return {1: tl.int8, 8: tl.int8, 16: tl.int16, 32: tl.int32, 64: tl.int64}[dst.primitive_bitwidth]


@triton.jit
def _casts(x_ptr, o_ptr, N: tl.constexpr, DSTS: tl.constexpr, RND: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    for k in tl.static_range(len(DSTS)):
        name: tl.constexpr = DSTS[k]
        dst: tl.constexpr = getattr(tl, name)
        if RND == "rtz" and _narrowing(x.dtype, dst):
            y = x.to(dst, fp_downcast_rounding="rtz")
        else:
            y = x.to(dst)
        bits = y.to(_bits_of(dst), bitcast=dst.primitive_bitwidth != 1)
        tl.store(o_ptr + k * N + offs, bits.to(tl.int64))


_DSTS = ("int1", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
         "float64")
_FP8 = ("float8e4nv", "float8e5", "float8e4b8", "float8e5b16", "float8e4b15")


@pytest.mark.parametrize("src,rnd", [("float32", ""), ("float32", "rtz"), ("float64", ""), ("float64", "rtz"),
                                     ("float16", "rtz"), ("int32", ""), ("uint64", ""), ("int8", "")])
def test_casts(kit, src, rnd):
    # (to bfloat16 the compiled backend cannot convert yet; test_rounding checks those against torch)
    dsts = _DSTS + (_FP8 if np.dtype(src).kind == "f" and src != "float64" else ())
    n = 256
    x = _data(src, n, 2)
    if np.dtype(src).kind == "f":
        special = np.array([65504, 65520, 448, 464, 240, 248, 57344, 61440, 1.875, 1e-7, 3e38, -3e38, 2**31, -2**31,
                            2**63, 2**64, 1e20, -1e20, 0.5, 1.5, 2.5, -0.5, 255.5, 256, -129, 1e-40, 6e-8, 3e-5,
                            127.5, -128.5, 4294967295.5, 9.2e18], dtype=np.float64)
        with np.errstate(over="ignore"):  # (float16 overflows to inf: wanted)
            x[8:40] = special.astype(src)
    out = np.zeros(len(dsts) * n, np.int64)
    kit.assert_same_as_compiled(_casts, (1, ), x, out, n, dsts, rnd)


@triton.jit
def _reductions(x_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rows * N + cols)
    base = 0
    for axis in tl.static_range(2):
        n_out: tl.constexpr = N if axis == 0 else M
        o = tl.arange(0, n_out)
        tl.store(o_ptr + base + o, tl.sum(x, axis).to(tl.float64))
        tl.store(o_ptr + base + n_out + o, tl.max(x, axis).to(tl.float64))
        tl.store(o_ptr + base + 2 * n_out + o, tl.min(x, axis).to(tl.float64))
        tl.store(o_ptr + base + 3 * n_out + o, tl.argmax(x, axis).to(tl.float64))
        tl.store(o_ptr + base + 4 * n_out + o, tl.argmin(x, axis).to(tl.float64))
        base += 5 * n_out
        c = tl.cumsum(x, axis)
        tl.store(o_ptr + base + rows * N + cols, c.to(tl.float64))
        base += M * N
        c = tl.cumprod(x, axis, reverse=True)
        tl.store(o_ptr + base + rows * N + cols, c.to(tl.float64))
        base += M * N
    tl.store(o_ptr + base + rows * N + cols, tl.sort(x, descending=True).to(tl.float64))


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "int8", "float64"])
def test_reductions_and_scans(kit, dtype):
    M, N = 8, 32
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((M, N)) * (30 if np.dtype(dtype).kind == "f" else 3)).astype(dtype)
    x[0, :4] = x[0, 4]   # ties for argmax/argmin
    out = np.zeros(5 * (N + M) + 5 * M * N, np.float64)
    if np.dtype(dtype).kind != "f":
        kit.assert_same_as_compiled(_reductions, (1, ), x, out, M, N)
        return
    compiled = kit.run(_reductions, (1, ), x, out, M, N, interpret=False)[1]
    interpreted = kit.run(_reductions, (1, ), x, out, M, N)[1]
    # float sums and products depend on the order of the additions, which the CPU backend chooses for its
    # vector units; max, min, argmax, argmin and sort are exact
    exact = np.ones(out.size, bool)
    base = 0
    for n_out in (N, M):
        exact[base:base + n_out] = False                            # sum
        exact[base + 5 * n_out:base + 5 * n_out + 2 * M * N] = False  # cumsum, cumprod
        base += 5 * n_out + 2 * M * N
    assert kit.same_bits(compiled[exact], interpreted[exact])
    tol = 1e-2 if dtype == "float16" else 1e-5
    np.testing.assert_allclose(interpreted[~exact], compiled[~exact], rtol=tol, atol=tol)


@triton.jit
def _atomics(p_ptr, v_ptr, i_ptr, o_ptr, N: tl.constexpr, OPS: tl.constexpr):
    offs = tl.program_id(0) * N + tl.arange(0, N)
    v = tl.load(v_ptr + offs)
    i = tl.load(i_ptr + offs)
    m = offs % 3 != 0
    for k in tl.static_range(len(OPS)):
        op: tl.constexpr = OPS[k]
        p = p_ptr + k * 1024 + i
        if op == "add":
            r = tl.atomic_add(p, v, mask=m)
        elif op == "max":
            r = tl.atomic_max(p, v, mask=m)
        elif op == "min":
            r = tl.atomic_min(p, v, mask=m)
        elif op == "xchg":
            r = tl.atomic_xchg(p, v, mask=m)
        elif op == "and":
            r = tl.atomic_and(p, v, mask=m)
        else:
            r = tl.atomic_cas(p, v, v + 1)
        tl.store(o_ptr + k * 1024 + offs, r)


@pytest.mark.parametrize("dtype", ["int32", "uint32", "float32", "int64"])
def test_atomics_without_collisions(kit, dtype):
    # lanes at distinct addresses: every result is fixed; with collisions only the order of the CPU's threads
    # decides which program sees which old value (test_batching checks the interpreter's program order)
    is_float = np.dtype(dtype).kind == "f"
    ops = ("add", "max", "min", "xchg") + (() if is_float else ("and", "cas"))
    N, G = 64, 4
    rng = np.random.default_rng(4)
    p = (rng.standard_normal(1024 * len(ops)) * 10).astype(dtype) if is_float else \
        rng.integers(0, 100, 1024 * len(ops)).astype(dtype)
    v = (rng.standard_normal(N * G) * 10).astype(dtype) if is_float else rng.integers(0, 100, N * G).astype(dtype)
    idx = rng.permutation(1024)[: N * G].astype(np.int32)
    out = np.zeros(1024 * len(ops), dtype)
    kit.assert_same_as_compiled(_atomics, (G, ), p, v, idx, out, N, ops)


@triton.jit
def _dot(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, OUT: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b, out_dtype=OUT))


@pytest.mark.parametrize("dtype,out", [("int8", tl.int32), ("float16", tl.float32), ("float16", tl.float16),
                                       ("float64", tl.float64)])
def test_dot_inputs(kit, dtype, out):
    rng = np.random.default_rng(5)
    scale = 8 if dtype == "int8" else 1
    a = (rng.standard_normal((32, 16)) * scale).astype(dtype)
    b = (rng.standard_normal((16, 64)) * scale).astype(dtype)
    c = np.zeros((32, 64), {tl.int32: np.int32, tl.float32: np.float32, tl.float16: np.float16,
                            tl.float64: np.float64}[out])
    if dtype == "int8":
        kit.assert_same_as_compiled(_dot, (1, ), a, b, c, 32, 64, 16, out)   # integer sums are exact
        return
    compiled = kit.run(_dot, (1, ), a, b, c, 32, 64, 16, out, interpret=False)[2]
    interpreted = kit.run(_dot, (1, ), a, b, c, 32, 64, 16, out)[2]
    tol = 1e-2 if out == tl.float16 else 1e-5
    np.testing.assert_allclose(interpreted.astype(np.float64), compiled.astype(np.float64), rtol=tol, atol=tol)


@triton.jit
def _pick_larger(a, ia, b, ib):
    if a > b:
        return a, ia
    return b, ib


@triton.jit
def _control(x_ptr, o_ptr, n, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    v, i = tl.reduce((x, offs), 0, _pick_larger)
    tl.store(o_ptr, i)
    acc = 0
    k = 0
    while k < n:
        acc += k * 3
        k += 1
    tl.store(o_ptr + 1, acc)
    s = tl.zeros((N, ), tl.int32)
    for j in range(1, n, 2):
        s += tl.where(offs % j == 0, j, -1)
    tl.store(o_ptr + 2 + offs, s)


def test_control_flow(kit):
    x = np.array([3, 9, 1, 9, 4, 0, 2, 8], np.int32)
    out = np.zeros(10, np.int32)
    kit.assert_same_as_compiled(_control, (1, ), x, out, 7, 8)


@triton.jit
def _print_all(x_ptr, f_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    f = tl.load(f_ptr + offs)
    tl.device_print("ints", x, x.to(tl.uint8))
    tl.device_print("floats", f)
    tl.device_print("hex", x, f, hex=True)


def test_device_print_format(kit, capfd):
    x = np.array([0, -1, 7, 300], np.int32)
    f = np.array([0.5, -2.25, 1e10, np.inf], np.float32)
    outputs = []
    for interpret in (False, True):
        kit.run(_print_all, (2, ), x, f, 4, interpret=interpret)
        outputs.append(sorted(capfd.readouterr().out.strip().splitlines()))
    assert outputs[0] == outputs[1]
