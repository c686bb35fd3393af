"""Loads, stores and atomics on global memory; ``gather`` and ``histogram`` through shared memory.

Each thread accesses its registers in vectors of up to 16 bytes where the axis analysis proves the
addresses consecutive and aligned and the mask constant over the vector. Stores and atomics are issued
only by the thread (and register) holding the first copy of each element.
"""
from __future__ import annotations

from typing import Any, Optional

from ..._mlir import ir
from .. import layout as L
from ..assign import tensor_shape
from ...llvmir.types import BYTES, const
from ..target import guarded
from .convert import _aligned_vec, distinct_groups, from_storage, read_shared, smem_plan, storage_type, to_storage, write_shared
from .blockptr import load_block_ptr, store_block_ptr
from .context import Context
from .operands import has_uses, mem_value, reg_value, split_operands, str_attr
from .optable import GPU_OPS
from .values import Scalar, Tensor


def access_vector(ctx: Context, ptr_v: Any, mask_v: Optional[Any], lay: L.Layout, eb: int) -> int:
    info = ctx.axis.info(ptr_v)
    minfo = ctx.axis.info(mask_v) if mask_v is not None else None
    best = 1
    for d in range(lay.rank):
        v = min(lay.reg_run(d), info.contig[d], max(1, 16 // eb))
        if info.div[d] < eb * v:
            v = max(1, info.div[d] // eb)
        if minfo is not None:
            v = min(v, minfo.const[d])
        v = 1 << (max(v, 1).bit_length() - 1)
        v = _aligned_vec(lay, d, v)
        if v > best:
            best = v
    return best

# -- loads -------------------------------------------------------------------------------------------
@GPU_OPS.lowers("tt.load")
def op_load(ctx: Context, op: Any) -> None:
    parts = split_operands(op, ["ptr", "mask", "other"])
    ptr_v = parts["ptr"][0]
    if "!tt.ptr<tensor" in str(ptr_v.type):
        return load_block_ptr(ctx, op, ptr_v)
    res = op.results[0]
    mem_t, _ = ctx.pointee(ptr_v.type)
    rty = ctx.value_type(res)
    eb = BYTES.get(mem_t, 8)
    cache, evict = str_attr(op, "cache"), str_attr(op, "evict")
    volatile = "is_volatile" in op.attributes and ir.BoolAttr(op.attributes["is_volatile"]).value
    mask_v = parts["mask"][0] if parts["mask"] else None
    other_v = parts["other"][0] if parts["other"] else None
    fn = ctx.fn
    if tensor_shape(res.type) is None:
        p = ctx.scalar_of(ptr_v)
        pred = ctx.scalar_of(mask_v).value if mask_v is not None else None
        oth = [mem_value(ctx, ctx.scalar_of(other_v).value, rty)] if other_v is not None else None
        v = ctx.target.load(fn, ctx.module, p.value, mem_t, 1, eb, pred, oth, cache, evict, volatile)[0]
        ctx.values[res] = Scalar(reg_value(ctx, v, rty), rty)
        return
    lay = ctx.layout_of(res)
    ptr = ctx.tensor_in(ptr_v, lay)
    mask = ctx.tensor_in(mask_v, lay) if mask_v is not None else None
    other = ctx.tensor_in(other_v, lay) if other_v is not None else None
    vec = access_vector(ctx, ptr_v, mask_v, lay, eb)
    regs: list[str] = [""] * lay.num_regs
    for g in distinct_groups(lay, vec, regs):
        pred = mask.regs[g] if mask is not None else None
        oth = [mem_value(ctx, other.regs[g + i], rty) for i in range(vec)] if other is not None else None
        vals = ctx.target.load(fn, ctx.module, ptr.regs[g], mem_t, vec, vec * eb, pred, oth, cache, evict,
                                volatile)
        regs[g:g + vec] = [reg_value(ctx, x, rty) for x in vals]
    ctx.values[res] = Tensor(lay, regs, rty)

# -- stores ------------------------------------------------------------------------------------------
@GPU_OPS.lowers("tt.store")
def op_store(ctx: Context, op: Any) -> None:
    parts = split_operands(op, ["ptr", "value", "mask"])
    ptr_v, val_v = parts["ptr"][0], parts["value"][0]
    if "!tt.ptr<tensor" in str(ptr_v.type):
        return store_block_ptr(ctx, op, ptr_v, val_v)
    mask_v = parts["mask"][0] if parts["mask"] else None
    mem_t, _ = ctx.pointee(ptr_v.type)
    vty = ctx.value_type(val_v)
    eb = BYTES.get(mem_t, 8)
    cache, evict = str_attr(op, "cache"), str_attr(op, "evict")
    fn = ctx.fn
    if tensor_shape(ptr_v.type) is None:
        pred = ctx.and_pred(ctx.scalar_of(mask_v).value if mask_v is not None else None,
                             ctx.unique_pred(None))
        v = mem_value(ctx, ctx.scalar_of(val_v).value, vty)
        ctx.target.store(fn, ctx.module, ctx.scalar_of(ptr_v).value, mem_t, [v], eb, pred, cache, evict)
        return
    lay = _store_layout(ctx, ptr_v, val_v)
    ptr = ctx.tensor_in(ptr_v, lay)
    val = ctx.tensor_in(val_v, lay)
    mask = ctx.tensor_in(mask_v, lay) if mask_v is not None else None
    vec = access_vector(ctx, ptr_v, mask_v, lay, eb)
    unique = set(lay.unique_regs())
    tpred = ctx.unique_pred(lay)
    for g in range(0, lay.num_regs, vec):
        if g not in unique:
            continue
        pred = ctx.and_pred(mask.regs[g] if mask is not None else None, tpred)
        vals = [mem_value(ctx, val.regs[g + i], vty) for i in range(vec)]
        ctx.target.store(fn, ctx.module, ptr.regs[g], mem_t, vals, vec * eb, pred, cache, evict)


def _store_layout(ctx: Context, ptr_v: Any, val_v: Any) -> L.Layout:
    """The layout a store works in: that of its pointer's definition (where the axis analysis chose the
    coalesced layout), unless the value already lives in a layout as good."""
    lay = ctx.layouts.get(ptr_v)
    if lay is None:
        got = ctx.values.get(val_v)
        lay = got.layout if isinstance(got, Tensor) else ctx.layout_of(ptr_v)
    return lay

# -- atomics -----------------------------------------------------------------------------------------
def _atomic(ctx: Context, op: Any, groups: list[str], emit: Any) -> None:
    parts = split_operands(op, groups)
    res = op.results[0]
    rty = ctx.value_type(res)
    fn = ctx.fn
    if tensor_shape(res.type) is None:
        vals = {k: (ctx.scalar_of(v[0]).value if v else None) for k, v in parts.items()}
        pred = ctx.and_pred(vals.get("mask"), ctx.unique_pred(None))
        old = emit(vals, pred)
        if has_uses(res):
            # only thread 0 did the operation: share its result
            base = ctx.scratch(8)
            st = storage_type(ctx, rty)
            p = base
            guarded(fn, pred, lambda: fn.emit(f"store {st} {to_storage(ctx, old, rty)}, "
                                              f"{ctx.target.shared_ptr} {p}, align {BYTES[st]}"))
            ctx.target.barrier(fn)
            v = fn.inst(f"load {st}, {ctx.target.shared_ptr} {p}, align {BYTES[st]}")
            ctx.scratch_read_done()
            old = from_storage(ctx, v, rty)
        ctx.values[res] = Scalar(old, rty)
        return
    lay = ctx.layout_of(res)
    ins = {k: (ctx.tensor_in(v[0], lay) if v else None) for k, v in parts.items()}
    unique = set(lay.unique_regs())
    tpred = ctx.unique_pred(lay)
    regs: list[str] = [""] * lay.num_regs
    first_of: dict[tuple, int] = {}
    for r in range(lay.num_regs):
        c = lay.reg_coords(r)
        if r not in unique or c in first_of:
            regs[r] = regs[first_of[c]] if c in first_of else const(rty, 0)
            continue
        first_of[c] = r
        vals = {k: (t.regs[r] if t is not None else None) for k, t in ins.items()}
        pred = ctx.and_pred(vals.get("mask"), tpred)
        regs[r] = emit(vals, pred)
    out = Tensor(lay, regs, rty)
    if tpred is not None and has_uses(res):
        # copies of an element in other threads learn the old value from the thread that updated it
        st = storage_type(ctx, rty)
        strides, nbytes, _, _ = smem_plan(ctx, lay, lay, BYTES[st])
        base = ctx.scratch(nbytes)
        write_shared(ctx, out, base, strides, 1, st)
        ctx.target.barrier(fn)
        out = Tensor(lay, read_shared(ctx, lay, base, strides, 1, st, rty), rty)
        ctx.scratch_read_done()
    ctx.values[res] = out


@GPU_OPS.lowers("tt.atomic_rmw")
def op_atomic_rmw(ctx: Context, op: Any) -> None:
    kind = str_attr(op, "op")
    sem, scope = str_attr(op, "sem"), str_attr(op, "scope")
    rty = ctx.value_type(op.results[0])
    if kind == "add" and rty in ("float", "double", "half", "bfloat"):
        kind = "fadd"
    _atomic(ctx, op, ["ptr", "val", "mask"], lambda v, pred: ctx.target.atomic_rmw(
        ctx.fn, ctx.module, kind, v["ptr"], rty, v["val"], pred, sem, scope))


@GPU_OPS.lowers("tt.atomic_cas")
def op_atomic_cas(ctx: Context, op: Any) -> None:
    sem, scope = str_attr(op, "sem"), str_attr(op, "scope")
    rty = ctx.value_type(op.results[0])
    _atomic(ctx, op, ["ptr", "cmp", "val"], lambda v, pred: ctx.target.atomic_cas(
        ctx.fn, ctx.module, v["ptr"], rty, v["cmp"], v["val"], pred, sem, scope))

# -- gather and histogram ------------------------------------------------------------------------------
@GPU_OPS.lowers("tt.gather")
def op_gather(ctx: Context, op: Any) -> None:
    src = ctx.tensor(op.operands[0])
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    res = op.results[0]
    lay = ctx.layout_of(res)
    idx = ctx.tensor_in(op.operands[1], lay)
    fn = ctx.fn
    st = storage_type(ctx, src.ty)
    eb = BYTES[st]
    shape = src.shape
    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    base = ctx.scratch(strides[0] * shape[0] * eb)
    write_shared(ctx, src, base, strides, 1, st)
    ctx.target.barrier(fn)
    regs = []
    for r in range(lay.num_regs):
        i = idx.regs[r]
        if idx.ty != "i32":
            i = fn.inst(f"{'trunc' if idx.ty == 'i64' else 'sext'} {idx.ty} {i} to i32")
        off = "0"
        for d, s in enumerate(strides):
            c = i if d == axis else ctx.coord(lay, r, d)
            term = c if s == 1 else fn.inst(f"mul i32 {c}, {s}")
            off = term if off == "0" else fn.inst(f"add i32 {off}, {term}")
        byte = fn.inst(f"mul i32 {off}, {eb}")
        p = ctx.smem_ptr(base, byte)
        v = fn.inst(f"load {st}, {ctx.target.shared_ptr} {p}, align {eb}")
        regs.append(from_storage(ctx, v, src.ty))
    ctx.scratch_read_done()
    ctx.values[res] = Tensor(lay, regs, src.ty)


@GPU_OPS.lowers("tt.histogram")
def op_histogram(ctx: Context, op: Any) -> None:
    parts = split_operands(op, ["src", "mask"])
    src = ctx.tensor(parts["src"][0])
    mask = ctx.tensor_in(parts["mask"][0], src.layout) if parts["mask"] else None
    res = op.results[0]
    bins = tensor_shape(res.type)[0]
    fn = ctx.fn
    sp = ctx.target.shared_ptr
    base = ctx.scratch(bins * 4)
    threads = ctx.num_warps * ctx.warp_size
    for k in range(0, bins, threads):
        i = fn.inst(f"add i32 {ctx.tid}, {k}") if k else ctx.tid
        ok = fn.inst(f"icmp ult i32 {i}, {bins}")
        p = ctx.smem_ptr(base, fn.inst(f"mul i32 {i}, 4"))
        guarded(fn, ok, lambda p=p: fn.emit(f"store i32 0, {sp} {p}, align 4"))
    ctx.target.barrier(fn)
    tpred = ctx.unique_pred(src.layout)
    for r in src.layout.unique_regs():
        v = src.regs[r]
        v32 = v if src.ty == "i32" else fn.inst(f"{'trunc' if src.ty == 'i64' else 'sext'} {src.ty} {v} to i32")
        ok = fn.inst(f"icmp ult i32 {v32}, {bins}")
        ok = ctx.and_pred(ok, mask.regs[r] if mask is not None else None)
        ok = ctx.and_pred(ok, tpred)
        p = ctx.smem_ptr(base, fn.inst(f"mul i32 {v32}, 4"))
        guarded(fn, ok, lambda p=p: fn.emit(f"atomicrmw add {sp} {p}, i32 1 monotonic, align 4"))
    ctx.target.barrier(fn)
    lay = ctx.layout_of(res)
    regs = []
    for r in range(lay.num_regs):
        c = ctx.coord(lay, r, 0)
        p = ctx.smem_ptr(base, str(int(c) * 4) if c.isdigit() else fn.inst(f"mul i32 {c}, 4"))
        regs.append(fn.inst(f"load i32, {sp} {p}, align 4"))
    ctx.scratch_read_done()
    rty = ctx.value_type(res)
    if rty != "i32":
        regs = [fn.inst(f"{'sext' if rty == 'i64' else 'trunc'} i32 {x} to {rty}") for x in regs]
    ctx.values[res] = Tensor(lay, regs, rty)
