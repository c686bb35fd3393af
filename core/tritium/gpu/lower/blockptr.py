"""Block pointers (``tl.make_block_ptr``), tensor descriptors (``tl.make_tensor_descriptor``), and the
elementwise region ops (``tl.map_elementwise``) and ``unsplat``.

A block pointer or descriptor is a handful of uniform scalars (:class:`Composite`): base, shape and strides
per dimension, offsets for block pointers. Accessing a block through one computes, for each register of
the result's layout, the element's coordinates (offset + index), its address, and, for checked
dimensions, whether it is in bounds (masked accesses read the padding value).
"""
from __future__ import annotations

from typing import Any, Optional

from ..._mlir import block_ops, ir
from ...dialect.block_types import block_of
from ...llvmir.types import BYTES, const
from .. import layout as L
from ..assign import blocked_for, tensor_shape
from .context import Context
from .descriptor_bulk import aligned_start, only_reduced, tensor_map_for
from .descriptor_store import store_bulk_or_portable
from .descriptor_load import load_block_bulk, takes_bulk_load
from .operands import mem_value, reg_value, split_operands, str_attr
from .optable import GPU_OPS
from .reduce import _Overlay
from .values import LoweringError, Scalar, Tensor


class Composite:
    """``base`` (pointer), ``shape`` and ``strides`` per dimension, ``offsets`` (block pointers only), all
    :class:`Scalar`; ``block`` the block shape, ``elem`` the LLVM type in memory."""
    __slots__ = ("base", "shape", "strides", "offsets", "block", "elem", "padding", "tmap")

    def __init__(self, base: Scalar, shape: list, strides: list, offsets: list, block: tuple, elem: str,
                 padding: str = "zero") -> None:
        self.base, self.shape, self.strides, self.offsets = base, shape, strides, offsets
        self.block, self.elem, self.padding = block, elem, padding
        # a descriptor's tensor map for bulk copies (descriptor_bulk.py); a rebuilt one (select, phi) has none
        self.tmap: Any = None

    def flat(self) -> list[Scalar]:
        return [self.base, *self.shape, *self.strides, *self.offsets]

    def rebuild(self, scalars: list[Scalar]) -> "Composite":
        n, k = len(self.shape), len(self.offsets)
        return Composite(scalars[0], scalars[1:1 + n], scalars[1 + n:1 + 2 * n], scalars[1 + 2 * n:1 + 2 * n + k],
                         self.block, self.elem, self.padding)


def _block_of(t: Any) -> tuple[tuple[int, ...], str]:
    """(block shape, element type) of ``!tt.ptr<tensor<...>>`` or ``!tt.tensordesc<tensor<...>>``."""
    block = block_of(t)
    if block is None:
        raise LoweringError(f"not a block pointer or tensor descriptor type: {t}")
    return block


def _composite_elem(ctx: Context, t: Any) -> tuple[tuple[int, ...], str]:
    block, elem = _block_of(t)
    lt = ctx.llty(elem)
    return block, ("i8" if lt == "i1" else lt)


@GPU_OPS.lowers("tt.make_block_ptr")
def op_make_block_ptr(ctx: Context, op: Any) -> None:
    parts = split_operands(op, ["base", "shape", "strides", "offsets"])
    block, elem = _composite_elem(ctx, op.results[0].type)
    ctx.values[op.results[0]] = Composite(ctx.scalar_of(parts["base"][0]),
                                           [ctx.scalar_of(v) for v in parts["shape"]],
                                           [ctx.scalar_of(v) for v in parts["strides"]],
                                           [ctx.scalar_of(v) for v in parts["offsets"]], block, elem)


@GPU_OPS.lowers("tt.advance")
def op_advance(ctx: Context, op: Any) -> None:
    parts = split_operands(op, ["ptr", "offsets"])
    bp = ctx.values[parts["ptr"][0]]
    new = []
    for o, d in zip(bp.offsets, (ctx.scalar_of(v) for v in parts["offsets"])):
        dv = d.value if d.ty == o.ty else ctx.fn.inst(f"{'trunc' if d.ty == 'i64' else 'sext'} {d.ty} {d.value} "
                                                      f"to {o.ty}")
        new.append(Scalar(ctx.fn.inst(f"add {o.ty} {o.value}, {dv}"), o.ty))
    ctx.values[op.results[0]] = Composite(bp.base, bp.shape, bp.strides, new, bp.block, bp.elem, bp.padding)


