"""Counter-based random numbers (Philox 4x32 / 4x64), bit for bit the same streams as Triton's ``tl.random``.

The generator is a pure function of (seed, offset): each element's offset is the counter, the seed the key.
The functions build the same operations Triton's @jit versions do, directly through the semantic layer.
"""
from __future__ import annotations

from typing import Any

from . import core
from .core import CompileTimeError, _unwrap, builtin, constexpr

N_ROUNDS_DEFAULT = constexpr(10)

# Philox constants: (key increment A, B, round multiplier A, B) for 32- and 64-bit counters
_PHILOX = {
    32: (0x9E3779B9, 0xBB67AE85, 0xD2511F53, 0xCD9E8D57),
    64: (0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B, 0xD2E7470EE14C6C93, 0xCA5A826395121157),
}


def _rounds(n_rounds: Any) -> int:
    n = _unwrap(n_rounds)
    if not isinstance(n, int) or n < 0:
        raise CompileTimeError(f"n_rounds must be a non-negative compile-time integer, got {n!r}")
    return n


def _philox_impl(s: Any, c0: Any, c1: Any, c2: Any, c3: Any, k0: Any, k1: Any, n_rounds: int) -> list[Any]:
    if c0.dtype == core.uint32:
        key_a, key_b, round_a, round_b = _PHILOX[32]
    elif c0.dtype == core.uint64:
        key_a, key_b, round_a, round_b = _PHILOX[64]
    else:
        raise CompileTimeError(f"philox counters must be uint32 or uint64, got {c0.dtype}")
    for _ in range(n_rounds):
        _c0, _c2 = c0, c2
        c0 = s.xor_(s.xor_(s.umulhi(round_b, _c2), c1), k0)
        c2 = s.xor_(s.xor_(s.umulhi(round_a, _c0), c3), k1)
        c1 = s.mul(round_b, _c2, False)     # wrapping is the point: no overflow checks
        c3 = s.mul(round_a, _c0, False)
        k0 = s.add(k0, key_a, False)
        k1 = s.add(k1, key_b, False)
    return [c0, c1, c2, c3]


@builtin
def philox_impl(c0, c1, c2, c3, k0, k1, n_rounds=N_ROUNDS_DEFAULT, _semantic=None):
    """``n_rounds`` rounds of Philox on the counter (c0, c1, c2, c3) with the key (k0, k1)."""
    s = _semantic
    c = [s.to_tensor(_unwrap(x)) for x in (c0, c1, c2, c3)]
    k = [s.to_tensor(_unwrap(x)) for x in (k0, k1)]
    return core.tuple_value(_philox_impl(s, *c, *k, _rounds(n_rounds)))


def _philox(s: Any, seed: Any, c0: Any, c1: Any, c2: Any, c3: Any, n_rounds: int) -> list[Any]:
    seed = s.to_tensor(_unwrap(seed))
    if not seed.dtype.is_int():
        raise CompileTimeError(f"the seed of a random function must be an integer, got {seed.dtype}")
    seed = s.cast(seed, core.uint64)
    c = [s.to_tensor(_unwrap(x)) for x in (c0, c1, c2, c3)]
    bits = c[0].dtype.primitive_bitwidth
    if bits == 32:
        ity = core.uint32
        seed_hi = s.cast(s.and_(s.shr(seed, 32), 0xFFFFFFFF), core.uint32)
        seed_lo = s.cast(s.and_(seed, 0xFFFFFFFF), core.uint32)
    elif bits == 64:
        ity = core.uint64
        seed_hi = s.full([1], 0, core.uint64)
        seed_lo = seed
    else:
        raise CompileTimeError(f"philox counters must be 32 or 64 bits wide, got {c[0].dtype}")
    c = [s.bitcast(x, ity) for x in c]
    return _philox_impl(s, *c, seed_lo, seed_hi, n_rounds)


@builtin
def philox(seed, c0, c1, c2, c3, n_rounds=N_ROUNDS_DEFAULT, _semantic=None):
    """Philox with a 64-bit ``seed`` as the key: four blocks of random bits of the counters' width."""
    return core.tuple_value(_philox(_semantic, seed, c0, c1, c2, c3, _rounds(n_rounds)))


