"""Tensor descriptors of every rank (1 to 5) loaded and stored whole, outside any pipelined loop: on sm_90 through
TMA (descriptor_load.py, descriptor_bulk.py: ``cp.async.bulk.tensor.{1..5}d`` with an mbarrier, bulk tensor
stores), elsewhere and on the GPU emulator through the portable per-element path, with the same results.

Each kernel loads one block per program at offsets that start before the tensor and run past its end (the
descriptor's padding, zero or NaN, must appear there), writes the block out element by element (so the padding
is seen), and stores ``block + 1`` back through a second descriptor (elements outside the tensor dropped). The
arrays behind the descriptors are wider than the descriptors' shapes and hold a sentinel there, which must
neither be read nor overwritten. Descriptors come three ways: made in the kernel from its arguments (the
launcher encodes their maps), made from a value computed in the kernel (the program builds the map), and host
``TensorDescriptor`` arguments. fp16, fp32 and int8; results against numpy."""
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
def _rank1(x, y, out, n0, o0, zero, B0: tl.constexpr, PAD: tl.constexpr, MODE: tl.constexpr):
    if MODE == 2:
        dx = x
        dy = y
    else:
        if MODE == 1:
            n0 = n0 + zero
        dx = tl.make_tensor_descriptor(x, [n0], [1], [B0], padding_option=PAD)
        dy = tl.make_tensor_descriptor(y, [n0], [1], [B0])
    p = tl.program_id(0)
    v = dx.load([o0 + p * B0])
    tl.store(out + p * B0 + tl.arange(0, B0), v)
    dy.store([o0 + p * B0], v + 1)


@triton.jit
def _rank2(x, y, out, n0, n1, s0, o0, o1, zero, B0: tl.constexpr, B1: tl.constexpr, PAD: tl.constexpr,
           MODE: tl.constexpr):
    if MODE == 2:
        dx = x
        dy = y
    else:
        if MODE == 1:
            n0 = n0 + zero
        dx = tl.make_tensor_descriptor(x, [n0, n1], [s0, 1], [B0, B1], padding_option=PAD)
        dy = tl.make_tensor_descriptor(y, [n0, n1], [s0, 1], [B0, B1])
    p = tl.program_id(0)
    v = dx.load([o0 + p * B0, o1])
    tl.store(out + p * (B0 * B1) + tl.arange(0, B0 * B1), tl.reshape(v, [B0 * B1]))
    dy.store([o0 + p * B0, o1], v + 1)


@triton.jit
def _rank3(x, y, out, n0, n1, n2, s0, s1, o0, o1, o2, zero, B0: tl.constexpr, B1: tl.constexpr,
           B2: tl.constexpr, PAD: tl.constexpr, MODE: tl.constexpr):
    if MODE == 2:
        dx = x
        dy = y
    else:
        if MODE == 1:
            n0 = n0 + zero
        dx = tl.make_tensor_descriptor(x, [n0, n1, n2], [s0, s1, 1], [B0, B1, B2], padding_option=PAD)
        dy = tl.make_tensor_descriptor(y, [n0, n1, n2], [s0, s1, 1], [B0, B1, B2])
    p = tl.program_id(0)
    v = dx.load([o0 + p * B0, o1, o2])
    tl.store(out + p * (B0 * B1 * B2) + tl.arange(0, B0 * B1 * B2), tl.reshape(v, [B0 * B1 * B2]))
    dy.store([o0 + p * B0, o1, o2], v + 1)


@triton.jit
def _rank4(x, y, out, n0, n1, n2, n3, s0, s1, s2, o0, o1, o2, o3, zero, B0: tl.constexpr, B1: tl.constexpr,
           B2: tl.constexpr, B3: tl.constexpr, PAD: tl.constexpr, MODE: tl.constexpr):
    if MODE == 2:
        dx = x
        dy = y
    else:
        if MODE == 1:
            n0 = n0 + zero
        dx = tl.make_tensor_descriptor(x, [n0, n1, n2, n3], [s0, s1, s2, 1], [B0, B1, B2, B3], padding_option=PAD)
        dy = tl.make_tensor_descriptor(y, [n0, n1, n2, n3], [s0, s1, s2, 1], [B0, B1, B2, B3])
    p = tl.program_id(0)
    v = dx.load([o0 + p * B0, o1, o2, o3])
    n: tl.constexpr = B0 * B1 * B2 * B3
    tl.store(out + p * n + tl.arange(0, n), tl.reshape(v, [n]))
    dy.store([o0 + p * B0, o1, o2, o3], v + 1)


