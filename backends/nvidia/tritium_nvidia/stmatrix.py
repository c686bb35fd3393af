"""Register tiles of 16-bit elements written to a swizzled shared tile with ``stmatrix`` (sm_90).

A descriptor store's epilogue (examples/08: the fp32 accumulator converted to fp16/bf16, then copied out by the
copy engine) writes the block to shared memory first. Element by element that is one ``st.shared.b32`` per two
outputs (64 STS.32 per thread for a 128x256 tile at 8 warps); Triton 3.6 writes the same tile with 16
``stmatrix.sync.aligned.m8n8.x4`` per thread. One ``stmatrix .x4`` stores four 8x8 matrices of 16-bit
elements: in each, lane ``t`` holds two adjacent elements of row ``t // 4`` (columns ``2 * (t % 4)`` and
``+1``), which is how the tensor cores' accumulator fragments hold a tile, and lanes ``8j .. 8j + 7`` give the
addresses of matrix ``j``'s eight rows (16 contiguous bytes each, which the swizzled layout keeps whole: a
16-byte chunk is its unit).

So a layout qualifies when register bit 0 and lane bits 0-1 step the contiguous dimension by 1, 2 and 4, and no
other basis moves it by less than 8 (rows stay whole chunks): then lanes bits 2-4 pick a matrix's row and
register bits 1-2 pick the matrix. The rows' addresses are those of an *address layout* (lane bits 0-2 = the
value's lane bits 2-4, lane bits 3-4 = its register bits 1-2, one register per group of eight), which
:func:`~tritium.gpu.lower.tiles.tile_ptr` turns into [this thread's offset + a constant] per group, as it
does for the element-wise stores.
"""
from __future__ import annotations

from typing import Any, Optional

from tritium.gpu import layout as L
from tritium.gpu.lower.context import Context
from tritium.gpu.lower.shared import SharedTile, SmemLayout
from tritium.gpu.lower.tiles import tile_ptr
from tritium.gpu.target import pack

#: storage types of 16 bits (the instruction moves b16 elements)
_B16 = ("half", "bfloat", "i16")


def address_layout(lay: L.Layout, smem: SmemLayout) -> Optional[L.Layout]:
    """The layout whose element at (group ``g``, lane, warp) is the first element of the matrix row that lane
    addresses in the ``g``th ``stmatrix .x4`` of a value of layout ``lay``; None where ``lay`` does not have
    the fragments' shape (module doc)."""
    if lay.rank != len(smem.shape) or smem.eb != 2 or smem.chunk != 8 or len(lay.lane) != 5 or len(lay.reg) < 3:
        return None
    f = smem.fast

    def unit(v: int) -> tuple:
        return tuple(v if d == f else 0 for d in range(lay.rank))
    if lay.reg[0] != unit(1) or lay.lane[0] != unit(2) or lay.lane[1] != unit(4):
        return None
    rest = [lay.reg[1], lay.reg[2], *lay.lane[2:], *lay.reg[3:], *lay.warp]
    # a zero basis is a copy (the element-wise path stores it once); a basis moving the contiguous dimension by
    # less than a chunk would split a matrix row over two chunks
    if any(not any(b) or b[f] & 7 for b in rest):
        return None
    return L.Layout(lay.shape, lay.reg[3:], [*lay.lane[2:], lay.reg[1], lay.reg[2]], lay.warp)


def write_matrices(ctx: Context, t: Any, tile: SharedTile) -> bool:
    """Store ``t`` (a Tensor) into ``tile`` with ``stmatrix .x4``; False (nothing emitted) where it does not
    qualify."""
    if tile.ty not in _B16 or t.ty != tile.ty or t.layout.num_regs % 8:
        return False
    addr_lay = address_layout(t.layout, tile.smem)
    if addr_lay is None:
        return False
    fn = ctx.fn
    vt = f"<2 x {tile.ty}>"
    for g in range(t.layout.num_regs // 8):
        p = tile_ptr(ctx, tile, addr_lay, g)
        addr = fn.inst(f"ptrtoint {ctx.target.shared_ptr} {p} to i32")
        words = []
        for j in range(4):
            r = 8 * g + 2 * j
            words.append(fn.inst(f"bitcast {vt} {pack(fn, [t.regs[r], t.regs[r + 1]], tile.ty)} to i32"))
        args = ", ".join(f"i32 {x}" for x in [addr, *words])
        fn.emit(f'call void asm sideeffect "stmatrix.sync.aligned.m8n8.x4.shared.b16 [$0], {{$1, $2, $3, $4}};", '
                f'"r,r,r,r,r,~{{memory}}"({args})')
    return True
