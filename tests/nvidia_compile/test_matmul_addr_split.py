"""tiles.split_offset, element by element: for threads of each layout below (each lane and warp bit alone and a
sample of the others), (this thread's part, XORed with the bits it shares with the register's constant) + the rest
of the constant is the swizzled offset SmemLayout.offset gives the element. Pure arithmetic on literals: no LLVM,
no ptxas, no GPU."""
from __future__ import annotations

import itertools
import random

import pytest

from tritium.gpu import layout as L
from tritium.gpu.lower.shared import SmemLayout
from tritium.gpu.lower.tiles import split_offset


class _Lit:
    """The context's integer helpers, on literals only (what SmemLayout.offset and split_offset call)."""

    def __init__(self, lay: L.Layout, lane: int, warp: int) -> None:
        self.lay, self.lane_i, self.warp_i = lay, lane, warp
        self.fn = self

    def iadd(self, a: str, b: str) -> str:
        return str(int(a) + int(b))

    def imul(self, a: str, c: int) -> str:
        return str(int(a) * c)

    def thread_part(self, lay: L.Layout, d: int) -> str:
        return str(L.Layout.combine(lay, lay.lane, self.lane_i)[d] ^ L.Layout.combine(lay, lay.warp, self.warp_i)[d])

    def inst(self, text: str) -> str:           # only "xor i32 A, B" on literals reaches here
        op, _, args = text.partition(" i32 ")
        a, b = (int(x) for x in args.split(", "))
        assert op == "xor"
        return str(a ^ b)


LAYOUTS = [
    # cp.async layouts of a matmul's A (128x64) and B (64x128 / 32x256) fp16 stages at 4 and 8 warps
    ((128, 64), [1, 8], [4, 8], [8, 1], [1, 0], 1),
    ((128, 64), [1, 8], [4, 8], [4, 1], [1, 0], 1),
    ((64, 128), [1, 8], [2, 16], [8, 1], [1, 0], 1),
    ((32, 256), [1, 8], [1, 32], [4, 1], [1, 0], 1),
    ((32, 256), [1, 8], [1, 32], [1, 4], [1, 0], 1),
    ((256, 64), [1, 8], [4, 8], [2, 4], [1, 0], 1),
    # column-major (order [0, 1]), a 1-byte and a 4-byte element type, a rank-3 tile
    ((64, 64), [8, 1], [16, 2], [1, 4], [0, 1], 0),
    ((128, 128), [1, 16], [8, 4], [4, 2], [1, 0], 1),
    ((64, 32), [1, 4], [8, 4], [2, 2], [1, 0], 1),
    ((2, 64, 64), [1, 1, 8], [1, 4, 8], [2, 2, 1], [2, 1, 0], 2),
]
ELEMENT_BYTES = {(128, 128): 1, (64, 32): 4}


@pytest.mark.parametrize("shape,spt,tpw,wpc,order,fast", LAYOUTS)
def test_split_matches_the_offset_of_every_element(shape, spt, tpw, wpc, order, fast):
    lay = L.blocked(shape, spt, tpw, wpc, order)
    smem = SmemLayout(tuple(shape), fast, ELEMENT_BYTES.get(tuple(shape), 2))
    constants = set()
    # every lane and warp bit alone, and a fixed sample of combinations (all threads took ~50 s on a busy host)
    singles = [(1 << i, 0) for i in range(len(lay.lane))] + [(0, 1 << i) for i in range(len(lay.warp))]
    sample = random.Random(0).sample(list(itertools.product(range(lay.warp_size), range(lay.num_warps))), 24)
    for lane, warp in [(0, 0), (lay.warp_size - 1, lay.num_warps - 1)] + singles + sample:
        ctx = _Lit(lay, lane, warp)
        for r in lay.unique_regs():
            want = smem.offset(ctx, [str(x) for x in lay.coords(r, lane, warp)])
            got = split_offset(ctx, smem, lay, r)
            assert got is not None
            assert int(got[0]) + got[1] == int(want), (r, lane, warp)
            constants.add(got[1])
    # the point of it: register groups differ by constants, not only by registers
    assert len(constants) > 1 or lay.num_regs == 1


def test_a_dimension_not_a_power_of_two_keeps_the_general_path():
    lay = L.blocked((64, 64), [1, 8], [4, 8], [4, 1], [1, 0])
    assert split_offset(_Lit(lay, 0, 0), SmemLayout((48, 64), 1, 2), lay, 1) is None