@triton.jit
def _rank5(x, y, out, n0, n1, n2, n3, n4, s0, s1, s2, s3, o0, o1, o2, o3, o4, zero, B0: tl.constexpr,
           B1: tl.constexpr, B2: tl.constexpr, B3: tl.constexpr, B4: tl.constexpr, PAD: tl.constexpr,
           MODE: tl.constexpr):
    if MODE == 2:
        dx = x
        dy = y
    else:
        if MODE == 1:
            n0 = n0 + zero
        dx = tl.make_tensor_descriptor(x, [n0, n1, n2, n3, n4], [s0, s1, s2, s3, 1], [B0, B1, B2, B3, B4],
                                       padding_option=PAD)
        dy = tl.make_tensor_descriptor(y, [n0, n1, n2, n3, n4], [s0, s1, s2, s3, 1], [B0, B1, B2, B3, B4])
    p = tl.program_id(0)
    v = dx.load([o0 + p * B0, o1, o2, o3, o4])
    n: tl.constexpr = B0 * B1 * B2 * B3 * B4
    tl.store(out + p * n + tl.arange(0, n), tl.reshape(v, [n]))
    dy.store([o0 + p * B0, o1, o2, o3, o4], v + 1)


KERNELS = {1: _rank1, 2: _rank2, 3: _rank3, 4: _rank4, 5: _rank5}

#: (dtype, shape, block, offsets of program 0, padding, programs): shapes that are not multiples of the block,
#: offsets before the start and past the end; 1-D blocks longer than one box (256), 2-D rows of two 128-byte
#: panels and an outer dimension of two 256-row boxes. The copy engine needs the innermost coordinate at a
#: multiple of 16 bytes (else an illegal instruction): where the launch proves it (a multiple of 16, which the
#: launch specializes) the copies are TMA, elsewhere (5, 3, 20 below) the portable path, with the same results
CASES = [
    ("float32", (1000, ), (512, ), (-112, ), "zero", 3),
    ("int8", (300, ), (256, ), (5, ), "zero", 2),
    ("float16", (77, ), (64, ), (-16, ), "nan", 2),
    ("float16", (37, 150), (16, 128), (-5, 32), "nan", 4),
    ("float32", (600, 20), (512, 8), (-7, 3), "zero", 2),
    ("float16", (5, 7, 40), (2, 4, 64), (-1, -2, -16), "zero", 4),
    ("int8", (3, 5, 48), (2, 4, 32), (0, 3, 20), "zero", 2),
    ("float32", (3, 3, 5, 20), (2, 2, 4, 32), (1, -1, 2, -16), "nan", 2),
    ("float16", (2, 3, 3, 5, 24), (1, 2, 2, 4, 64), (0, 1, -1, 2, -16), "zero", 3),
    ("int8", (2, 2, 3, 5, 40), (1, 2, 2, 4, 32), (0, 0, 1, 2, 16), "zero", 2),
]


def _ids(c):
    return f"{c[0]}-{'x'.join(map(str, c[1]))}-blk{'x'.join(map(str, c[2]))}-{c[4]}"


def _sentinel(dtype):
    return np.nan if dtype.kind == "f" else 99


