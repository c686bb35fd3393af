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
from .convert import _aligned_vec, from_storage, read_shared, smem_plan, storage_type, to_storage, write_shared
from .optable import GPU_OPS
from .values import LoweringError, Scalar, Tensor


def segments(op: Any, n: int) -> list[int]:
    if "operandSegmentSizes" in op.attributes:
        return list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    return [1] * n


def split_operands(op: Any, names: list[str]) -> dict[str, list[Any]]:
    """Operands by group. Without ``operandSegmentSizes`` (at most one variadic group), every group but the
    last has one operand and the last takes the rest."""
    ops = list(op.operands)
    sizes = segments(op, len(names))
    if "operandSegmentSizes" not in op.attributes:
        sizes = [1] * (len(names) - 1) + [max(0, len(ops) - (len(names) - 1))]
    out, i = {}, 0
    for name, n in zip(names, sizes):
        out[name] = ops[i:i + n]
        i += n
    return out


def str_attr(op: Any, name: str, default: str = "") -> str:
    if name not in op.attributes:
        return default
    a = op.attributes[name]
    try:
        return ir.StringAttr(a).value
    except (ValueError, TypeError):
        return str(a)


def has_uses(value: Any) -> bool:
    for _ in value.uses:
        return True
    return False


class MemoryMixin:
    def access_vector(self, ptr_v: Any, mask_v: Optional[Any], lay: L.Layout, eb: int) -> int:
        info = self.axis.info(ptr_v)
        minfo = self.axis.info(mask_v) if mask_v is not None else None
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

    def _mem_value(self, v: str, rty: str) -> str:
        return self.fn.inst(f"zext i1 {v} to i8") if rty == "i1" else v

    def _reg_value(self, v: str, rty: str) -> str:
        return self.fn.inst(f"icmp ne i8 {v}, 0") if rty == "i1" else v

    # -- loads -------------------------------------------------------------------------------------------
    @GPU_OPS.lowers("tt.load")
    def op_load(self, op: Any) -> None:
        parts = split_operands(op, ["ptr", "mask", "other"])
        ptr_v = parts["ptr"][0]
        if "!tt.ptr<tensor" in str(ptr_v.type):
            return self.load_block_ptr(op, ptr_v)
        res = op.results[0]
        mem_t, _ = self.pointee(ptr_v.type)
        rty = self.value_type(res)
        eb = BYTES.get(mem_t, 8)
        cache, evict = str_attr(op, "cache"), str_attr(op, "evict")
        volatile = "is_volatile" in op.attributes and ir.BoolAttr(op.attributes["is_volatile"]).value
        mask_v = parts["mask"][0] if parts["mask"] else None
        other_v = parts["other"][0] if parts["other"] else None
        fn = self.fn
        if tensor_shape(res.type) is None:
            p = self.scalar_of(ptr_v)
            pred = self.scalar_of(mask_v).value if mask_v is not None else None
            oth = [self._mem_value(self.scalar_of(other_v).value, rty)] if other_v is not None else None
            v = self.target.load(fn, self.module, p.value, mem_t, 1, eb, pred, oth, cache, evict, volatile)[0]
            self.values[res] = Scalar(self._reg_value(v, rty), rty)
            return
        lay = self.layout_of(res)
        ptr = self.tensor_in(ptr_v, lay)
        mask = self.tensor_in(mask_v, lay) if mask_v is not None else None
        other = self.tensor_in(other_v, lay) if other_v is not None else None
        vec = self.access_vector(ptr_v, mask_v, lay, eb)
        regs: list[str] = [""] * lay.num_regs
        first_of: dict[tuple, int] = {}
        for g in range(0, lay.num_regs, vec):
            c = lay.reg_coords(g)
            if c in first_of:
                s = first_of[c]
                regs[g:g + vec] = regs[s:s + vec]
                continue
            first_of[c] = g
            pred = mask.regs[g] if mask is not None else None
            oth = [self._mem_value(other.regs[g + i], rty) for i in range(vec)] if other is not None else None
            vals = self.target.load(fn, self.module, ptr.regs[g], mem_t, vec, vec * eb, pred, oth, cache, evict,
                                    volatile)
            regs[g:g + vec] = [self._reg_value(x, rty) for x in vals]
        self.values[res] = Tensor(lay, regs, rty)

    # -- stores ------------------------------------------------------------------------------------------
    @GPU_OPS.lowers("tt.store")
    def op_store(self, op: Any) -> None:
        parts = split_operands(op, ["ptr", "value", "mask"])
        ptr_v, val_v = parts["ptr"][0], parts["value"][0]
        if "!tt.ptr<tensor" in str(ptr_v.type):
            return self.store_block_ptr(op, ptr_v, val_v)
        mask_v = parts["mask"][0] if parts["mask"] else None
        mem_t, _ = self.pointee(ptr_v.type)
        vty = self.value_type(val_v)
        eb = BYTES.get(mem_t, 8)
        cache, evict = str_attr(op, "cache"), str_attr(op, "evict")
        fn = self.fn
        if tensor_shape(ptr_v.type) is None:
            pred = self.and_pred(self.scalar_of(mask_v).value if mask_v is not None else None,
                                 self.unique_pred(None))
            v = self._mem_value(self.scalar_of(val_v).value, vty)
            self.target.store(fn, self.module, self.scalar_of(ptr_v).value, mem_t, [v], eb, pred, cache, evict)
            return
        lay = self._store_layout(ptr_v, val_v)
        ptr = self.tensor_in(ptr_v, lay)
        val = self.tensor_in(val_v, lay)
        mask = self.tensor_in(mask_v, lay) if mask_v is not None else None
        vec = self.access_vector(ptr_v, mask_v, lay, eb)
        unique = set(lay.unique_regs())
        tpred = self.unique_pred(lay)
        for g in range(0, lay.num_regs, vec):
            if g not in unique:
                continue
            pred = self.and_pred(mask.regs[g] if mask is not None else None, tpred)
            vals = [self._mem_value(val.regs[g + i], vty) for i in range(vec)]
            self.target.store(fn, self.module, ptr.regs[g], mem_t, vals, vec * eb, pred, cache, evict)

    def _store_layout(self, ptr_v: Any, val_v: Any) -> L.Layout:
        """The layout a store works in: that of its pointer's definition (where the axis analysis chose the
        coalesced layout), unless the value already lives in a layout as good."""
        lay = self.layouts.get(ptr_v)
        if lay is None:
            got = self.values.get(val_v)
            lay = got.layout if isinstance(got, Tensor) else self.layout_of(ptr_v)
        return lay

    # -- atomics -----------------------------------------------------------------------------------------
    def _atomic(self, op: Any, groups: list[str], emit: Any) -> None:
        parts = split_operands(op, groups)
        res = op.results[0]
        rty = self.value_type(res)
        fn = self.fn
        if tensor_shape(res.type) is None:
            vals = {k: (self.scalar_of(v[0]).value if v else None) for k, v in parts.items()}
            pred = self.and_pred(vals.get("mask"), self.unique_pred(None))
            old = emit(vals, pred)
            if has_uses(res):
                # only thread 0 did the operation: share its result
                base = self.scratch(8)
                st = storage_type(self, rty)
                p = base
                guarded(fn, pred, lambda: fn.emit(f"store {st} {to_storage(self, old, rty)}, "
                                                  f"{self.target.shared_ptr} {p}, align {BYTES[st]}"))
                self.target.barrier(fn)
                v = fn.inst(f"load {st}, {self.target.shared_ptr} {p}, align {BYTES[st]}")
                self.scratch_read_done()
                old = from_storage(self, v, rty)
            self.values[res] = Scalar(old, rty)
            return
        lay = self.layout_of(res)
        ins = {k: (self.tensor_in(v[0], lay) if v else None) for k, v in parts.items()}
        unique = set(lay.unique_regs())
        tpred = self.unique_pred(lay)
        regs: list[str] = [""] * lay.num_regs
        first_of: dict[tuple, int] = {}
        for r in range(lay.num_regs):
            c = lay.reg_coords(r)
            if r not in unique or c in first_of:
                regs[r] = regs[first_of[c]] if c in first_of else const(rty, 0)
                continue
            first_of[c] = r
            vals = {k: (t.regs[r] if t is not None else None) for k, t in ins.items()}
            pred = self.and_pred(vals.get("mask"), tpred)
            regs[r] = emit(vals, pred)
        out = Tensor(lay, regs, rty)
        if tpred is not None and has_uses(res):
            # copies of an element in other threads learn the old value from the thread that updated it
            st = storage_type(self, rty)
            strides, nbytes, _, _ = smem_plan(self, lay, lay, BYTES[st])
            base = self.scratch(nbytes)
            write_shared(self, out, base, strides, 1, st)
            self.target.barrier(fn)
            out = Tensor(lay, read_shared(self, lay, base, strides, 1, st, rty), rty)
            self.scratch_read_done()
        self.values[res] = out

    @GPU_OPS.lowers("tt.atomic_rmw")
    def op_atomic_rmw(self, op: Any) -> None:
        kind = str_attr(op, "op")
        sem, scope = str_attr(op, "sem"), str_attr(op, "scope")
        rty = self.value_type(op.results[0])
        if kind == "add" and rty in ("float", "double", "half", "bfloat"):
            kind = "fadd"
        self._atomic(op, ["ptr", "val", "mask"], lambda v, pred: self.target.atomic_rmw(
            self.fn, self.module, kind, v["ptr"], rty, v["val"], pred, sem, scope))

    @GPU_OPS.lowers("tt.atomic_cas")
    def op_atomic_cas(self, op: Any) -> None:
        sem, scope = str_attr(op, "sem"), str_attr(op, "scope")
        rty = self.value_type(op.results[0])
        self._atomic(op, ["ptr", "cmp", "val"], lambda v, pred: self.target.atomic_cas(
            self.fn, self.module, v["ptr"], rty, v["cmp"], v["val"], pred, sem, scope))

    # -- gather and histogram ------------------------------------------------------------------------------
    @GPU_OPS.lowers("tt.gather")
    def op_gather(self, op: Any) -> None:
        src = self.tensor(op.operands[0])
        axis = ir.IntegerAttr(op.attributes["axis"]).value
        res = op.results[0]
        lay = self.layout_of(res)
        idx = self.tensor_in(op.operands[1], lay)
        fn = self.fn
        st = storage_type(self, src.ty)
        eb = BYTES[st]
        shape = src.shape
        strides = [1] * len(shape)
        for d in range(len(shape) - 2, -1, -1):
            strides[d] = strides[d + 1] * shape[d + 1]
        base = self.scratch(strides[0] * shape[0] * eb)
        write_shared(self, src, base, strides, 1, st)
        self.target.barrier(fn)
        regs = []
        for r in range(lay.num_regs):
            i = idx.regs[r]
            if idx.ty != "i32":
                i = fn.inst(f"{'trunc' if idx.ty == 'i64' else 'sext'} {idx.ty} {i} to i32")
            off = "0"
            for d, s in enumerate(strides):
                c = i if d == axis else self.coord(lay, r, d)
                term = c if s == 1 else fn.inst(f"mul i32 {c}, {s}")
                off = term if off == "0" else fn.inst(f"add i32 {off}, {term}")
            byte = fn.inst(f"mul i32 {off}, {eb}")
            p = self.smem_ptr(base, byte)
            v = fn.inst(f"load {st}, {self.target.shared_ptr} {p}, align {eb}")
            regs.append(from_storage(self, v, src.ty))
        self.scratch_read_done()
        self.values[res] = Tensor(lay, regs, src.ty)

    @GPU_OPS.lowers("tt.histogram")
    def op_histogram(self, op: Any) -> None:
        parts = split_operands(op, ["src", "mask"])
        src = self.tensor(parts["src"][0])
        mask = self.tensor_in(parts["mask"][0], src.layout) if parts["mask"] else None
        res = op.results[0]
        bins = tensor_shape(res.type)[0]
        fn = self.fn
        sp = self.target.shared_ptr
        base = self.scratch(bins * 4)
        threads = self.num_warps * self.warp_size
        for k in range(0, bins, threads):
            i = fn.inst(f"add i32 {self.tid}, {k}") if k else self.tid
            ok = fn.inst(f"icmp ult i32 {i}, {bins}")
            p = self.smem_ptr(base, fn.inst(f"mul i32 {i}, 4"))
            guarded(fn, ok, lambda p=p: fn.emit(f"store i32 0, {sp} {p}, align 4"))
        self.target.barrier(fn)
        tpred = self.unique_pred(src.layout)
        for r in src.layout.unique_regs():
            v = src.regs[r]
            v32 = v if src.ty == "i32" else fn.inst(f"{'trunc' if src.ty == 'i64' else 'sext'} {src.ty} {v} to i32")
            ok = fn.inst(f"icmp ult i32 {v32}, {bins}")
            ok = self.and_pred(ok, mask.regs[r] if mask is not None else None)
            ok = self.and_pred(ok, tpred)
            p = self.smem_ptr(base, fn.inst(f"mul i32 {v32}, 4"))
            guarded(fn, ok, lambda p=p: fn.emit(f"atomicrmw add {sp} {p}, i32 1 monotonic, align 4"))
        self.target.barrier(fn)
        lay = self.layout_of(res)
        regs = []
        for r in range(lay.num_regs):
            c = self.coord(lay, r, 0)
            p = self.smem_ptr(base, str(int(c) * 4) if c.isdigit() else fn.inst(f"mul i32 {c}, 4"))
            regs.append(fn.inst(f"load i32, {sp} {p}, align 4"))
        self.scratch_read_done()
        rty = self.value_type(res)
        if rty != "i32":
            regs = [fn.inst(f"{'sext' if rty == 'i64' else 'trunc'} i32 {x} to {rty}") for x in regs]
        self.values[res] = Tensor(lay, regs, rty)