def _randint4x(s: Any, seed: Any, offset: Any, n_rounds: Any) -> list[Any]:
    offset = s.to_tensor(_unwrap(offset))
    if not offset.dtype.is_int():
        raise CompileTimeError(f"random offsets must be integers, got {offset.dtype}")
    offset_lo = s.cast(offset, core.uint32)
    zero = s.mul(offset_lo, 0)
    if offset.dtype.primitive_bitwidth > 32:
        offset_hi = s.cast(s.shr(offset, 32), core.uint32)
    else:
        offset_hi = zero
    return _philox(s, seed, offset_lo, offset_hi, zero, zero, _rounds(n_rounds))


@builtin
def randint(seed, offset, n_rounds=N_ROUNDS_DEFAULT, _semantic=None):
    """A block of random 32-bit integers (uint32) for a ``seed`` scalar and an ``offset`` block."""
    return _randint4x(_semantic, seed, offset, n_rounds)[0]


@builtin
def randint4x(seed, offset, n_rounds=N_ROUNDS_DEFAULT, _semantic=None):
    """Four blocks of random 32-bit integers; faster than four calls of ``randint``."""
    return core.tuple_value(_randint4x(_semantic, seed, offset, n_rounds))


def _uniform(s: Any, x: Any) -> Any:
    x = s.to_tensor(_unwrap(x))
    if x.dtype in (core.uint32, core.int32):
        x = s.bitcast(x, core.int32)
        scale = 4.6566127342e-10  # the largest value with INT32_MAX * scale < 1.0 in float32
    elif x.dtype in (core.uint64, core.int64):
        x = s.bitcast(x, core.int64)
        scale = 1.0842020432385337e-19
    else:
        raise CompileTimeError(f"uint_to_uniform_float takes 32- or 64-bit integers, got {x.dtype}")
    x = s.where(s.less_than(x, 0), s.sub(s.minus(x), 1), x)
    return s.mul(x, scale)


@builtin
def uint_to_uniform_float(x, _semantic=None):
    """Random integers to floats uniformly distributed in [0, 1)."""
    return _uniform(_semantic, x)


@builtin
def rand(seed, offset, n_rounds=N_ROUNDS_DEFAULT, _semantic=None):
    """A block of float32 uniformly distributed in [0, 1)."""
    s = _semantic
    return _uniform(s, _randint4x(s, seed, offset, n_rounds)[0])


@builtin
def rand4x(seed, offsets, n_rounds=N_ROUNDS_DEFAULT, _semantic=None):
    """Four blocks of float32 uniformly distributed in [0, 1)."""
    s = _semantic
    return core.tuple_value([_uniform(s, i) for i in _randint4x(s, seed, offsets, n_rounds)])


def _pair_to_normal(s: Any, u1: Any, u2: Any) -> list[Any]:
    from . import math
    u1 = s.maximum(1.0e-7, u1)
    th = s.mul(6.283185307179586, u2)
    r = math.sqrt(s.mul(-2.0, math.log(u1, _semantic=s)), _semantic=s)
    return [s.mul(r, math.cos(th, _semantic=s)), s.mul(r, math.sin(th, _semantic=s))]


@builtin
def pair_uniform_to_normal(u1, u2, _semantic=None):
    """Box-Muller: two uniform blocks to two standard normal blocks."""
    s = _semantic
    return core.tuple_value(_pair_to_normal(s, s.to_tensor(_unwrap(u1)), s.to_tensor(_unwrap(u2))))


@builtin
def randn(seed, offset, n_rounds=N_ROUNDS_DEFAULT, _semantic=None):
    """A block of float32 from the standard normal distribution."""
    s = _semantic
    i1, i2, _, _ = _randint4x(s, seed, offset, n_rounds)
    return _pair_to_normal(s, _uniform(s, i1), _uniform(s, i2))[0]


@builtin
def randn4x(seed, offset, n_rounds=N_ROUNDS_DEFAULT, _semantic=None):
    """Four blocks of float32 from the standard normal distribution."""
    s = _semantic
    u = [_uniform(s, i) for i in _randint4x(s, seed, offset, n_rounds)]
    return core.tuple_value(_pair_to_normal(s, u[0], u[1]) + _pair_to_normal(s, u[2], u[3]))
