"""Reductions and scans: within each thread's registers, across the lanes of a warp with shuffles, across
warps through shared memory (Triton's scheme). The combine region is lowered inline as scalar code."""
from __future__ import annotations

from typing import Any, Callable

from ..._mlir import block_ops, ir
from ...llvmir.types import BYTES
from .. import layout as L
from ..assign import blocked_for, tensor_shape
from ..target import guarded
from .convert import from_storage, storage_type, to_storage
from .operands import split_operands
from .context import Context
from .optable import GPU_OPS
from .scan import scan_tiles
from .shuffle import shuffle
from .values import Scalar, Tensor

Combine = Callable[[list[str], list[str]], list[str]]


def combiner(ctx: Context, op: Any) -> Combine:
    block = op.regions[0].blocks[0]
    body = block_ops(block)
    args = list(block.arguments)
    types = [ctx.value_type(a) for a in args]

    def combine(accs: list[str], vals: list[str]) -> list[str]:
        saved = ctx.values
        ctx.values = _Overlay(saved)
        try:
            for a, v, t in zip(args, accs + vals, types):
                ctx.values[a] = Scalar(v, t)
            for o in body:
                if o.name in ("gpu.yield", "scf.yield", "tt.reduce.return", "tt.scan.return"):
                    return [ctx.values[v].value for v in o.operands]
                ctx.lower_op(o)
        finally:
            ctx.values = saved
        raise AssertionError("combine region without a terminator")

    return combine

# -- reduce --------------------------------------------------------------------------------------------
def reducible(ctx: Context, lay: L.Layout, axis: int) -> bool:
    """Every basis runs along ``axis`` alone or not at all."""
    return all(not b[axis] or sum(1 for x in b if x) == 1 for b in lay.reg + lay.lane + lay.warp)


@GPU_OPS.lowers("tt.reduce")
def op_reduce(ctx: Context, op: Any) -> None:
    srcs_v = [v for g in split_operands(op, [f"s{i}" for i in range(8)]).values() for v in g]
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    first = ctx.tensor(srcs_v[0])
    lay = first.layout
    if not reducible(ctx, lay, axis):
        lay = blocked_for(lay.shape, [1] * lay.rank, ctx.num_warps, ctx.warp_size)
    srcs = [ctx.tensor_in(v, lay) for v in srcs_v]
    combine = combiner(ctx, op)
    accs = reduce_tiles(ctx, srcs, lay, axis, combine)
    out_lay = L.slice_layout(lay, axis)
    for i, res in enumerate(op.results):
        if tensor_shape(res.type) is None:
            ctx.values[res] = Scalar(accs[i][0], srcs[i].ty)
        else:
            ctx.set_result(op, Tensor(out_lay, accs[i], srcs[i].ty), i)


def reduce_tiles(ctx: Context, srcs: list[Tensor], lay: L.Layout, axis: int, combine: Combine) -> list[list[str]]:
    """Per operand, the registers of the result in ``slice_layout(lay, axis)``."""
    fn = ctx.fn
    n = len(srcs)
    axis_bits = [i for i, b in enumerate(lay.reg) if b[axis]]
    out_bits = [i for i, b in enumerate(lay.reg) if not b[axis]]
    outs: list[list[str]] = [[] for _ in range(n)]
    for ro in range(1 << len(out_bits)):
        base = L.scatter_bits(ro, out_bits)
        acc = None
        for k in range(1 << len(axis_bits)):
            r = base | L.scatter_bits(k, axis_bits)
            vals = [s.regs[r] for s in srcs]
            acc = vals if acc is None else combine(acc, vals)
        for i in range(n):
            outs[i].append(acc[i])
    # across lanes
    lane_bits = [i for i, b in enumerate(lay.lane) if b[axis]]
    if lane_bits:
        for ro in range(len(outs[0])):
            acc = [outs[i][ro] for i in range(n)]
            for bit in lane_bits:
                other = [shuffle(ctx, "xor", a, s.ty, str(1 << bit)) for a, s in zip(acc, srcs)]
                acc = combine(acc, other)
            for i in range(n):
                outs[i][ro] = acc[i]
    # across warps
    warp_bits = [i for i, b in enumerate(lay.warp) if b[axis]]
    if warp_bits:
        outs = _reduce_warps(ctx, srcs, lay, axis, outs, warp_bits, combine)
    return outs


