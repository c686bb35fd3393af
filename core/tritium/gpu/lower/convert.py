"""Moving a tile from one layout to another.

In order of preference: nothing (same layout); renaming registers (every thread already holds the
elements it needs: broadcasts, expand_dims, reductions' results); the target's own way (e.g. matrix
loads into tensor-core fragments); through shared memory (each element written once by the thread that
holds its first copy, a barrier, then read by every thread that needs it). Shared-memory rows are padded
by one vector so that column-wise accesses spread over the banks.
"""
from __future__ import annotations

from typing import Iterator

from ...llvmir.types import BYTES
from .. import layout as L
from ..target import guarded, pack, unpack
from .context import Context
from .values import Tensor


def convert(ctx: Context, t: Tensor, dst: L.Layout) -> Tensor:
    if t.layout == dst:
        return t
    m = L.reg_map(t.layout, dst)
    if m is not None:
        return Tensor(dst, [t.regs[i] for i in m], t.ty)
    special = ctx.target.convert_layout(ctx, t, dst)
    if special is not None:
        return special
    return convert_through_shared(ctx, t, dst)

# -- through shared memory ---------------------------------------------------------------------------
def smem_plan(ctx: Context, src: L.Layout, dst: L.Layout, elem_bytes: int) -> tuple[list[int], int, int, int]:
    """(strides in elements, size in bytes, store vector, load vector) of a padded row-major buffer."""
    rank = len(src.shape)
    shape = src.shape
    limit = max(1, 16 // elem_bytes)
    fast = rank - 1
    best = (0, 0)
    for d in range(rank):
        score = (max(src.reg_run(d), dst.reg_run(d)), d)
        if score > best:
            best, fast = score, d
    vs = min(src.reg_run(fast), limit, shape[fast])
    vd = min(dst.reg_run(fast), limit, shape[fast])
    vs, vd = _aligned_vec(src, fast, vs), _aligned_vec(dst, fast, vd)
    order = [fast] + [d for d in range(rank - 1, -1, -1) if d != fast]
    strides = [0] * rank
    stride = 1
    pad = max(vs, vd) if rank > 1 and shape[fast] > 1 else 0
    for i, d in enumerate(order):
        strides[d] = stride
        stride = stride * shape[d] + (pad if i == 0 else 0)
    return strides, stride * elem_bytes, vs, vd


def smem_offset(ctx: Context, lay: L.Layout, r: int, strides: list[int]) -> str:
    """Element offset of register ``r``'s element in a buffer with ``strides`` (i32 value or literal)."""
    fn = ctx.fn
    total = 0
    parts = []
    for d, s in enumerate(strides):
        c = ctx.coord(lay, r, d)
        if c.isdigit():
            total += int(c) * s
        else:
            parts.append(c if s == 1 else fn.inst(f"mul i32 {c}, {s}"))
    acc = str(total) if total or not parts else None
    for p in parts:
        acc = p if acc is None else fn.inst(f"add i32 {acc}, {p}")
    return acc or "0"


def storage_type(ctx: Context, ty: str) -> str:
    """How values of LLVM type ``ty`` are kept in shared memory."""
    if ty == "i1":
        return "i8"
    if ty.startswith("ptr"):
        return "i64"
    return ty


def to_storage(ctx: Context, v: str, ty: str) -> str:
    if ty == "i1":
        return ctx.fn.inst(f"zext i1 {v} to i8")
    if ty.startswith("ptr"):
        return ctx.fn.inst(f"ptrtoint {ty} {v} to i64")
    return v


def from_storage(ctx: Context, v: str, ty: str) -> str:
    if ty == "i1":
        return ctx.fn.inst(f"trunc i8 {v} to i1")
    if ty.startswith("ptr"):
        return ctx.fn.inst(f"inttoptr i64 {v} to {ty}")
    return v


def write_shared(ctx: Context, t: Tensor, base: str, strides: list[int], vec: int, st: str) -> None:
    """Every unique element of ``t`` to its place in the buffer (by the thread holding its first copy)."""
    fn = ctx.fn
    lay = t.layout
    eb = BYTES[st]
    unique = set(lay.unique_regs())
    pred = ctx.unique_pred(lay)
    sp = ctx.target.shared_ptr

    def emit() -> None:
        for g in range(0, lay.num_regs, vec):
            if g not in unique:
                continue
            off = smem_offset(ctx, lay, g, strides)
            p = ctx.smem_ptr(base, off if off == "0" else (str(int(off) * eb) if off.isdigit() else
                                                             fn.inst(f"mul i32 {off}, {eb}")))
            vals = [to_storage(ctx, t.regs[g + i], t.ty) for i in range(vec)]
            vt = st if vec == 1 else f"<{vec} x {st}>"
            fn.emit(f"store {vt} {pack(fn, vals, st)}, {sp} {p}, align {eb * vec}")

    guarded(fn, pred, emit)


def distinct_groups(lay: L.Layout, vec: int, regs: list[str]) -> Iterator[int]:
    """The first register of each group of ``vec`` registers holding elements no earlier group holds, for the
    caller to fill ``regs[g:g + vec]``; a group holding the same elements as an earlier one (a layout may hold
    an element in several threads' or registers' slots) gets a copy of that group's registers instead."""
    first_of: dict[tuple, int] = {}
    for g in range(0, lay.num_regs, vec):
        s = first_of.setdefault(lay.reg_coords(g), g)
        if s == g:
            yield g
        else:
            regs[g:g + vec] = regs[s:s + vec]


def read_shared(ctx: Context, lay: L.Layout, base: str, strides: list[int], vec: int, st: str, ty: str) -> list[str]:
    fn = ctx.fn
    eb = BYTES[st]
    sp = ctx.target.shared_ptr
    regs: list[str] = [""] * lay.num_regs
    for g in distinct_groups(lay, vec, regs):
        off = smem_offset(ctx, lay, g, strides)
        p = ctx.smem_ptr(base, off if off == "0" else (str(int(off) * eb) if off.isdigit() else
                                                         fn.inst(f"mul i32 {off}, {eb}")))
        vt = st if vec == 1 else f"<{vec} x {st}>"
        v = fn.inst(f"load {vt}, {sp} {p}, align {eb * vec}")
        for i, x in enumerate(unpack(fn, v, st, vec)):
            regs[g + i] = from_storage(ctx, x, ty)
    return regs


def convert_through_shared(ctx: Context, t: Tensor, dst: L.Layout) -> Tensor:
    st = storage_type(ctx, t.ty)
    eb = BYTES[st]
    strides, nbytes, vs, vd = smem_plan(ctx, t.layout, dst, eb)
    base = ctx.scratch_alone(nbytes)
    write_shared(ctx, t, base, strides, vs, st)
    ctx.target.barrier(ctx.fn)
    regs = read_shared(ctx, dst, base, strides, vd, st, t.ty)
    ctx.scratch_read_done()
    return Tensor(dst, regs, t.ty)


def _aligned_vec(lay: L.Layout, dim: int, vec: int) -> int:
    """Largest vector width <= vec such that every group of registers starts at a multiple of it."""
    while vec > 1:
        ok = all(b[dim] % vec == 0 for i, b in enumerate(lay.reg) if (1 << i) >= vec) and \
            all(b[dim] % vec == 0 for b in lay.lane + lay.warp)
        if ok:
            return vec
        vec //= 2
    return 1
