"""Binary operators on every dtype pair that matters: Triton's promotion rules (checked with
``tl.static_assert`` on the result type) and results (checked bit for bit against numpy)."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl

from .reference import ALL, BF16_FP8, DTYPES, FP8, arg, assert_ulp, decode, encode, random

N = 16
ARITH = ("add", "sub", "mul", "truediv", "floordiv", "mod")
CMP = ("lt", "le", "gt", "ge", "eq", "ne")
BIT = ("and", "or", "xor", "shl", "shr")
MINMAX = ("minimum", "maximum")


@tl.constexpr_function
def _uint_of(bits):
    return {1: tl.int1, 8: tl.uint8, 16: tl.uint16, 32: tl.uint32, 64: tl.uint64}[bits]


@triton.jit
def _apply(x, y, OP: tl.constexpr):
    if OP == "add":
        z = x + y
    elif OP == "sub":
        z = x - y
    elif OP == "mul":
        z = x * y
    elif OP == "truediv":
        z = x / y
    elif OP == "floordiv":
        z = x // y
    elif OP == "mod":
        z = x % y
    elif OP == "lt":
        z = x < y
    elif OP == "le":
        z = x <= y
    elif OP == "gt":
        z = x > y
    elif OP == "ge":
        z = x >= y
    elif OP == "eq":
        z = x == y
    elif OP == "ne":
        z = x != y
    elif OP == "and":
        z = x & y
    elif OP == "or":
        z = x | y
    elif OP == "xor":
        z = x ^ y
    elif OP == "shl":
        z = x << y
    elif OP == "shr":
        z = x >> y
    elif OP == "minimum":
        z = tl.minimum(x, y)
    else:
        z = tl.maximum(x, y)
    return z


@triton.jit
def _binary(x_ptr, y_ptr, o_ptr, N: tl.constexpr, OPS: tl.constexpr, TYPES: tl.constexpr,
            SCALAR: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    if SCALAR is None:
        y = tl.load(y_ptr + offs)
    else:
        y: tl.constexpr = SCALAR  # annotated: a plain `y = SCALAR` is an int32/fp32 tensor, as in Triton
    for k in tl.static_range(len(OPS)):
        z = _apply(x, y, OPS[k])
        tl.static_assert(str(z.dtype) == TYPES[k], f"{OPS[k]}: expected {TYPES[k]}")
        bits = z.to(_uint_of(z.dtype.primitive_bitwidth), bitcast=True)
        tl.store(o_ptr + k * N + offs, bits.to(tl.uint64))


# -- the reference: Triton's promotion rules, written out --------------------------------------------------

_RANK = {"int1": 0, "int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "int32": 3, "uint32": 3, "int64": 4,
         "uint64": 4}


def _int_promote(a: str, b: str) -> str:
    da, db = DTYPES[a], DTYPES[b]
    if (da.kind == "int") == (db.kind == "int"):
        return a if _RANK[a] > _RANK[b] else b
    u, s = (a, b) if da.kind != "int" else (b, a)
    return u if _RANK[u] >= _RANK[s] else s


def promote(a: str, b: str, div_or_mod: bool = False, b_scalar: bool = False) -> str:
    da, db = DTYPES[a], DTYPES[b]
    kind = {"bool": 0, "int": 1, "uint": 1, "float": 2}
    if b_scalar and kind[db.kind] <= kind[da.kind]:
        return "float32" if div_or_mod and a in ("float16", "bfloat16") else a
    for wide in ("float64", "float32"):
        if wide in (a, b):
            return wide
    if "float16" in (a, b):
        return "float32" if div_or_mod else "float16"
    if a == b == "bfloat16":
        return "float32" if div_or_mod else "bfloat16"
    if "bfloat16" in (a, b):
        return "float32"
    if a in FP8 and b in FP8:
        return a if a == b else "float16"
    if da.is_float or db.is_float:
        raise TypeError("no promotion")
    return _int_promote(a, b)


_NAMES = {"int1": "int1", "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64", "uint8": "uint8",
          "uint16": "uint16", "uint32": "uint32", "uint64": "uint64", "float16": "fp16", "bfloat16": "bf16",
          "float32": "fp32", "float64": "fp64", "float8e4nv": "fp8e4nv", "float8e5": "fp8e5",
          "float8e4b8": "fp8e4b8", "float8e5b16": "fp8e5b16", "float8e4b15": "fp8e4b15"}


def _valid_ops(a: str, b: str, b_scalar: bool) -> list[str]:
    da, db = DTYPES[a], DTYPES[b]
    try:
        p = promote(a, b, b_scalar=b_scalar)
    except TypeError:
        return []
    ops = list(CMP) + list(MINMAX)
    if p == "int1":
        return ops + ["and", "or", "xor"]
    ops += ["add", "sub", "mul"]
    same_sign = da.kind == db.kind or b_scalar
    if (not (a in FP8 or b in FP8) or p not in FP8) and (same_sign or not DTYPES[p].is_int):
        ops.append("truediv")
    if DTYPES[p].is_int:
        if same_sign:
            ops += ["floordiv", "mod"]
        ops += list(BIT)
    elif p not in FP8:
        ops.append("mod")
    return ops


def _as_values(bits: np.ndarray, name: str) -> np.ndarray:
    v = decode(bits, name)
    return v.astype(np.float64) if DTYPES[name].is_float else v


def _reference(op: str, x: np.ndarray, a: str, y, b: str, b_scalar: bool) -> tuple[str, np.ndarray]:
    """(result dtype name, stored bits) of ``x op y`` as Triton computes it."""
    divmod_ = op in ("truediv", "floordiv", "mod")
    p = promote(a, b, divmod_, b_scalar)
    if op == "truediv" and DTYPES[p].is_int:
        p = "float32"
    xv = _as_values(x, a)
    yv = np.full(xv.shape, y, np.float64 if isinstance(y, float) else np.int64) if b_scalar else _as_values(y, b)
    if DTYPES[p].is_float:
        ct = np.float64 if p == "float64" else np.float16 if p == "float16" else np.float32
        xs, ys = xv.astype(ct), yv.astype(ct)
        if p in BF16_FP8 and (not DTYPES[a].native or not DTYPES[b].native or b_scalar):
            xs, ys = xv.astype(np.float32), yv.astype(np.float32)
    else:
        ct = DTYPES[p].storage
        xs, ys = xv.astype(ct), yv.astype(ct)
    with np.errstate(all="ignore"):
        if op in CMP:
            fn = {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal, "eq": np.equal,
                  "ne": np.not_equal}[op]
            return "int1", fn(xs, ys).astype(np.uint8)
        if op == "floordiv":
            q = xs // ys
            fix = (xs % ys != 0) & ((xs < 0) != (ys < 0))
            r = (q + fix).astype(ct)
        elif op == "mod":
            if DTYPES[p].is_int:
                r = (xs - ys * ((xs // ys) + ((xs % ys != 0) & ((xs < 0) != (ys < 0))))).astype(ct)
            else:
                r = np.fmod(xs, ys)
        elif op in ("shl", "shr"):
            fn = np.left_shift if op == "shl" else np.right_shift
            if op == "shr" and DTYPES[a].kind == "int" and DTYPES[p].kind == "uint":
                # a signed left operand shifts arithmetically even when promoted to unsigned (Triton)
                st = np.dtype(f"i{DTYPES[p].bits // 8}")
                r = fn(xs.view(st), ys.astype(st)).view(ct)
            else:
                r = fn(xs, ys)
        elif op in ("minimum", "maximum"):
            r = (np.fmin if op == "minimum" else np.fmax)(xs, ys)
        else:
            fn = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.divide, "and": np.bitwise_and,
                  "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
            r = fn(xs, ys)
    if p == "int1":
        return p, np.asarray(r).astype(np.uint8)
    return p, np.asarray(encode(np.asarray(r), p)).view(np.dtype(f"u{max(1, DTYPES[p].bits // 8)}"))


def _data(name: str, rng: np.random.Generator, divisor: bool) -> np.ndarray:
    if name == "float8e4b15":
        lo, hi = (0.5, 1.0) if divisor else (-0.8, 0.8)
    elif name in FP8:
        lo, hi = (1, 6) if divisor else (-6, 6)    # products stay finite in every float8 format
    elif DTYPES[name].kind == "uint":
        lo, hi = (1, 7) if divisor else (0, 60)
    else:
        lo, hi = (1, 7) if divisor else (-60, 60)
    return random(name, N, rng, lo, hi, nonzero=divisor)


def _check(backend, rng, a: str, b: str, scalar=None) -> None:
    backend.require_dtype(a, b)
    b_scalar = scalar is not None
    ops = _valid_ops(a, b, b_scalar)
    x = _data(a, rng, False)
    y = None if b_scalar else _data(b, rng, True)
    types = []
    for op in ops:
        t, _ = _reference(op, x, a, scalar if b_scalar else y, b, b_scalar)
        types.append(_NAMES[t])
    out = np.zeros((len(ops), N), np.uint64)
    yarg = arg(y, b) if y is not None else x
    _binary[(1, )](arg(x, a), yarg, out, N, tuple(ops), tuple(types), scalar)
    for k, op in enumerate(ops):
        t, want = _reference(op, x, a, scalar if b_scalar else y, b, b_scalar)
        got = out[k].astype(want.dtype)
        if op == "truediv" and t == "float32":
            # Triton's float32 `/` is not correctly rounded on GPUs (div.full.f32: 2 ulp); tl.div_rn is
            assert_ulp(got.view(np.float32), want.view(np.float32), 2, err_msg=f"{a} {op} {b}")
        elif DTYPES[t].is_float and DTYPES[t].native:
            got_v = got.view(DTYPES[t].storage)
            want_v = want.view(DTYPES[t].storage)
            np.testing.assert_array_equal(got_v, want_v, err_msg=f"{a} {op} {b}")
        else:
            np.testing.assert_array_equal(got, want, err_msg=f"{a} {op} {b}")


@pytest.mark.parametrize("dtype", ALL)
def test_same_dtype(backend, rng, dtype):
    _check(backend, rng, dtype, dtype)


_MIXED = [("int8", "int32"), ("int16", "uint16"), ("uint8", "int8"), ("int32", "uint32"), ("int64", "uint32"),
          ("uint64", "int16"), ("int32", "float16"), ("int64", "bfloat16"), ("uint8", "float32"),
          ("float16", "bfloat16"), ("float16", "float32"), ("bfloat16", "float32"), ("float32", "float64"),
          ("int8", "float64"), ("int1", "int32"), ("int1", "float32"), ("float8e4nv", "float8e5"),
          ("float8e5", "float16"), ("float8e4nv", "bfloat16"), ("float8e4b15", "float32")]


@pytest.mark.parametrize("a,b", _MIXED)
def test_mixed_dtypes(backend, rng, a, b):
    _check(backend, rng, a, b)


@pytest.mark.parametrize("dtype,scalar", [("int8", 3), ("uint16", 5), ("int32", 7), ("int64", 2), ("float16", 2),
                                          ("bfloat16", 3), ("float32", 2.5), ("float64", 3), ("uint32", 3),
                                          ("int16", 1.5), ("float8e5", 2)])
def test_python_scalar_operand(backend, rng, dtype, scalar):
    b = "float32" if isinstance(scalar, float) else "int32"
    _check(backend, rng, dtype, b, scalar)