@GPU_OPS.lowers("tt.make_tensor_descriptor")
def op_make_tensor_descriptor(ctx: Context, op: Any) -> None:
    parts = split_operands(op, ["base", "shape", "strides"])
    block, elem = _composite_elem(ctx, op.results[0].type)
    padding = str_attr(op, "padding", "zero")
    c = Composite(ctx.scalar_of(parts["base"][0]), [ctx.scalar_of(v) for v in parts["shape"]],
                  [ctx.scalar_of(v) for v in parts["strides"]], [], block, elem, padding)
    c.tmap = tensor_map_for(ctx, op, c)
    ctx.values[op.results[0]] = c


def select_composite(ctx: Context, op: Any) -> Composite:
    """``arith.select`` of two block pointers or descriptors, scalar by scalar (MLIR's canonicalizer makes
    one of a ternary or of an ``if`` whose branches only pick one of two; the frontend refuses descriptors
    of different paddings meeting there)."""
    c = ctx.scalar_of(op.operands[0])
    a, b = ctx.values[op.operands[1]], ctx.values[op.operands[2]]
    picked = [Scalar(ctx.fn.inst(f"select i1 {c.value}, {x.ty} {x.value}, {y.ty} {y.value}"), x.ty)
              for x, y in zip(a.flat(), b.flat())]
    return a.rebuild(picked)

# -- addressing ----------------------------------------------------------------------------------------
def i64(ctx: Context, s: Any) -> str:
    if isinstance(s, str):
        return s
    if s.ty == "i64":
        return s.value
    return ctx.fn.inst(f"sext {s.ty} {s.value} to i64")


def block_access(ctx: Context, c: Composite, offsets: list, lay: Any, checked: list[int],
                 coord_of: Optional[Any] = None) -> tuple[list[str], list[Optional[str]]]:
    """Per register of ``lay``: the element's address and (if any dimension is checked) its in-bounds bit."""
    fn = ctx.fn
    offs = [i64(ctx, o) for o in offsets]
    strides = [i64(ctx, s) for s in c.strides]
    limits = {d: i64(ctx, c.shape[d]) for d in checked}
    addrs, masks = [], []
    for r in range(lay.num_regs):
        total: Optional[str] = None
        ok: Optional[str] = None
        for d in range(lay.rank):
            idx = coord_of(r, d) if coord_of is not None else None
            if idx is None:
                ci = ctx.coord(lay, r, d)
                idx = ci if ci.isdigit() else fn.inst(f"zext i32 {ci} to i64")
            cd = idx if offs[d] == "0" else fn.inst(f"add i64 {offs[d]}, {idx}")
            if d in limits:
                t = fn.inst(f"icmp ult i64 {cd}, {limits[d]}")
                ok = t if ok is None else fn.inst(f"and i1 {ok}, {t}")
            term = cd if strides[d] == "1" else fn.inst(f"mul i64 {cd}, {strides[d]}")
            total = term if total is None else fn.inst(f"add i64 {total}, {term}")
        addrs.append(fn.inst(f"getelementptr {c.elem}, {ctx.target.global_ptr} {c.base.value}, i64 {total}"))
        masks.append(ok)
    return addrs, masks


def block_load(ctx: Context, res: Any, c: Composite, offsets: list, checked: list[int], padding: str,
               volatile: bool = False, coord_of: Optional[Any] = None, lay: Optional[Any] = None) -> None:
    lay = lay or ctx.layout_of(res)
    rty = ctx.value_type(res)
    addrs, masks = block_access(ctx, c, offsets, lay, checked, coord_of)
    pad = const(c.elem, float("nan")) if padding == "nan" and c.elem in ("half", "bfloat", "float", "double") \
        else const(c.elem, 0)
    regs = []
    for a, m in zip(addrs, masks):
        v = ctx.target.load(ctx.fn, ctx.module, a, c.elem, 1, BYTES.get(c.elem, 8), m,
                             [pad] if m is not None else None, "", "", volatile)[0]
        regs.append(reg_value(ctx, v, rty))
    ctx.values[res] = Tensor(lay, regs, rty)