def _reduce_warps(ctx: Context, srcs: list[Tensor], lay: L.Layout, axis: int, outs: list[list[str]],
                  warp_bits: list[int], combine: Combine) -> list[list[str]]:
    fn = ctx.fn
    out_lay = L.slice_layout(lay, axis)
    W = 1 << len(warp_bits)
    nout = 1
    for s in out_lay.shape:
        nout *= s
    # this warp's index along the axis
    widx = ctx.bits_value([(ctx.warp, [(1 << j) if i in warp_bits else 0 for i, j in
                                          zip(range(len(lay.warp)), L.bit_ranks(len(lay.warp), warp_bits))])])
    lane_axis = sum(1 << i for i, b in enumerate(lay.lane) if b[axis])
    sizes = [BYTES[storage_type(ctx, s.ty)] for s in srcs]
    offsets, total = [], 0
    for sz in sizes:
        total = (total + sz - 1) // sz * sz
        offsets.append(total)
        total += nout * W * sz
    base = ctx.scratch(total)
    writer = None
    if lane_axis:
        x = fn.pinst(f"and i32 {ctx.lane}, {lane_axis}")
        writer = fn.pinst(f"icmp eq i32 {x}, 0")
    out_shape = out_lay.shape if out_lay.rank else (1, )
    rows: list[str] = []
    for ro in range(len(outs[0])):
        idx = ctx.linear_index(out_lay, ro, out_shape) if out_lay.rank else "0"
        rows.append(idx)
        slot = ctx.iadd(ctx.imul(idx, W), widx)
        for i, s in enumerate(srcs):
            st = storage_type(ctx, s.ty)
            p = ctx.smem_ptr(base, ctx.iadd(ctx.imul(slot, sizes[i]), str(offsets[i])))
            v = to_storage(ctx, outs[i][ro], s.ty)
            guarded(fn, writer, lambda p=p, v=v, st=st: fn.emit(
                f"store {st} {v}, {ctx.target.shared_ptr} {p}, align {BYTES[st]}"))
    ctx.target.barrier(fn)
    result: list[list[str]] = [[] for _ in srcs]
    for ro, idx in enumerate(rows):
        acc = None
        for w in range(W):
            vals = []
            slot = ctx.iadd(ctx.imul(idx, W), str(w))
            for i, s in enumerate(srcs):
                st = storage_type(ctx, s.ty)
                p = ctx.smem_ptr(base, ctx.iadd(ctx.imul(slot, sizes[i]), str(offsets[i])))
                v = fn.inst(f"load {st}, {ctx.target.shared_ptr} {p}, align {BYTES[st]}")
                vals.append(from_storage(ctx, v, s.ty))
            acc = vals if acc is None else combine(acc, vals)
        for i in range(len(srcs)):
            result[i].append(acc[i])
    ctx.scratch_read_done()
    return result

# -- scan ----------------------------------------------------------------------------------------------
@GPU_OPS.lowers("tt.scan")
def op_scan(ctx: Context, op: Any) -> None:
    srcs_v = [v for g in split_operands(op, [f"s{i}" for i in range(8)]).values() for v in g]
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    reverse = "reverse" in op.attributes and ir.BoolAttr(op.attributes["reverse"]).value
    first = ctx.tensor(srcs_v[0])
    lay = scan_layout(ctx, first.layout, axis)
    srcs = [ctx.tensor_in(v, lay) for v in srcs_v]
    combine = combiner(ctx, op)
    outs = scan_tiles(ctx, srcs, lay, axis, reverse, combine)
    for i, res in enumerate(op.results):
        ctx.set_result(op, Tensor(lay, outs[i], srcs[i].ty), i)


def scan_layout(ctx: Context, lay: L.Layout, axis: int) -> L.Layout:
    """A layout whose axis coordinate is register part + lanes + warps, in that order of significance,
    and with no copies along the axis; else a blocked layout that is."""
    if _scan_ok(ctx, lay, axis):
        return lay
    shape = lay.shape
    threads = ctx.num_warps * ctx.warp_size
    spt = [1] * len(shape)
    numel = 1
    for s in shape:
        numel *= s
    spt[axis] = max(1, min(shape[axis], numel // threads))
    order = [axis] + [d for d in range(len(shape) - 1, -1, -1) if d != axis]
    cand = blocked_for(shape, spt, ctx.num_warps, ctx.warp_size, order)
    if _scan_ok(ctx, cand, axis):
        return cand
    spt[axis] = shape[axis]
    return blocked_for(shape, spt, ctx.num_warps, ctx.warp_size, order)


def _scan_ok(ctx: Context, lay: L.Layout, axis: int) -> bool:
    if not reducible(ctx, lay, axis):
        return False
    reg = [b[axis] for b in lay.reg if b[axis]]
    lane = [b[axis] for b in lay.lane if b[axis]]
    warp = [b[axis] for b in lay.warp if b[axis]]
    seq = reg + lane + warp
    if seq != sorted(seq) or any(seq[i] != 1 << i for i in range(len(seq))):
        return False
    if 1 << len(seq) != lay.shape[axis]:
        return False
    # lanes along the axis must be consecutive bits of the lane index (shuffles step through them)
    lb = [i for i, b in enumerate(lay.lane) if b[axis]]
    return lb == list(range(lb[0], lb[0] + len(lb))) if lb else True


class _Overlay(dict):
    """Values visible in a combine region: its own, then the enclosing kernel's."""

    def __init__(self, parent: dict) -> None:
        super().__init__()
        self.parent = parent

    def __missing__(self, key: Any) -> Any:
        return self.parent[key]

    def get(self, key: Any, default: Any = None) -> Any:
        if dict.__contains__(self, key):
            return dict.__getitem__(self, key)
        return self.parent.get(key, default)
