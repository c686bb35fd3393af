"""Atomics: add, and, or, xor, xchg, max, min, cas, on scalars and blocks, with masks, ``sem`` and ``scope``,
under contention from many programs; each returns the old values."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl

from .reference import DTYPES, arg, decode, encode

_CAPS = {"int64": "int64-atomics", "uint64": "int64-atomics", "float32": "float-atomics",
         "float64": "float-atomics", "float16": "float-atomics", "bfloat16": "float-atomics"}


@triton.jit
def _contended(ptr, v_ptr, old_ptr, N: tl.constexpr, OP: tl.constexpr, SEM: tl.constexpr, SCOPE: tl.constexpr):
    """Every program applies its block of values to the same N addresses."""
    pid = tl.program_id(0)
    offs = tl.arange(0, N)
    v = tl.load(v_ptr + pid * N + offs)
    p = ptr + offs
    if OP == "add":
        old = tl.atomic_add(p, v, sem=SEM, scope=SCOPE)
    elif OP == "max":
        old = tl.atomic_max(p, v, sem=SEM, scope=SCOPE)
    elif OP == "min":
        old = tl.atomic_min(p, v, sem=SEM, scope=SCOPE)
    elif OP == "and":
        old = tl.atomic_and(p, v, sem=SEM, scope=SCOPE)
    elif OP == "or":
        old = tl.atomic_or(p, v, sem=SEM, scope=SCOPE)
    else:
        old = tl.atomic_xor(p, v, sem=SEM, scope=SCOPE)
    tl.store(old_ptr + pid * N + offs, old)


_INT_OPS = ["add", "max", "min", "and", "or", "xor"]


@pytest.mark.parametrize("dtype,op", [(d, o) for d in ("int32", "uint32", "int64", "uint64") for o in _INT_OPS] +
                         [(d, o) for d in ("float32", "float64") for o in ("add", "max", "min")] +
                         [("float16", "add"), ("bfloat16", "add")])
@pytest.mark.parametrize("sem,scope", [("acq_rel", "gpu")])
def test_atomic_rmw_contended(backend, rng, dtype, op, sem, scope):
    backend.require(_CAPS.get(dtype, ""))
    backend.require_dtype(dtype)
    P, N = 16, 32
    d = DTYPES[dtype]
    if d.is_int:
        info = np.iinfo(d.storage)
        v = rng.integers(max(info.min, -1000), min(info.max, 1000), (P, N)).astype(d.storage)
        x = rng.integers(max(info.min, -1000), min(info.max, 1000), N).astype(d.storage)
    else:
        # exactly representable sums: small integers
        v = rng.integers(-8, 8, (P, N)).astype(np.float32)
        x = rng.integers(-8, 8, N).astype(np.float32)
        if dtype == "bfloat16":
            v_bits, x_bits = encode(v, dtype), encode(x, dtype)
        else:
            v_bits, x_bits = v.astype(d.storage), x.astype(d.storage)
        v, x = v_bits, x_bits
    x0 = x.copy()
    old = np.zeros_like(v)
    _contended[(P, )](arg(x, dtype), arg(v, dtype), arg(old, dtype), N, op, sem, scope)
    vv, xv, ov = (decode(a, dtype).astype(np.float64 if d.is_float else object) for a in (v, x0, old))
    fn = {"add": lambda a, b: a + b, "max": max, "min": min, "and": lambda a, b: a & b, "or": lambda a, b: a | b,
          "xor": lambda a, b: a ^ b}[op]
    want = []
    for j in range(N):
        acc = xv[j]
        for p in range(P):
            acc = fn(acc, vv[p, j])
        want.append(acc)
    got = decode(x, dtype)
    if d.is_int:
        mask = (1 << d.bits) - 1
        want = [int(w) & mask for w in want]
        got = [int(g) & mask for g in got.astype(object)]
        assert got == want
    else:
        np.testing.assert_array_equal(np.asarray(got, np.float64), np.asarray(want, np.float64))
    # the old values form one chain x0 -> ... -> final: each program's old value plus its own value is
    # the state the next program saw, so {old + v} + {x0} and {old} + {final} are the same multiset
    if op == "add":
        wrap = (lambda t: int(t) & ((1 << d.bits) - 1)) if d.is_int else float
        fin = decode(x, dtype).astype(np.float64 if d.is_float else object)
        for j in range(N):
            after = sorted([wrap(ov[p, j] + vv[p, j]) for p in range(P)] + [wrap(xv[j])])
            before = sorted([wrap(ov[p, j]) for p in range(P)] + [wrap(fin[j])])
            assert after == before, f"lane {j}: the old values are not a serialization"


@triton.jit
def _masked_atomics(ptr, v_ptr, old_ptr, n, N: tl.constexpr, SEM: tl.constexpr):
    offs = tl.arange(0, N)
    v = tl.load(v_ptr + offs)
    m = offs < n
    old = tl.atomic_xchg(ptr + offs, v, mask=m, sem=SEM)
    tl.store(old_ptr + offs, old, mask=m)
    s = tl.atomic_add(ptr + N, 5, sem="relaxed", scope="cta")          # scalar form
    tl.store(old_ptr + N, s)


@pytest.mark.parametrize("sem", ["acquire", "release", "acq_rel", "relaxed"])
def test_atomic_xchg_masked_and_scalar(backend, rng, sem):
    N, n = 32, 20
    x = np.arange(N + 1, dtype=np.int32)
    v = rng.integers(100, 200, N).astype(np.int32)
    old = np.full(N + 1, -1, np.int32)
    _masked_atomics[(1, )](x, v, old, n, N, sem)
    np.testing.assert_array_equal(x[:n], v[:n])
    np.testing.assert_array_equal(x[n:N], np.arange(n, N))
    np.testing.assert_array_equal(old[:n], np.arange(n))
    assert (old[n:N] == -1).all()
    assert x[N] == N + 5 and old[N] == N


@triton.jit
def _spin_lock_counter(lock_ptr, count_ptr, ITERS: tl.constexpr):
    """A critical section built on atomic_cas: programs increment a plain counter under a lock."""
    for _ in range(ITERS):
        while tl.atomic_cas(lock_ptr, 0, 1, sem="acquire") != 0:
            pass
        c = tl.load(count_ptr, volatile=True)
        tl.store(count_ptr, c + 1)
        tl.atomic_xchg(lock_ptr, 0, sem="release")


def test_atomic_cas_lock(backend):
    lock = np.zeros(1, np.int32)
    count = np.zeros(1, np.int32)
    _spin_lock_counter[(64, )](lock, count, 10)
    assert count[0] == 640 and lock[0] == 0


@triton.jit
def _cas_block(ptr, cmp_ptr, old_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    cmp = tl.load(cmp_ptr + offs)
    old = tl.atomic_cas(ptr + offs, cmp, cmp * 10, sem="acq_rel", scope="gpu")
    tl.store(old_ptr + offs, old)


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32"])
def test_atomic_cas_block(backend, rng, dtype):
    backend.require(_CAPS.get(dtype, ""))
    N = 16
    x = rng.integers(0, 4, N).astype(dtype)
    cmp = rng.integers(0, 4, N).astype(dtype)
    x0 = x.copy()
    old = np.zeros_like(x)
    _cas_block[(1, )](x, cmp, old, N)
    np.testing.assert_array_equal(old, x0)
    np.testing.assert_array_equal(x, np.where(x0 == cmp, cmp * 10, x0))