def block_store(ctx: Context, c: Composite, offsets: list, value_v: Any, checked: list[int], kind: str = "",
                coord_of: Optional[Any] = None, lay: Optional[Any] = None) -> None:
    val = ctx.tensor(value_v) if lay is None else ctx.tensor_in(value_v, lay)
    lay = val.layout
    addrs, masks = block_access(ctx, c, offsets, lay, checked, coord_of)
    tpred = ctx.unique_pred(lay)
    unique = set(lay.unique_regs())
    for r, (a, m) in enumerate(zip(addrs, masks)):
        if r not in unique:
            continue
        pred = ctx.and_pred(m, tpred)
        v = mem_value(ctx, val.regs[r], val.ty)
        if kind:
            k = kind
            if c.elem in ("half", "bfloat", "float", "double") and kind in ("add", "min", "max"):
                k = "f" + kind      # (fp16/bf16 min and max: a target with native ones that took this path)
            ctx.target.atomic_rmw(ctx.fn, ctx.module, k, a, c.elem, v, pred, "relaxed", "gpu")
        else:
            ctx.target.store(ctx.fn, ctx.module, a, c.elem, [v], BYTES.get(c.elem, 8), pred)

# -- ops ---------------------------------------------------------------------------------------------
def load_block_ptr(ctx: Context, op: Any, ptr_v: Any) -> None:
    c = ctx.values[ptr_v]
    checked = list(ir.DenseI32ArrayAttr(op.attributes["boundary_check"])) if "boundary_check" in op.attributes \
        else []
    volatile = "is_volatile" in op.attributes and ir.BoolAttr(op.attributes["is_volatile"]).value
    block_load(ctx, op.results[0], c, c.offsets, checked, str_attr(op, "padding", "zero"), volatile)


def store_block_ptr(ctx: Context, op: Any, ptr_v: Any, value_v: Any) -> None:
    c = ctx.values[ptr_v]
    checked = list(ir.DenseI32ArrayAttr(op.attributes["boundary_check"])) if "boundary_check" in op.attributes \
        else []
    block_store(ctx, c, c.offsets, value_v, checked)


@GPU_OPS.lowers("tt.descriptor_load")
def op_descriptor_load(ctx: Context, op: Any) -> None:
    parts = split_operands(op, ["desc", "indices"])
    c = ctx.values[parts["desc"][0]]
    idx = [ctx.scalar_of(v) for v in parts["indices"]]
    if takes_bulk_load(ctx, op, parts["desc"][0], c):
        load_block_bulk(ctx, op, c, idx)
        return
    block_load(ctx, op.results[0], c, idx, list(range(len(c.block))), c.padding)


@GPU_OPS.lowers("tt.descriptor_store")
def op_descriptor_store(ctx: Context, op: Any) -> None:
    parts = split_operands(op, ["desc", "src", "indices"])
    c = ctx.values[parts["desc"][0]]
    idx = [ctx.scalar_of(v) for v in parts["indices"]]
    if c.tmap is not None and not any(u.owner.name == "tt.descriptor_load" for u in parts["desc"][0].uses) \
            and aligned_start(ctx, c, parts["indices"]):
        # a descriptor only stored through: nothing in this kernel reads back what the copies write (they are
        # waited for only until they have read shared memory, as in Triton)
        store_bulk_or_portable(ctx, c, idx, parts["indices"], parts["src"][0],
                               lambda: block_store(ctx, c, idx, parts["src"][0], list(range(len(c.block)))),
                               desc_v=parts["desc"][0])
        return
    block_store(ctx, c, idx, parts["src"][0], list(range(len(c.block))))


