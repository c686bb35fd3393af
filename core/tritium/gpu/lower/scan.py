"""Inclusive scans along one axis of a tile whose axis coordinate is (register part) + (lane part) +
(warp part), least significant first (see ``reduce.scan_layout``): a sequential scan in each thread,
a Hillis-Steele scan of the threads' totals across the lanes, then the totals of earlier warps through
shared memory. Reverse scans run the same steps from the other end."""
from __future__ import annotations

from typing import Any, Callable

from .. import layout as L
from ...llvmir.types import BYTES
from ..target import guarded
from .context import Context
from .convert import from_storage, storage_type, to_storage
from .shuffle import shuffle
from .values import Tensor

Combine = Callable[[list[str], list[str]], list[str]]


def scan_tiles(lo: Context, srcs: list[Tensor], lay: L.Layout, axis: int, reverse: bool,
               combine: Combine) -> list[list[str]]:
    fn = lo.fn
    n = len(srcs)
    tys = [s.ty for s in srcs]
    axis_bits = [i for i, b in enumerate(lay.reg) if b[axis]]
    out_bits = [i for i, b in enumerate(lay.reg) if not b[axis]]
    R = 1 << len(axis_bits)
    order = list(range(R))[::-1] if reverse else list(range(R))
    outs: list[list[str]] = [[""] * lay.num_regs for _ in range(n)]
    totals: list[list[str]] = []          # per column, the thread's inclusive total
    columns: list[list[int]] = []
    for ro in range(1 << len(out_bits)):
        base = L.scatter_bits(ro, out_bits)
        regs = [base | L.scatter_bits(k, axis_bits) for k in order]
        acc = None
        for r in regs:
            vals = [s.regs[r] for s in srcs]
            acc = vals if acc is None else combine(acc, vals)
            for i in range(n):
                outs[i][r] = acc[i]
        totals.append(acc)
        columns.append(regs)

    def select(c: str, a: list[str], b: list[str]) -> list[str]:
        return [x if x == y else fn.inst(f"select i1 {c}, {t} {x}, {t} {y}") for x, y, t in zip(a, b, tys)]

    # lanes along the axis
    lane_bits = [i for i, b in enumerate(lay.lane) if b[axis]]
    prefix: list[list[str]] = [[] for _ in totals]
    has_prefix: list[str] = ["false" for _ in totals]
    if lane_bits:
        lb0, T = lane_bits[0], 1 << len(lane_bits)
        la = fn.pinst(f"lshr i32 {lo.lane}, {lb0}") if lb0 else lo.lane
        la = fn.pinst(f"and i32 {la}, {T - 1}")
        pos = fn.pinst(f"sub i32 {T - 1}, {la}") if reverse else la     # position in scan order
        kind = "down" if reverse else "up"
        for c, tot in enumerate(totals):
            incl = tot
            d = 1
            while d < T:
                other = [shuffle(lo, kind, v, t, str(d << lb0)) for v, t in zip(incl, tys)]
                ok = fn.inst(f"icmp uge i32 {pos}, {d}")
                incl = select(ok, combine(other, incl), incl)
                d <<= 1
            excl = [shuffle(lo, kind, v, t, str(1 << lb0)) for v, t in zip(incl, tys)]
            prefix[c] = excl
            has_prefix[c] = fn.inst(f"icmp ugt i32 {pos}, 0")
            totals[c] = incl
    # warps along the axis
    warp_bits = [i for i, b in enumerate(lay.warp) if b[axis]]
    if warp_bits:
        W = 1 << len(warp_bits)
        widx = lo.bits_value([(lo.warp, [(1 << j) if i in warp_bits else 0 for i, j in
                                          zip(range(len(lay.warp)), L.bit_ranks(len(lay.warp), warp_bits))])])
        wpos = fn.pinst(f"sub i32 {W - 1}, {widx}") if reverse else widx
        out_lay = L.slice_layout(lay, axis)
        shape = out_lay.shape if out_lay.rank else (1, )
        sizes = [BYTES[storage_type(lo, t)] for t in tys]
        ncol = 1
        for s in shape:
            ncol *= s
        offsets, total = [], 0
        for sz in sizes:
            total = (total + sz - 1) // sz * sz
            offsets.append(total)
            total += ncol * W * sz
        base = lo.scratch(total)
        last = None
        if lane_bits:
            T = 1 << len(lane_bits)
            la = fn.pinst(f"lshr i32 {lo.lane}, {lane_bits[0]}") if lane_bits[0] else lo.lane
            la = fn.pinst(f"and i32 {la}, {T - 1}")
            last = fn.pinst(f"icmp eq i32 {la}, {0 if reverse else T - 1}")
        idxs = []
        for c, tot in enumerate(totals):
            idx = lo.linear_index(out_lay, c, shape) if out_lay.rank else "0"
            idxs.append(idx)
            slot = lo.iadd(lo.imul(idx, W), widx)
            for i, t in enumerate(tys):
                st = storage_type(lo, t)
                p = lo.smem_ptr(base, lo.iadd(lo.imul(slot, sizes[i]), str(offsets[i])))
                v = to_storage(lo, tot[i], t)
                guarded(fn, last, lambda p=p, v=v, st=st: fn.emit(
                    f"store {st} {v}, {lo.target.shared_ptr} {p}, align {BYTES[st]}"))
        lo.target.barrier(fn)
        for c, idx in enumerate(idxs):
            acc: Any = None
            valid = "false"
            for w in (range(W - 1, -1, -1) if reverse else range(W)):
                slot = lo.iadd(lo.imul(idx, W), str(w))
                vals = []
                for i, t in enumerate(tys):
                    st = storage_type(lo, t)
                    p = lo.smem_ptr(base, lo.iadd(lo.imul(slot, sizes[i]), str(offsets[i])))
                    vals.append(from_storage(lo, fn.inst(f"load {st}, {lo.target.shared_ptr} {p}, align {BYTES[st]}"), t))
                wp = (W - 1 - w) if reverse else w
                before = fn.inst(f"icmp ult i32 {wp}, {wpos}")
                if acc is None:
                    acc, valid = vals, before
                else:
                    merged = select(valid, combine(acc, vals), vals)
                    acc = select(before, merged, acc)
                    valid = fn.inst(f"or i1 {valid}, {before}")
            # the warp prefix goes before the lane prefix
            if has_prefix[c] == "false":
                prefix[c], has_prefix[c] = acc, valid
            else:
                both = select(has_prefix[c], combine(acc, prefix[c]), acc)
                prefix[c] = select(valid, both, prefix[c])
                has_prefix[c] = fn.inst(f"or i1 {valid}, {has_prefix[c]}")
        lo.scratch_read_done()
    for c, regs in enumerate(columns):
        if has_prefix[c] == "false":
            continue
        for r in regs:
            vals = [outs[i][r] for i in range(n)]
            merged = select(has_prefix[c], combine(prefix[c], vals), vals)
            for i in range(n):
                outs[i][r] = merged[i]
    return outs
