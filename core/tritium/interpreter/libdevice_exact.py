"""libdevice's directed-rounding arithmetic, conversions and integer functions for the interpreter's
:mod:`.libdevice`: the round-to-nearest result stepped one ulp where the exact error (rational arithmetic, element
by element: these are rare) demands it."""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Callable

import numpy as np

from . import floats
from .elementwise import _f2i
from .libdevice_special import F64
from .values import UNSIGNED, as_type, signed, unsigned

# -- directed rounding -------------------------------------------------------------------------------------

def _exact(v: Any) -> Fraction:
    return Fraction(float(v))


def _adjust(r: Any, err: int, dt: np.dtype, mode: str) -> Any:
    """The round-to-nearest result ``r``, whose error (exact - r) has sign ``err``, rounded toward zero ("rz"),
    down ("rd") or up ("ru") instead."""
    if err < 0 and (mode == "rd" or (mode == "rz" and r > 0)):
        return np.nextafter(r, dt.type(-np.inf))
    if err > 0 and (mode == "ru" or (mode == "rz" and r < 0)):
        return np.nextafter(r, dt.type(np.inf))
    return r


def _sign(v: Fraction) -> int:
    return (v > 0) - (v < 0)


def _directed_op(name: str, mode: str, args: list[np.ndarray], dt: np.dtype) -> np.ndarray:
    def one(*xs: Any) -> Any:
        r = dt.type(_RN[name](*[dt.type(x) for x in xs]))
        if not all(np.isfinite(x) for x in xs) or np.isnan(r):
            return r
        if np.isinf(r) and name in ("div", "rcp") and xs[-1] == 0:
            return r         # an exact infinity (division by zero)
        if np.isinf(r):      # overflow of finite operands: directed modes may stop at the largest finite value
            keep = (mode == "ru" and r > 0) or (mode == "rd" and r < 0)
            return r if keep else dt.type(math.copysign(float(np.finfo(dt).max), float(r)))
        fx = [_exact(x) for x in xs]
        if name == "sqrt":
            err = _sign(fx[0] - _exact(r) ** 2)   # sqrt(x) - r has the sign of x - r^2
        else:
            exact = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
                     "div": lambda a, b: a / b, "rcp": lambda b: 1 / b, "fma": lambda a, b, c: a * b + c}[name](*fx)
            err = _sign(exact - _exact(r))
        return _adjust(r, err, dt, mode)
    shape = np.broadcast_shapes(*[a.shape for a in args])
    flat = [np.broadcast_to(np.asarray(a, dt), shape).reshape(-1) for a in args]
    with np.errstate(all="ignore"):
        out = np.array([one(*xs) for xs in zip(*flat)], dt) if flat[0].size else np.zeros(0, dt)
    return out.reshape(shape)


_RN: dict[str, Callable[..., Any]] = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b,
    "rcp": lambda b: b.dtype.type(1) / b, "sqrt": np.sqrt,
    "fma": lambda a, b, c: floats.fma(np.array([a]), np.array([b]), np.array([c]),
                                      "fp64" if np.asarray(a).dtype == F64 else "fp32")[0],
}


# -- conversions -------------------------------------------------------------------------------------------

_ROUND = {"rn": np.rint, "rz": np.trunc, "rd": np.floor, "ru": np.ceil}


def _to_int(x: np.ndarray, mode: str, dt: np.dtype) -> np.ndarray:
    return _f2i(_ROUND[mode](x), dt)


def _int_to_float(i: np.ndarray, mode: str, dt: np.dtype) -> np.ndarray:
    f = i.astype(dt)
    if mode == "rn":
        return f
    # compare the exact integer with the converted value, converted back (saturating)
    back = _f2i(f, np.dtype(np.int64) if i.dtype.kind == "i" else np.dtype(np.uint64))
    wide = i.astype(np.int64) if i.dtype.kind == "i" else i.astype(np.uint64)
    below, above = wide < back, wide > back
    down = np.nextafter(f, dt.type(-np.inf))
    up = np.nextafter(f, dt.type(np.inf))
    if mode == "rd":
        return np.where(below, down, f)
    if mode == "ru":
        return np.where(above, up, f)
    return np.where(below & (f > 0), down, np.where(above & (f < 0), up, f))


