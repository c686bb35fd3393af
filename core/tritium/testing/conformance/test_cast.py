"""Conversions between every pair of dtypes (``x.to``, ``tl.cast``, ``tl.float32(x)``), ``fp_downcast_rounding``
and bitcasts."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl

from .reference import ALL, DTYPES, FP8, FP8_FORMATS, arg, decode, encode, fp8_table, random

N = 32


@tl.constexpr_function
def _dtype(name):
    return getattr(tl, name)


@tl.constexpr_function
def _uint_of(bits):
    return {1: tl.int1, 8: tl.uint8, 16: tl.uint16, 32: tl.uint32, 64: tl.uint64}[bits]


@triton.jit
def _cast_all(x_ptr, o_ptr, N: tl.constexpr, DSTS: tl.constexpr, ROUNDING: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    for k in tl.static_range(len(DSTS)):
        dst: tl.constexpr = _dtype(DSTS[k])
        if ROUNDING is None:
            y = x.to(dst)
        else:
            y = tl.cast(x, dst, fp_downcast_rounding=ROUNDING)
        tl.static_assert(y.dtype == dst)
        bits = y.to(_uint_of(dst.primitive_bitwidth), bitcast=True)
        tl.store(o_ptr + k * N + offs, bits.to(tl.uint64))


def _castable(src: str, dst: str) -> bool:
    """Triton converts between any two types except integers and float8 (either way)."""
    s, d = DTYPES[src], DTYPES[dst]
    if src == dst:
        return True
    return not ((s.is_int and dst in FP8) or (src in FP8 and d.is_int))


def _rtz(x: np.ndarray, dst: str) -> np.ndarray:
    """Stored bits of float64 values rounded toward zero into ``dst``."""
    if dst == "bfloat16":
        return (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)   # float32 inputs only
    if dst in FP8:
        t = fp8_table(dst)
        finite = [c for c in range(256) if np.isfinite(t[c])]
        out = []
        for v in x:
            best = max((c for c in finite if abs(t[c]) <= abs(v) and (t[c] == 0 or np.sign(t[c]) == np.sign(v))),
                       key=lambda c: (abs(t[c]), -c))
            out.append(best if v != 0 or not np.signbit(v) or FP8_FORMATS[dst].neg_zero_is_nan else 0x80)
        return np.array(out, np.uint8)
    ty = {"float16": np.float16, "float32": np.float32}[dst]
    r = x.astype(ty)
    over = np.abs(r.astype(np.float64)) > np.abs(x)
    return np.where(over, np.nextafter(r, ty(0)), r).astype(ty)


def _expected(x_bits: np.ndarray, src: str, dst: str) -> np.ndarray:
    s, d = DTYPES[src], DTYPES[dst]
    v = decode(x_bits, src)
    if d.kind == "bool":
        return (v != 0).astype(np.uint8)
    if d.is_int:
        if s.is_float:
            v = np.trunc(v.astype(np.float64))
            if d.kind == "uint":
                v = np.maximum(v, 0)      # float to unsigned saturates at 0, as the GPUs' conversions do
            return v.astype(np.int64).astype(d.storage)
        return np.asarray(v).astype(d.storage)
    if s.is_int:
        if dst == "float64":
            return v.astype(np.float64)
        if dst == "float16":
            return v.astype(np.float64).astype(np.float16)
        return encode(v.astype(np.float32), dst) if s.bits < 32 or dst != "float32" else v.astype(np.float32)
    return encode(v.astype(np.float64) if dst == "float64" else v, dst)


def _src_data(src: str, rng: np.random.Generator) -> np.ndarray:
    d = DTYPES[src]
    if d.is_float:
        lo = 0.5 if src == "float8e4b15" else 5
        return random(src, N, rng, -lo, lo)       # every float type holds these (no overflow on the way)
    if d.kind == "bool":
        return random(src, N, rng)
    info = np.iinfo(d.storage)
    return random(src, N, rng, max(info.min, -2000), min(info.max, 2000))


@pytest.mark.parametrize("src", ALL)
def test_cast_every_pair(backend, rng, src):
    backend.require_dtype(src)
    dsts = [d for d in ALL if _castable(src, d) and (DTYPES[d].capability is None or backend.has(DTYPES[d].capability))]
    # small floats to small integer types; big integers do not fit float8
    x = _src_data(src, rng)
    out = np.zeros((len(dsts), N), np.uint64)
    _cast_all[(1, )](arg(x, src), out, N, tuple(dsts), None)
    for k, dst in enumerate(dsts):
        want = np.asarray(_expected(x, src, dst))
        width = max(1, DTYPES[dst].bits // 8)
        want_bits = want.view(np.dtype(f"u{width}")) if want.dtype != np.bool_ else want.astype(np.uint8)
        if DTYPES[dst].kind == "bool":
            want_bits = want.astype(np.uint8)
        got = out[k].astype(want_bits.dtype)
        np.testing.assert_array_equal(got, want_bits, err_msg=f"{src} -> {dst}")


@pytest.mark.parametrize("src,dsts", [("float32", ["float16", "bfloat16", "float8e4nv", "float8e5", "float8e4b8",
                                                   "float8e5b16"]),
                                      ("float64", ["float32", "float16"]),
                                      ("float16", ["float8e4nv", "float8e5"])])
def test_downcast_rounding_rtz(backend, rng, src, dsts):
    backend.require_dtype(src, *dsts)
    x = rng.uniform(-5, 5, N)
    if src == "float16":
        x = x.astype(np.float16)
    x = x.astype(np.float32) if src == "float32" else x
    out = np.zeros((len(dsts), N), np.uint64)
    _cast_all[(1, )](x, out, N, tuple(dsts), "rtz")
    out_rne = np.zeros((len(dsts), N), np.uint64)
    _cast_all[(1, )](x, out_rne, N, tuple(dsts), "rtne")
    for k, dst in enumerate(dsts):
        want = _rtz(np.asarray(x, np.float64), dst)
        width = max(1, DTYPES[dst].bits // 8)
        np.testing.assert_array_equal(out[k].astype(f"u{width}"), np.asarray(want).view(f"u{width}"),
                                      err_msg=f"{src} -> {dst} rtz")
        rne = np.asarray(encode(np.asarray(x, np.float64) if dst == "float32" or src == "float64"
                                else np.asarray(x, np.float32), dst))
        np.testing.assert_array_equal(out_rne[k].astype(f"u{width}"), rne.view(f"u{width}"),
                                      err_msg=f"{src} -> {dst} rtne")


@triton.jit
def _bitcasts(x_ptr, o_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)                         # float32
    i = x.to(tl.int32, bitcast=True)
    tl.store(o_ptr + offs, i)
    u = tl.cast(x, tl.uint32, bitcast=True)
    tl.store(o_ptr + N + offs, (u >> 31).to(tl.int32))
    back = i.to(tl.float32, bitcast=True)
    tl.store(o_ptr + 2 * N + offs, (back == x).to(tl.int32))
    h = x.to(tl.float16).to(tl.int16, bitcast=True)
    tl.store(o_ptr + 3 * N + offs, h.to(tl.int32))
    f = tl.float32(i)                                 # a dtype called on a value converts it
    tl.store(o_ptr + 4 * N + offs, f.to(tl.int32, bitcast=True))


def test_bitcast_and_dtype_call(backend, rng):
    x = rng.uniform(-100, 100, N).astype(np.float32)
    out = np.zeros((5, N), np.int32)
    _bitcasts[(1, )](x, out, N)
    np.testing.assert_array_equal(out[0], x.view(np.int32))
    np.testing.assert_array_equal(out[1], (x < 0).astype(np.int32))
    np.testing.assert_array_equal(out[2], np.ones(N, np.int32))
    np.testing.assert_array_equal(out[3], x.astype(np.float16).view(np.int16).astype(np.int32))
    np.testing.assert_array_equal(out[4], x.view(np.int32).astype(np.float32).view(np.int32))
