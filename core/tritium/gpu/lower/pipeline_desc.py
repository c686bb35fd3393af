"""Software-pipelined tensor-descriptor loads (see pipeline.py): their copies into a stage.

The block is contiguous along its last dimension and its rows start 16-byte aligned (the descriptor's base
and other strides are 16-byte multiples by its rules), so copies are vectors along that dimension as wide as
the last index's divisibility allows; a vector that runs past the end of the dimension reads only its
in-bounds bytes (``src_bytes``: the target zero-fills the rest); other dimensions' bounds predicate whole
vectors off (zeros).
"""
from __future__ import annotations

from typing import Any, Optional

from .blockptr import block_access, i64
from .context import Context
from .shared import SharedTile
from .tiles import tile_ptr, tile_vec


def squeezed_to_2d(res: Any) -> Optional[Any]:
    """The result of the one ``tt.reshape`` that uses ``res`` (a block of rank 3 to 5 whose leading dimensions
    are 1, a batched matmul's ``desc.load([z, m, k]).reshape(BM, BK)``) when it keeps only the last two
    dimensions, else None. The stage holds the same bytes either way (its rows are the leading dimensions
    flattened), so the reshape is a view of it (shape.py)."""
    from ..assign import tensor_shape
    shape = tensor_shape(res.type)
    uses = list(res.uses)
    if shape is None or not 3 <= len(shape) <= 5 or any(d != 1 for d in shape[:-2]) or len(uses) != 1:
        return None
    o = uses[0].owner
    if o.name != "tt.reshape" or tensor_shape(o.results[0].type) != tuple(shape[-2:]):
        return None
    return o.results[0]


def issue_descriptor_copies(lo: Context, o: Any, parts: dict, desc: Any, idx: list, tile_proto: SharedTile,
                            stage_bytes: int, stage: str, valid: Optional[str]) -> None:
    """Start the copies of one pipelined descriptor load into ``stage`` (committed by the caller)."""
    from .convert import _aligned_vec
    fn = lo.fn
    lay = lo.layout_of(o.results[0])
    smem = tile_proto.smem
    eb = smem.eb
    last = lay.rank - 1
    # the index along the contiguous dimension decides the alignment of every vector's first element
    div = lo.axis.info(parts["indices"][last]).div[0] if smem.fast == last else 1
    vec = min(lay.reg_run(last), max(1, 16 // eb), max(1, div)) if smem.fast == last else 1
    vec = _aligned_vec(lay, last, 1 << (max(vec, 1).bit_length() - 1))
    vec = min(vec, tile_vec(lo, lay, smem)) if smem.fast == last else 1
    addrs, masks = block_access(lo, desc, idx, lay, list(range(last)))
    limit = i64(lo, desc.shape[last])
    first = i64(lo, idx[last])
    base = lo.smem_ptr(tile_proto.base, lo.imul(stage, stage_bytes))
    tile = SharedTile(base, smem, tile_proto.ty)
    unique = set(lay.unique_regs())
    vecs = []
    for g in range(0, lay.num_regs, vec):
        if g not in unique:
            continue
        c = lo.coord(lay, g, last)
        col = fn.inst(f"add i64 {first}, {c if c.isdigit() else fn.inst(f'zext i32 {c} to i64')}")
        # elements of this vector inside the last dimension: clamp(limit - col, 0, vec)
        left = fn.inst(f"sub i64 {limit}, {col}")
        left = fn.inst(f"select i1 {fn.inst(f'icmp slt i64 {left}, 0')}, i64 0, i64 {left}")
        left = fn.inst(f"select i1 {fn.inst(f'icmp sgt i64 {left}, {vec}')}, i64 {vec}, i64 {left}")
        nbytes = fn.inst(f"trunc i64 {fn.inst(f'mul i64 {left}, {eb}')} to i32")
        vecs.append((tile_ptr(lo, tile, lay, g), addrs[g], lo.and_pred(masks[g], valid), nbytes))

    def copies() -> None:
        for dst, src, pred, nbytes in vecs:
            lo.target.async_copy(fn, lo.module, dst, src, vec * eb, pred, src_bytes=nbytes)

    from ..target import guarded
    guarded(fn, lo.unique_pred(lay), copies)      # committed with the iteration's other copies