def _double_to_float(x: np.ndarray, mode: str) -> np.ndarray:
    f = x.astype(np.float32)
    if mode == "rn":
        return f
    back = f.astype(np.float64)      # exact: the comparison with x is too
    down = np.nextafter(f, np.float32(-np.inf))
    up = np.nextafter(f, np.float32(np.inf))
    lo, hi = x < back, x > back
    if mode == "rd":
        return np.where(lo, down, f)
    if mode == "ru":
        return np.where(hi, up, f)
    return np.where(lo & (f > 0), down, np.where(hi & (f < 0), up, f))


# -- integer functions -------------------------------------------------------------------------------------

def _ffs(a: np.ndarray) -> np.ndarray:
    u = unsigned(a).astype(np.uint64)
    low = u & (~u + np.uint64(1))                          # the lowest set bit
    pos = np.where(u == 0, 0, np.floor(np.log2(np.maximum(low, 1).astype(np.float64))).astype(np.int64) + 1)
    return pos.astype(np.int32)


def _brev(a: np.ndarray) -> np.ndarray:
    bits = a.dtype.itemsize * 8
    u = unsigned(a).astype(np.uint64)
    out = np.zeros(u.shape, np.uint64)
    for i in range(bits):
        out |= ((u >> np.uint64(i)) & np.uint64(1)) << np.uint64(bits - 1 - i)
    return as_type(out.astype(UNSIGNED[a.dtype.itemsize]), a.dtype)


def _mulhi(a: np.ndarray, b: np.ndarray, signed_op: bool) -> np.ndarray:
    if a.dtype.itemsize == 4:
        x, y = (signed(a).astype(np.int64), signed(b).astype(np.int64)) if signed_op else \
            (unsigned(a).astype(np.int64), unsigned(b).astype(np.int64))
        return as_type((x * y >> 32).astype(np.int64).astype(np.uint64).astype(np.uint32), a.dtype)
    fn = (lambda x, y: (int(x) * int(y)) >> 64)
    xs, ys = (signed(a), signed(b)) if signed_op else (unsigned(a), unsigned(b))
    out = [fn(x, y) & (2**64 - 1) for x, y in zip(xs.reshape(-1).tolist(), ys.reshape(-1).tolist())]
    return as_type(np.array(out, np.uint64).reshape(a.shape), a.dtype)


def _mul24(a: np.ndarray, b: np.ndarray, signed_op: bool) -> np.ndarray:
    def low24(v: np.ndarray) -> np.ndarray:
        u = unsigned(v).astype(np.int64) & 0xFFFFFF
        return np.where(u >= 2**23, u - 2**24, u) if signed_op else u
    return as_type((low24(a) * low24(b)).astype(np.uint64).astype(np.uint32), a.dtype)


def _hadd(a: np.ndarray, b: np.ndarray, signed_op: bool, plus: int) -> np.ndarray:
    x, y = (signed(a), signed(b)) if signed_op else (unsigned(a), unsigned(b))
    return as_type(((x.astype(np.int64) + y.astype(np.int64) + plus) >> 1).astype(x.dtype), a.dtype)


def _sad(a: np.ndarray, b: np.ndarray, c: np.ndarray, signed_op: bool) -> np.ndarray:
    x, y = (signed(a), signed(b)) if signed_op else (unsigned(a), unsigned(b))
    d = np.abs(x.astype(np.int64) - y.astype(np.int64)) + unsigned(c).astype(np.int64)
    return as_type((d & 0xFFFFFFFF).astype(np.uint32), a.dtype)


def _byte_perm(x: np.ndarray, y: np.ndarray, sel: np.ndarray) -> np.ndarray:
    both = (unsigned(y).astype(np.uint64) << np.uint64(32)) | unsigned(x).astype(np.uint64)
    sl = unsigned(sel).astype(np.uint64)
    out = np.zeros(np.broadcast_shapes(x.shape, y.shape, sel.shape), np.uint64)
    for i in range(4):
        n = (sl >> np.uint64(4 * i)) & np.uint64(7)
        out |= ((both >> (n * np.uint64(8))) & np.uint64(255)) << np.uint64(8 * i)
    return as_type(out.astype(np.uint32), x.dtype)
