"""The layout algebra of the GPU lowering (pure Python: no MLIR, no GPU)."""
from __future__ import annotations

import itertools

import pytest

from tritium.gpu import layout as L


def elements(lay: L.Layout) -> dict[tuple, set]:
    """coordinates -> the set of (register, lane, warp) holding them."""
    out: dict[tuple, set] = {}
    for r, l, w in itertools.product(range(lay.num_regs), range(lay.warp_size), range(lay.num_warps)):
        out.setdefault(lay.coords(r, l, w), set()).add((r, l, w))
    return out


@pytest.mark.parametrize("shape,spt,tpw,wpc,order", [((64, 64), (1, 4), (4, 8), (4, 1), (1, 0)),
                                                     ((16, 8), (2, 1), (8, 4), (1, 2), (0, 1)),
                                                     ((8, ), (1, ), (32, ), (2, ), (0, ))])
def test_blocked_covers_every_element(shape, spt, tpw, wpc, order):
    lay = L.blocked(shape, spt, tpw, wpc, order)
    got = elements(lay)
    want = set(itertools.product(*[range(s) for s in shape]))
    assert set(got) == want
    assert L.parse(lay.text(), shape) == lay


def test_blocked_thread_order_matches_triton():
    lay = L.blocked((64, 64), (1, 4), (4, 8), (4, 1), (1, 0))
    # lane 1 holds columns 4..7 of row 0; lane 8 starts row 1; warp 1 starts row 4; the tile (16 x 32)
    # repeats along the fastest dimension first: register 4 is column 32, register 8 row 16
    assert [lay.coords(r, 1, 0) for r in range(4)] == [(0, 4), (0, 5), (0, 6), (0, 7)]
    assert lay.coords(0, 8, 0) == (1, 0) and lay.coords(0, 0, 1) == (4, 0)
    assert lay.coords(4, 0, 0) == (0, 32) and lay.coords(8, 0, 0) == (16, 0)
    assert lay.reg_run(1) == 4 and lay.reg_run(0) == 1


def test_slice_and_broadcast_are_register_renamings():
    lay = L.blocked((32, 64), (2, 4), (4, 8), (2, 2), (1, 0))
    rows = L.slice_layout(lay, 1)                              # a reduction along the columns
    assert rows.shape == (32, ) and rows.num_regs == lay.num_regs // 4
    back = L.expand_dims(rows, 1)                              # [:, None]
    assert L.reg_map(back, L.restrict(lay, (32, 1))) is not None
    assert L.reg_map(lay, L.permute(L.permute(lay, (1, 0)), (1, 0))) == list(range(lay.num_regs))


def test_reshape_and_join_keep_the_elements():
    lay = L.blocked((8, 16), (1, 2), (8, 4), (1, 1), (1, 0))
    flat = L.reshape(lay, (128, ))
    for r, l in itertools.product(range(lay.num_regs), range(32)):
        i, j = lay.coords(r, l, 0)
        assert flat.coords(r, l, 0) == (i * 16 + j, )
    joined = L.join(lay)
    half, bit = L.split(joined)
    assert half == lay and bit == len(lay.reg)
    cat = L.cat(lay)
    assert cat.coords(lay.num_regs, 0, 0) == (8, 0)


def test_reg_map_refuses_moves_between_threads():
    a = L.blocked((32, 32), (1, 4), (8, 4), (4, 1), (1, 0))
    b = L.blocked((32, 32), (4, 1), (4, 8), (1, 4), (0, 1))
    assert L.reg_map(a, b) is None


def test_text_form_round_trips_linear_layouts():
    lay = L.Layout((16, 8), [(0, 1), (8, 0)], [(0, 2), (0, 4), (1, 0), (2, 0), (4, 0)], [])
    assert L.parse(lay.text(), (16, 8)) == lay
    with pytest.raises(ValueError, match="cannot read layout"):
        L.parse("mma{}", (16, 8))
