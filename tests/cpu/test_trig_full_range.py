"""tl.sin/tl.cos of float32 on the CPU backend are right for every argument, at every x86-64 level this host runs:
within 1 ulp of numpy's float64 result (the accuracy table in tritium_cpu/codegen/mathlib.py), also past 2^21
where the math library switches to its Payne-Hanek reduction. The hardest inputs are computed here: in every
binade, the float32 values closest to a multiple of pi/2."""
from __future__ import annotations


import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium.language.extra import libdevice
from tritium_cpu import isa
from tritium_cpu.codegen.mathlib_trig import two_over_pi_bits

F32 = np.float32
SELECTED = isa.environment_selects_level()
LEVELS = isa.levels_to_check()
BLOCK = 256
level = isa.compiling_for


@triton.jit
def sin_cos(x_ptr, s_ptr, c_ptr, t_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(s_ptr + offs, tl.sin(x), mask=m)
    tl.store(c_ptr + offs, tl.math.cos(x), mask=m)
    tl.store(t_ptr + offs, libdevice.tan(x), mask=m)


@triton.jit
def sin_one(x_ptr, s_ptr):
    """One element per program: scalar code, no vectorized loop."""
    pid = tl.program_id(0)
    tl.store(s_ptr + pid, tl.sin(tl.load(x_ptr + pid)))


# ----------------------------------------------------------------------------------------------------
# The hardest arguments: x = m * 2^sh (m a 24-bit significand) nearest to multiples of pi/2
# ----------------------------------------------------------------------------------------------------

_BITS = 400
_M0 = _L = 1 << 23
_U64 = (1 << 64) - 1


def _theta64(sh: int) -> int:
    """frac(2^sh * 2/pi) in 64 fixed-point bits (truncated): m * theta64 mod 2^64 is x * 2/pi mod 1, give or take
    2^-40, for x = m * 2^sh."""
    g = two_over_pi_bits(_BITS)
    return ((g << (64 + sh)) >> _BITS if 64 + sh >= 0 else g >> (_BITS - 64 - sh)) & _U64


def _step(th: int) -> int:
    """A continued-fraction denominator q of th/2^64 that makes the search below cheap: q progressions m, m+q,
    m+2q... along which x * 2/pi mod 1 moves by the tiny ||q * theta||, each crossing about
    L / (q * q_next) integers."""
    a, b = th, 1 << 64
    q0, q1 = 0, 1
    best = (float("inf"), 1)
    while a and q1 <= _L:
        t = b // a
        q0, q1 = q1, t * q1 + q0
        best = min(best, (2 * q0 + 2 * _L / q1, q0))
        a, b = b - t * a, a
    return best[1]


def closest_to_multiples(sh: int, count: int) -> list[int]:
    """The ``count`` significands m in [2^23, 2^24) whose x = m * 2^sh lie closest to a multiple of pi/2 (the
    nearest integer to x * 2/pi). In each progression of step q only the ends and the points next to each
    integer crossing can be closest, so the search checks O(q) points instead of 2^23 (checked against brute
    force over every significand for every binade when this was written)."""
    th = _theta64(sh)
    q = _step(th)
    th_u = np.uint64(th)
    r = np.arange(q, dtype=np.uint64)
    with np.errstate(over="ignore"):
        start = ((np.uint64(_M0) + r) * th_u).view(np.int64).astype(np.float64)
        delta = float(np.array([q * th & _U64], dtype=np.uint64).view(np.int64)[0])
    last = (_L - r.astype(np.int64) + q - 1) // q - 1
    cands = [np.zeros(q), last.astype(np.float64)]
    if delta:
        k = int(abs(delta) * _L / q / 2.0 ** 64) + 2
        for target in range(-k, k + 1):
            i = (target * 2.0 ** 64 - start) / delta
            cands += [np.floor(i), np.ceil(i)]
    i = np.clip(np.stack(cands), 0, last[None, :]).astype(np.uint64)
    m = (np.uint64(_M0) + r[None, :] + i * np.uint64(q)).ravel()
    with np.errstate(over="ignore"):
        t = m * th_u
    dist = np.minimum(t, np.negative(t))
    out: list[int] = []
    for j in np.argsort(dist, kind="stable"):
        if int(m[j]) not in out:
            out.append(int(m[j]))
            if len(out) == count:
                break
    return out


def quadrant_distance(x: float) -> float:
    """|x * 2/pi - nearest integer|, exactly (to 2^-300)."""
    m, e = np.frexp(np.float64(x))
    mi, sh = int(m * 2 ** 24), int(e) - 24
    g = two_over_pi_bits(_BITS)
    p = (mi * g << sh) if sh >= 0 else (mi * g >> -sh)
    frac = p & ((1 << _BITS) - 1)
    return min(frac, (1 << _BITS) - frac) / 2.0 ** _BITS


def hard_cases() -> np.ndarray:
    xs = []
    for binade in range(0, 128):                          # x from 1 to the largest float
        for m in closest_to_multiples(binade - 23, 4):
            xs.append(m * 2.0 ** (binade - 23))
    x = np.array(xs, F32)
    return np.concatenate([x, np.nextafter(x, F32(0)), np.nextafter(x, F32(np.inf))])


def test_hard_cases_are_the_known_worst():
    """The literature's worst case for float32 (J.-M. Muller, Elementary Functions, chapter on range reduction):
    16367173 * 2^72, within 2^-29.8 quadrants of a multiple of pi/2, the closest of every float32 above 1."""
    x = hard_cases()
    dist = np.array([quadrant_distance(float(v)) for v in x])
    worst = float(x[np.argmin(dist)])
    assert worst == 16367173 * 2.0 ** 72
    assert 2.0 ** -30 < dist.min() < 2.0 ** -29.8
    # per binade, the search found the values a brute force over every significand finds (spot checks)
    for binade in (1, 20, 21, 95, 127):
        sh = binade - 23
        m = np.arange(_M0, _M0 + _L, dtype=np.uint64)
        with np.errstate(over="ignore"):
            t = m * np.uint64(_theta64(sh))
        assert closest_to_multiples(sh, 1)[0] == int(m[np.argmin(np.minimum(t, np.negative(t)))])


# ----------------------------------------------------------------------------------------------------
# Inputs and the check
# ----------------------------------------------------------------------------------------------------

def inputs() -> np.ndarray:
    rng = np.random.default_rng(20261201)
    pow2 = np.ldexp(1.0, np.arange(-149, 128)).astype(F32)
    random_every_exponent = (rng.integers(0, 1 << 23, (254, 64)) | (np.arange(1, 255)[:, None] << 23)).ravel()
    random_bits = rng.integers(0, 1 << 32, 1 << 15, dtype=np.uint64).astype(np.uint32).view(F32)
    subnormal = rng.integers(1, 1 << 23, 256).astype(np.uint32).view(F32)
    edges = np.array([0.0, 3.4028235e38, 2.0 ** 21, np.nextafter(F32(2.0 ** 21), F32(0)),
                      np.nextafter(F32(2.0 ** 21), F32(np.inf)), 2.0 ** 23, 2.0 ** 24, 1.5 * 2.0 ** 25,
                      np.pi, np.pi / 2, np.pi / 4, 1e38, 1e30, 1e10, 1.1754942e-38, 2.0 ** -149], F32)
    pos = np.concatenate([hard_cases(), pow2, random_every_exponent.astype(np.uint32).view(F32), subnormal, edges])
    return np.concatenate([pos, -pos, random_bits, np.array([np.inf, -np.inf, np.nan, -np.nan], F32)])


def ulp_error(y: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """|y - ref| in float32 ulps at ref (ref float64); nan where ref is nan must be nan in y (inf ulps if not)."""
    e = np.maximum(np.frexp(np.abs(ref))[1] - 24, -149)
    with np.errstate(invalid="ignore"):
        err = np.abs(y.astype(np.float64) - ref) / np.ldexp(1.0, e)
    nan = np.isnan(ref)
    return np.where(nan, np.where(np.isnan(y), 0.0, np.inf), np.where(np.isnan(y), np.inf, err))


def check(x: np.ndarray, got: np.ndarray, ref_fn, what: str, bound: float) -> None:
    with np.errstate(invalid="ignore"):
        ref = ref_fn(x.astype(np.float64))
    err = ulp_error(got, ref)
    w = int(np.argmax(err))
    assert err[w] <= bound, (f"{what}({x[w]!r} = {x[w].view(np.uint32):#010x}) = {got[w]!r}, expected "
                             f"{ref[w]!r}: {err[w]:.3g} ulp")


@pytest.mark.parametrize("lvl", LEVELS)
def test_sin_cos_every_range(lvl):
    x = inputs()
    n = x.size
    s, c, t = np.empty_like(x), np.empty_like(x), np.empty_like(x)
    with level(lvl):
        sin_cos[(triton.cdiv(n, BLOCK), )](x, s, c, t, n, BLOCK=BLOCK)
    big = np.abs(x) >= 2.0 ** 21
    assert big.sum() > 1000 and (~big).sum() > 1000
    for got, ref_fn, name in ((s, np.sin, "sin"), (c, np.cos, "cos")):
        check(x, got, ref_fn, f"{name} at {lvl}", 1.0)
        # the Payne-Hanek path rounds once a result whose error is below 2^-9 ulp (mathlib.py's table)
        check(x[big], got[big], ref_fn, f"{name} at {lvl}, |x| >= 2^21", 0.5 + 2.0 ** -9)
    # tan has no reduction of its own (double precision libm, rounded): right over the whole range too
    check(x, t, np.tan, f"tan at {lvl}", 1.0)
    # signs of zeros, and inf/nan -> nan
    zero = np.array([0.0, -0.0], F32)
    sz, cz, tz = np.empty_like(zero), np.empty_like(zero), np.empty_like(zero)
    with level(lvl):
        sin_cos[(1, )](zero, sz, cz, tz, 2, BLOCK=BLOCK)
    assert sz.view(np.uint32).tolist() == [0, 0x80000000] and cz.tolist() == [1.0, 1.0]
    special = np.isinf(x) | np.isnan(x)
    assert np.isnan(s[special]).all() and np.isnan(c[special]).all()


@triton.jit
def sin_cos_rows(x_ptr, y_ptr, BLOCK: tl.constexpr):
    """Unmasked contiguous rows: with a small cache size they take the streaming-store path, whose rows the code
    generator writes out lane by lane for the SLP vectorizer to pack."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, tl.sin(x) + tl.cos(x))


@pytest.mark.parametrize("lvl", LEVELS)
def test_sin_cos_streaming_rows(lvl, monkeypatch, tmp_path):
    from tritium import knobs
    from tritium_cpu.codegen import streaming
    monkeypatch.setattr(streaming, "llc_bytes", lambda: 1 << 12)       # every launch streams
    x = inputs()
    x = np.concatenate([x, np.full(-x.size % BLOCK, 1e30, F32)])
    y = np.empty_like(x)
    with knobs.cache.scope():
        knobs.cache.dir = str(tmp_path)          # the cache size is compiled into the kernel
        with level(lvl):
            k = sin_cos_rows[(x.size // BLOCK, )](x, y, BLOCK=BLOCK)
    assert "!nontemporal" in k.asm["llir"]
    with np.errstate(invalid="ignore"):
        x64 = x.astype(np.float64)
        ref = np.sin(x64) + np.cos(x64)
    # each term within 1 ulp of its own size, plus the rounding of the sum
    with np.errstate(invalid="ignore"):
        bound = 2.0 ** -23 * (np.abs(np.sin(x64)) + np.abs(np.cos(x64))) + np.abs(ref) * 2.0 ** -24
        bad = ~(np.abs(y - ref) <= bound) & ~(np.isnan(ref) & np.isnan(y))
    assert not bad.any(), f"at {lvl}: sin(x) + cos(x) of {x[bad][:4]} = {y[bad][:4]}, expected {ref[bad][:4]}"


@pytest.mark.parametrize("lvl", LEVELS)
def test_sin_scalar_code(lvl):
    """One element per program: the large-argument path is reached from scalar code as well."""
    x = np.concatenate([hard_cases()[::16], np.array([3.4028235e38, -1e30, 2.0 ** 21, 1.0, -0.0, np.inf], F32)])
    s = np.empty_like(x)
    with level(lvl):
        sin_one[(x.size, )](x, s)
    check(x, s, np.sin, f"scalar sin at {lvl}", 1.0)
