"""Shifts between integer types of mixed signedness and width, as Triton defines them.

Both operands are promoted to their common integer type (C's usual arithmetic conversions, so int8 and uint8
meet in uint8), but whether ``>>`` shifts in the sign is decided by the left operand's own type: a signed
value stays an arithmetic shift even when the promoted type is unsigned (int8 -17 >> uint8 6 gives 0xFF).
The pairs are those of Triton's ``test_shift_op`` (every integer type shifted by every unsigned one) plus the
signed shift amounts; the amounts stay below the promoted width, where the result is defined.
"""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl

from .reference import DTYPES, INTS

N = 32


@triton.jit
def _shifts(x_ptr, y_ptr, shl_ptr, shr_ptr, N: tl.constexpr, RESULT: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    left = x << y
    right = x >> y
    tl.static_assert(str(left.dtype) == RESULT, "x << y: unexpected result type")
    tl.static_assert(str(right.dtype) == RESULT, "x >> y: unexpected result type")
    tl.store(shl_ptr + offs, left)
    tl.store(shr_ptr + offs, right)


@triton.jit
def _scalar_lhs(y_ptr, out_ptr, N: tl.constexpr, C: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(out_ptr + offs, C >> tl.load(y_ptr + offs))


def _promoted(a: str, b: str) -> str:
    da, db = DTYPES[a], DTYPES[b]
    if da.kind == db.kind:
        return a if da.bits > db.bits else b
    u, s = (a, b) if da.kind == "uint" else (b, a)
    return u if DTYPES[u].bits >= DTYPES[s].bits else s


def _np(bits: int, signed: bool) -> np.dtype:
    return np.dtype(f"{'i' if signed else 'u'}{bits // 8}")


def _reference(x: np.ndarray, y: np.ndarray, a: str, p: str) -> tuple[np.ndarray, np.ndarray]:
    """Triton's result of x << y and x >> y: x converted (sign- or zero-extended by its own type) to the
    promoted width, then shifted as a value of x's signedness at that width."""
    bits = DTYPES[p].bits
    work = _np(bits, DTYPES[a].kind == "int")
    xs, ys = x.astype(work), y.astype(work)
    out = DTYPES[p].storage
    return np.left_shift(xs, ys).view(out), np.right_shift(xs, ys).view(out)


def _values(name: str, rng: np.random.Generator) -> np.ndarray:
    info = np.iinfo(DTYPES[name].storage)
    edge = [info.min, info.max, 0, 1]
    if info.min < 0:
        edge += [-1, -17, info.min + 1]
    else:
        edge += [info.max - 16, 1 << (DTYPES[name].bits - 1)]
    rest = rng.integers(info.min, info.max, N - len(edge), dtype=DTYPES[name].storage, endpoint=True)
    return np.concatenate([np.array(edge, DTYPES[name].storage), rest])


_PAIRS = [(a, b) for a in INTS for b in INTS if DTYPES[b].kind == "uint"] + \
         [(a, b) for a in INTS for b in INTS if DTYPES[b].kind == "int"]


@pytest.mark.parametrize("a,b", _PAIRS)
def test_shift_mixed_types(backend, rng, a, b):
    p = _promoted(a, b)
    x = _values(a, rng)
    y = rng.integers(0, DTYPES[p].bits, N).astype(DTYPES[b].storage)
    y[:4] = [0, 1, DTYPES[p].bits - 1, min(6, DTYPES[p].bits - 1)]
    shl = np.zeros(N, DTYPES[p].storage)
    shr = np.zeros(N, DTYPES[p].storage)
    _shifts[(1, )](x, y, shl, shr, N, p)
    want_shl, want_shr = _reference(x, y, a, p)
    np.testing.assert_array_equal(shl, want_shl, err_msg=f"{a} << {b}")
    np.testing.assert_array_equal(shr, want_shr, err_msg=f"{a} >> {b}")


@triton.jit
def _shift_then_widen(x_ptr, y_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    r = tl.load(x_ptr + offs) >> tl.load(y_ptr + offs)
    tl.store(out_ptr + offs, r.to(tl.float32))        # an unsigned value: widened without its sign
    tl.store(out_ptr + N + offs, (r // 2).to(tl.float32))


def test_shift_example_from_the_report(backend):
    """int8 -17 >> uint8 6: computed in uint8, but the sign is shifted in; the result is then a uint8."""
    x = np.full(N, -17, np.int8)
    y = np.full(N, 6, np.uint8)
    shl = np.zeros(N, np.uint8)
    shr = np.zeros(N, np.uint8)
    _shifts[(1, )](x, y, shl, shr, N, "uint8")
    assert (shr == 255).all(), shr
    assert (shl == np.uint8(0xEF << 6 & 0xFF)).all(), shl
    out = np.zeros(2 * N, np.float32)
    _shift_then_widen[(1, )](x, y, out, N)
    np.testing.assert_array_equal(out, np.repeat([255.0, 127.0], N))


@pytest.mark.parametrize("c,b", [(-64, "int8"), (-64, "int32"), (-(1 << 40), "int64"), (200, "uint8"),
                                 (1 << 31, "uint32"), (0x8000, "uint16")])
def test_shift_python_scalar_on_the_left(backend, c, b):
    """A Python integer shifted by a tensor: the tensor, the only typed operand, decides the signedness."""
    bits = DTYPES[b].bits
    y = np.arange(N).astype(DTYPES[b].storage) % bits
    out = np.zeros(N, DTYPES[b].storage)
    _scalar_lhs[(1, )](y, out, N, c)
    want = np.right_shift(np.array(c).astype(DTYPES[b].storage), y)
    np.testing.assert_array_equal(out, want)