@GPU_OPS.lowers("tt.descriptor_reduce")
def op_descriptor_reduce(ctx: Context, op: Any) -> None:
    parts = split_operands(op, ["desc", "src", "indices"])
    c = ctx.values[parts["desc"][0]]
    idx = [ctx.scalar_of(v) for v in parts["indices"]]
    if c.tmap is not None and only_reduced(parts["desc"][0]) and aligned_start(ctx, c, parts["indices"]):
        kind = str_attr(op, "kind")
        store_bulk_or_portable(ctx, c, idx, parts["indices"], parts["src"][0],
                               lambda: block_store(ctx, c, idx, parts["src"][0], list(range(len(c.block))), kind=kind),
                               kind, desc_v=parts["desc"][0])
        return
    block_store(ctx, c, idx, parts["src"][0], list(range(len(c.block))), kind=str_attr(op, "kind"))


def _gather_coords(ctx: Context, rows_v: Any, col: Any, lay: Any) -> Any:
    rows = ctx.tensor_in(rows_v, _row_layout(lay))
    fn = ctx.fn

    def coord_of(r: int, d: int) -> Optional[str]:
        if d == 0:
            v = rows.regs[_row_reg(lay, r)]
            return v if rows.ty == "i64" else fn.inst(f"sext {rows.ty} {v} to i64")
        return None
    return coord_of


@GPU_OPS.lowers("tt.descriptor_gather")
def op_descriptor_gather(ctx: Context, op: Any) -> None:
    c = ctx.values[op.operands[0]]
    col = ctx.scalar_of(op.operands[2])
    lay = ctx.layout_of(op.results[0])
    coord_of = _gather_coords(ctx, op.operands[1], col, lay)
    block_load(ctx, op.results[0], c, ["0", col], [0, 1], c.padding, coord_of=coord_of, lay=lay)


@GPU_OPS.lowers("tt.descriptor_scatter")
def op_descriptor_scatter(ctx: Context, op: Any) -> None:
    c = ctx.values[op.operands[0]]
    src = ctx.tensor(op.operands[1])
    col = ctx.scalar_of(op.operands[3])
    coord_of = _gather_coords(ctx, op.operands[2], col, src.layout)
    block_store(ctx, c, ["0", col], op.operands[1], [0, 1], coord_of=coord_of, lay=src.layout)


@GPU_OPS.lowers("tt.unsplat")
def op_unsplat(ctx: Context, op: Any) -> None:
    t = ctx.tensor(op.operands[0])
    ctx.values[op.results[0]] = Scalar(t.regs[0], t.ty)


@GPU_OPS.lowers("tt.map_elementwise")
def op_map_elementwise(ctx: Context, op: Any) -> None:
    srcs_v = [v for g in split_operands(op, [f"s{i}" for i in range(8)]).values() for v in g]
    pack = ir.IntegerAttr(op.attributes["pack"]).value if "pack" in op.attributes else 1
    res = list(op.results)
    lay = ctx.layout_of(res[0]) if tensor_shape(res[0].type) is not None else None
    if lay is None:
        raise LoweringError("map_elementwise on scalars")
    last = lay.rank - 1
    if pack > 1 and (lay.reg_run(last) < pack):
        lay = blocked_for(lay.shape, [1] * last + [pack], ctx.num_warps, ctx.warp_size)
    srcs = [ctx.tensor_in(v, lay) for v in srcs_v]
    block = op.regions[0].blocks[0]
    body = block_ops(block)
    args = list(block.arguments)
    out: list[list[str]] = [[""] * lay.num_regs for _ in res]
    for g in range(0, lay.num_regs, pack):
        saved = ctx.values
        ctx.values = _Overlay(saved)
        try:
            vals = [s.regs[g + i] for s in srcs for i in range(pack)]
            tys = [s.ty for s in srcs for _ in range(pack)]
            for a, v, t in zip(args, vals, tys):
                ctx.values[a] = Scalar(v, t)
            for o in body[:-1]:
                ctx.lower_op(o)
            ys = [ctx.values[v].value for v in body[-1].operands]
        finally:
            ctx.values = saved
        for j in range(len(res)):
            for i in range(pack):
                out[j][g + i] = ys[j * pack + i]
    for j, r in enumerate(res):
        ctx.set_result(op, Tensor(lay, out[j], ctx.value_type(r)), j)


def _row_layout(lay: Any) -> Any:
    return L.squeeze(L.restrict(lay, (lay.shape[0], 1)), 1)


def _row_reg(lay: Any, r: int) -> int:
    return r
