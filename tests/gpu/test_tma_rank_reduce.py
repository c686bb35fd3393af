"""Descriptor reductions (``desc.atomic_add/min/max/and/or/xor``) of rank 1 and 3: on sm_90 through the copy
engine's bulk tensor reductions (``cp.reduce.async.bulk.tensor``, a map that knows the element type: signed for
min/max), elsewhere and on the GPU emulator element by element, with the same results.

Two programs reduce into each block (the reductions must be atomic), blocks start before the tensor and run
past its end (what falls outside is dropped), and the array behind the descriptor is wider than its shape, with a
sentinel there that must stay. Values are small integers, so float additions are exact in any order.
Descriptors made in the kernel from its arguments, from a value it computes, and host ``TensorDescriptor``s."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium.tools.tensor_descriptor import TensorDescriptor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hopper import require_sm90  # noqa: E402

OWN, BUILT, HOST = 0, 1, 2


@triton.jit
def _reduce(dy, v, idx, OP: tl.constexpr):
    if OP == "add":
        dy.atomic_add(idx, v)
    elif OP == "min":
        dy.atomic_min(idx, v)
    elif OP == "max":
        dy.atomic_max(idx, v)
    elif OP == "and":
        dy.atomic_and(idx, v)
    elif OP == "or":
        dy.atomic_or(idx, v)
    else:
        dy.atomic_xor(idx, v)


@triton.jit
def _reduce1(x, y, n0, o0, zero, B0: tl.constexpr, OP: tl.constexpr, MODE: tl.constexpr):
    if MODE == 2:
        dy = y
    else:
        if MODE == 1:
            n0 = n0 + zero
        dy = tl.make_tensor_descriptor(y, [n0], [1], [B0])
    p = tl.program_id(0)
    v = tl.load(x + p * B0 + tl.arange(0, B0))
    _reduce(dy, v, [o0 + p // 2 * B0], OP)


@triton.jit
def _reduce3(x, y, n0, n1, n2, s0, s1, o0, o1, o2, zero, B0: tl.constexpr, B1: tl.constexpr, B2: tl.constexpr,
             OP: tl.constexpr, MODE: tl.constexpr):
    if MODE == 2:
        dy = y
    else:
        if MODE == 1:
            n0 = n0 + zero
        dy = tl.make_tensor_descriptor(y, [n0, n1, n2], [s0, s1, 1], [B0, B1, B2])
    p = tl.program_id(0)
    n: tl.constexpr = B0 * B1 * B2
    v = tl.reshape(tl.load(x + p * n + tl.arange(0, n)), [B0, B1, B2])
    _reduce(dy, v, [o0 + p // 2 * B0, o1, o2], OP)


#: (dtype, op, shape, block, offsets of programs 0 and 1, programs); an innermost offset that is not a multiple
#: of 16 (5, 20, 12) keeps the portable path (the engine needs the box to start at a multiple of 16 bytes)
CASES = [
    ("float32", "add", (700, ), (256, ), (-32, ), 8),
    ("int32", "min", (300, ), (128, ), (5, ), 6),
    ("float16", "add", (5, 7, 40), (2, 4, 64), (-1, -2, -16), 8),
    ("int32", "add", (5, 7, 40), (2, 4, 32), (1, 3, 20), 6),
    ("int64", "max", (3, 5, 24), (2, 4, 16), (-1, 2, 0), 4),
    ("int32", "and", (3, 5, 40), (2, 4, 32), (0, -1, 16), 4),
    ("int32", "or", (3, 5, 40), (2, 4, 32), (1, 0, -16), 4),
    ("int64", "xor", (3, 5, 24), (2, 4, 16), (0, 3, 12), 4),
]
_NP_OP = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and, "or": np.bitwise_or,
          "xor": np.bitwise_xor}


def _ids(c):
    return f"{c[0]}-{c[1]}-{len(c[2])}d"


def _values(rng, shape, dtype):
    if dtype.kind == "f":
        return rng.integers(-8, 8, shape).astype(dtype)
    return rng.integers(-2**20, 2**20, shape).astype(dtype)


def _run(dev, dtype_name, op, shape, block, offsets, programs, mode):
    rng = np.random.default_rng(programs * 7 + len(shape))
    dtype = np.dtype(dtype_name)
    width = (shape[-1] // 16 + 1) * 16
    sentinel = np.nan if dtype.kind == "f" else 77
    y = np.full(shape[:-1] + (width, ), sentinel, dtype)
    y[..., :shape[-1]] = _values(rng, shape, dtype)
    x = _values(rng, (programs, ) + block, dtype)
    want = y.copy()         # (the emulator's arrays are the kernel's)
    dx, dy = dev.put(x), dev.put(y)
    strides = [int(np.prod(y.shape[d + 1:])) for d in range(len(shape) - 1)]
    target = TensorDescriptor(dy, list(shape), strides + [1], list(block)) if mode == HOST else dy
    consts = {f"B{d}": b for d, b in enumerate(block)}
    kernel = _reduce1 if len(shape) == 1 else _reduce3
    k = kernel[(programs, )](dx, target, *shape, *strides, *offsets, 0, OP=op, MODE=mode, num_warps=4, **consts)
    view = want[..., :shape[-1]]
    for p in range(programs):
        starts = (offsets[0] + p // 2 * block[0], ) + tuple(offsets[1:])
        src, dst = [], []
        for s, b, n in zip(starts, block, shape):
            lo, hi = max(s, 0), min(s + b, n)
            if lo >= hi:
                break
            dst.append(slice(lo, hi))
            src.append(slice(lo - s, hi - s))
        else:
            view[tuple(dst)] = _NP_OP[op](view[tuple(dst)], x[(p, *src)])
    np.testing.assert_array_equal(dev.get(dy), want)
    return k


def _sibling(name):
    """A module of this folder (pytest imports test files with --import-mode=importlib: the folder is not on
    sys.path, so a plain import of a sibling fails)."""
    import importlib.util
    import os
    import sys
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, os.path.join(os.path.dirname(__file__), name + ".py"))
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


@pytest.mark.parametrize("mode", [OWN, BUILT, HOST], ids=["own", "built", "host"])
@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_tma_rank_reductions(dev, case, mode):
    _sibling("test_tma_rank")._opted_in(dev)
    k = _run(dev, *case, mode)
    if dev.name == "cuda":
        require_sm90("TMA")
        rank = len(case[2])
        op = case[1]
        start_provably_aligned = _sibling("test_tma_rank").start_provably_aligned
        bulk = f"cp.reduce.async.bulk.tensor.{rank}d.global.shared::cta.{op}.bulk_group" in k.asm["ptx"]
        assert bulk == start_provably_aligned(case[3], case[4])
