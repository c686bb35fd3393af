"""Shared-memory offsets by lifetime (pure Python: no MLIR, no GPU)."""
from __future__ import annotations

import itertools
import random

from tritium.gpu.lower.smem_alloc import SharedAllocator


def _check(alloc: SharedAllocator) -> None:
    for a, b in itertools.combinations(alloc.buffers, 2):
        if a.overlaps(b):
            assert a.offset + a.size <= b.offset or b.offset + b.size <= a.offset, (a, b)
    for b in alloc.buffers:
        assert b.offset % b.align == 0


def test_buffers_that_are_never_live_together_share_bytes():
    alloc = SharedAllocator()
    loop1 = alloc.open(96 * 1024, 1024)       # pipeline stages of a first loop
    tmp = alloc.open(32 * 1024, 1024)         # an operand written to scratch inside it
    alloc.close(tmp)
    alloc.close(loop1)
    red = alloc.open(512, 128)                # a reduction between the loops
    alloc.close(red)
    loop2 = alloc.open(96 * 1024, 1024)       # the second loop's stages
    tmp2 = alloc.open(32 * 1024, 1024)
    alloc.close(tmp2)
    alloc.close(loop2)
    assert alloc.assign() == 128 * 1024
    _check(alloc)
    offs = [b.offset for b in alloc.buffers]
    assert offs[loop1] == offs[loop2] and offs[tmp] == offs[tmp2] != offs[loop1]


def test_growing_a_live_buffer_and_buffers_left_open():
    alloc = SharedAllocator()
    a = alloc.open(100, 128)
    alloc.grow(a, 3000, 1024)
    b = alloc.open(64, 128)                   # never closed: live to the end
    alloc.close(a)
    c = alloc.open(10, 16)
    assert alloc.assign() == 3072 + 64
    _check(alloc)
    assert alloc.buffers[b].offset == 3072 and alloc.buffers[c].offset == 0


def test_random_lifetimes_never_overlap_in_memory():
    rng = random.Random(3)
    for _ in range(200):
        alloc = SharedAllocator()
        live: list[int] = []
        for _ in range(rng.randrange(1, 30)):
            if live and rng.random() < 0.45:
                alloc.close(live.pop(rng.randrange(len(live))))
            else:
                live.append(alloc.open(rng.randrange(1, 5000), rng.choice([16, 128, 1024])))
        total = alloc.assign()
        _check(alloc)
        assert total == max(b.offset + b.size for b in alloc.buffers)
        assert total <= sum(b.size + b.align for b in alloc.buffers)
