"""Random inputs with the values that break code: NaN, infinities, signed zeros, subnormals, the largest and
smallest values, integer extremes (MIN, MAX, 0, -1, 1), mixed with ordinary numbers of many magnitudes."""
from __future__ import annotations

import numpy as np

from . import types as T
from .program import Program


def _floats(d: T.DType, n: int, rng: np.random.Generator) -> np.ndarray:
    mx, tiny, sub, _ = T.finfo(d)
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, 2.0, mx, -mx, tiny, -tiny, sub, -sub,
                        tiny - sub, 3 * sub, 65504.0, 1e-8, -3.0, 7.0, 100.0], dtype=np.float64)
    mag = 10.0 ** rng.uniform(-4, 4, n)
    v = rng.standard_normal(n) * mag
    small = rng.integers(-8, 9, n).astype(np.float64)
    pick = rng.random(n)
    v = np.where(pick < 0.3, small, v)
    sp = rng.random(n) < 0.15
    v[sp] = rng.choice(special, sp.sum())
    with np.errstate(over="ignore"):
        if d.name == "bfloat16":
            return T.bf16_bits(v.astype(np.float32))
        return v.astype(d.np)


def _ints(d: T.DType, n: int, rng: np.random.Generator) -> np.ndarray:
    if d.kind == "b":
        return rng.random(n) < 0.5
    lo, hi = T.int_range(d)
    special = np.array([lo, hi, 0, 1, lo + 1, hi - 1] + ([-1] if d.signed else [hi // 2]), dtype=object)
    v = rng.integers(lo, hi, n, dtype=d.np, endpoint=True)
    small = rng.integers(max(lo, -20), 21, n).astype(d.np)
    pick = rng.random(n)
    v = np.where(pick < 0.4, small, v)
    sp = rng.random(n) < 0.15
    v[sp] = np.array([int(x) for x in rng.choice(special, sp.sum())], dtype=d.np) if sp.any() else v[sp]
    return v.astype(d.np)


def values(d: T.DType, shape: tuple, rng: np.random.Generator) -> np.ndarray:
    n = int(np.prod(shape))
    v = _floats(d, n, rng) if d.is_float else _ints(d, n, rng)
    return np.ascontiguousarray(v.reshape(shape))


def make(p: Program) -> dict:
    """Input arrays (by load variable) and the initial contents of output arrays (by parameter name)."""
    rng = np.random.default_rng(p.input_seed)
    arrays = {}
    for role, var, dt, dims in p.array_args():
        d = T.get(dt)
        name = f"{role}_{var}"
        if name in p.inputs:
            arrays[name] = _fit(p.inputs[name], p.shape_of(dims))
        elif role == "in":
            arrays[name] = values(d, p.shape_of(dims), rng)
        elif role == "out":
            # stores leave unmasked-off elements alone; atomics start from these values
            arrays[name] = values(d, p.shape_of(dims), rng)
            if d.is_float:
                bad = np.isnan(T.as_float_view(d, arrays[name]))
                arrays[name][bad] = 0
        else:
            arrays[name] = np.zeros(p.shape_of(dims), d.np)
    return arrays


def _fit(a: np.ndarray, shape: tuple) -> np.ndarray:
    """The leading part of a frozen array, after the shrinker made the grid or a block smaller."""
    if a.shape == shape:
        return a
    if len(a.shape) != len(shape) or any(x > y for x, y in zip(shape, a.shape)):
        raise ValueError(f"frozen input of shape {a.shape} cannot become {shape}")
    return np.ascontiguousarray(a[tuple(slice(0, n) for n in shape)])