def _backing(shape, dtype, rng):
    """The array behind a descriptor of ``shape``: its last dimension padded with a sentinel to the next multiple
    of 16 elements past the shape, so every outer stride is a multiple of 16 (what specialization proves, and
    16-byte aligned as the copy engine needs)."""
    width = (shape[-1] // 16 + 1) * 16
    wide = np.full(shape[:-1] + (width, ), _sentinel(dtype), dtype)
    if dtype.kind == "f":
        wide[..., :shape[-1]] = rng.standard_normal(shape).astype(dtype)
    else:
        wide[..., :shape[-1]] = rng.integers(-20, 20, shape).astype(dtype)
    return wide


def _expected(x, shape, block, offsets, pad, programs):
    """Each program's block as the load gives it, and the descriptor's view after the stores of block + 1."""
    pad_v = np.nan if pad == "nan" else 0
    out = np.full((programs, ) + block, pad_v, x.dtype)
    view = x[..., :shape[-1]]
    stored = np.full(view.shape, _sentinel(x.dtype), x.dtype)      # y's elements no block covers keep it
    for p in range(programs):
        starts = (offsets[0] + p * block[0], ) + tuple(offsets[1:])
        src, dst = [], []
        for s, b, n in zip(starts, block, shape):
            lo, hi = max(s, 0), min(s + b, n)
            if lo >= hi:
                break
            src.append(slice(lo, hi))
            dst.append(slice(lo - s, hi - s))
        else:
            out[(p, *dst)] = view[tuple(src)]
            stored[tuple(src)] = (view[tuple(src)] + 1).astype(x.dtype)
    return out, stored


def _launch(dev, dtype_name, shape, block, offsets, pad, programs, mode):
    rng = np.random.default_rng(len(shape) * 31 + programs)
    dtype = np.dtype(dtype_name)
    x = _backing(shape, dtype, rng)
    y = np.full(x.shape, _sentinel(dtype), dtype)
    out = np.full((programs, ) + block, 7, dtype)
    dx, dy, dout = dev.put(x), dev.put(y), dev.put(out)
    strides = [int(np.prod(x.shape[d + 1:])) for d in range(len(shape) - 1)]
    consts = {f"B{d}": b for d, b in enumerate(block)}
    if mode == HOST:
        a = TensorDescriptor(dx, list(shape), strides + [1], list(block), padding=pad)
        b = TensorDescriptor(dy, list(shape), strides + [1], list(block))
    else:
        a, b = dx, dy
    k = KERNELS[len(shape)][(programs, )](a, b, dout, *shape, *strides, *offsets, 0, PAD=pad, MODE=mode,
                                          num_warps=4, **consts)
    want_out, want_y = _expected(x, shape, block, offsets, pad, programs)
    got_y = dev.get(dy)
    np.testing.assert_array_equal(dev.get(dout), want_out)
    np.testing.assert_array_equal(got_y[..., :shape[-1]], want_y)
    # the columns past the descriptor's shape are never written
    np.testing.assert_array_equal(got_y[..., shape[-1]:], np.full_like(got_y[..., shape[-1]:], _sentinel(dtype)))
    return k


def _opted_in(dev) -> None:
    """The GPU side runs with TRITIUM_NVIDIA_TMA_RANKS on (the default since the seventh session). Its H200 runs
    (2026-12-02) found two causes of "an illegal instruction": boxes starting off a 16-byte multiple
    (descriptor_bulk.aligned_start) and bulk stores or reductions at a negative coordinate, which Triton 3.6's
    kernels hit too (descriptor_store.py checks the start); and stores writing past rows that end off a 16-byte
    boundary (descriptor_store.rows_end_aligned). With all three handled, the 60 cases here passed on the H200
    (backends/nvidia/notes/PERF.md, sixth session). test_tma_rank_reduce.py uses this too."""
    if dev.name != "cuda":
        return
    from tritium_nvidia.knobs import nvidia
    if not nvidia.tma_ranks:
        pytest.skip("TMA of every rank is off (TRITIUM_NVIDIA_TMA_RANKS=0): these cases test it")


def start_provably_aligned(block, offsets) -> bool:
    """The innermost coordinate of every program's block is a multiple of 16 elements as the launch specializes
    its arguments (hence of 16 bytes): the copy engine may copy it (descriptor_bulk.aligned_start)."""
    return offsets[-1] % 16 == 0 and (len(block) > 1 or block[0] % 16 == 0)


@pytest.mark.parametrize("mode", [OWN, BUILT, HOST], ids=["own", "built", "host"])
@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_tma_rank_loads_and_stores(dev, case, mode):
    _opted_in(dev)
    k = _launch(dev, *case, mode)
    if dev.name == "cuda":
        require_sm90("TMA")
        ptx = k.asm["ptx"]
        rank = len(case[1])
        if not start_provably_aligned(case[2], case[3]):
            assert "cp.async.bulk.tensor" not in ptx
            return
        assert f"cp.async.bulk.tensor.{rank}d.shared::cluster.global.mbarrier" in ptx
        assert f"cp.async.bulk.tensor.{rank}d.global.shared::cta" in ptx
        assert ("tensormap.replace" in ptx) == (mode == BUILT)


def test_tma_rank_knob_off_is_portable(cuda):
    """TRITIUM_NVIDIA_TMA=0: the same kernels through per-element loads and stores, the same results."""
    _opted_in(type("Cuda", (), {"name": "cuda"})())
    require_sm90("TMA")
    from tritium_nvidia.knobs import nvidia

    import torch

    class _Cuda:
        name = "cuda"

        def put(self, a):
            return torch.from_numpy(a.copy()).to("cuda")

        def get(self, t):
            torch.cuda.synchronize()
            return t.cpu().numpy()
    with nvidia.scope():
        nvidia.tma = False
        for case in (CASES[0], CASES[5]):
            k = _launch(_Cuda(), *case, OWN)
            assert "cp.async.bulk.tensor" not in k.asm["ptx"]
