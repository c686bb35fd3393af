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
from ...llvmir.types import BYTES, const
from .. import layout as L
from ..assign import blocked_for, tensor_shape
from .memory import split_operands, str_attr
from .optable import GPU_OPS
from .reduce import _Overlay
from .values import LoweringError, Scalar, Tensor


class Composite:
    """``base`` (pointer), ``shape`` and ``strides`` per dimension, ``offsets`` (block pointers only), all
    :class:`Scalar`; ``block`` the block shape, ``elem`` the LLVM type in memory."""
    __slots__ = ("base", "shape", "strides", "offsets", "block", "elem", "padding")

    def __init__(self, base: Scalar, shape: list, strides: list, offsets: list, block: tuple, elem: str,
                 padding: str = "zero") -> None:
        self.base, self.shape, self.strides, self.offsets = base, shape, strides, offsets
        self.block, self.elem, self.padding = block, elem, padding

    def flat(self) -> list[Scalar]:
        return [self.base, *self.shape, *self.strides, *self.offsets]

    def rebuild(self, scalars: list[Scalar]) -> "Composite":
        n, k = len(self.shape), len(self.offsets)
        return Composite(scalars[0], scalars[1:1 + n], scalars[1 + n:1 + 2 * n], scalars[1 + 2 * n:1 + 2 * n + k],
                         self.block, self.elem, self.padding)


def _block_of(t: Any) -> tuple[tuple[int, ...], str]:
    """(block shape, element type) of ``!tt.ptr<tensor<...>>`` or ``!tt.tensordesc<tensor<...>>``."""
    text = str(t)
    inner = text[text.index("tensor<") + 7:]
    dims = []
    parts = inner.split("x")
    i = 0
    while parts[i].isdigit():
        dims.append(int(parts[i]))
        i += 1
    elem = "x".join(parts[i:]).split(">")[0].split(",")[0]
    return tuple(dims), elem


class BlockPtrMixin:
    def _composite_elem(self, t: Any) -> tuple[tuple[int, ...], str]:
        block, elem = _block_of(t)
        lt = self.llty(elem)
        return block, ("i8" if lt == "i1" else lt)

    @GPU_OPS.lowers("tt.make_block_ptr")
    def op_make_block_ptr(self, op: Any) -> None:
        parts = split_operands(op, ["base", "shape", "strides", "offsets"])
        block, elem = self._composite_elem(op.results[0].type)
        self.values[op.results[0]] = Composite(self.scalar_of(parts["base"][0]),
                                               [self.scalar_of(v) for v in parts["shape"]],
                                               [self.scalar_of(v) for v in parts["strides"]],
                                               [self.scalar_of(v) for v in parts["offsets"]], block, elem)

    @GPU_OPS.lowers("tt.advance")
    def op_advance(self, op: Any) -> None:
        parts = split_operands(op, ["ptr", "offsets"])
        bp = self.values[parts["ptr"][0]]
        new = []
        for o, d in zip(bp.offsets, (self.scalar_of(v) for v in parts["offsets"])):
            dv = d.value if d.ty == o.ty else self.fn.inst(f"{'trunc' if d.ty == 'i64' else 'sext'} {d.ty} {d.value} "
                                                          f"to {o.ty}")
            new.append(Scalar(self.fn.inst(f"add {o.ty} {o.value}, {dv}"), o.ty))
        self.values[op.results[0]] = Composite(bp.base, bp.shape, bp.strides, new, bp.block, bp.elem, bp.padding)

    @GPU_OPS.lowers("tt.make_tensor_descriptor")
    def op_make_tensor_descriptor(self, op: Any) -> None:
        parts = split_operands(op, ["base", "shape", "strides"])
        block, elem = self._composite_elem(op.results[0].type)
        padding = str_attr(op, "padding", "zero")
        self.values[op.results[0]] = Composite(self.scalar_of(parts["base"][0]),
                                               [self.scalar_of(v) for v in parts["shape"]],
                                               [self.scalar_of(v) for v in parts["strides"]], [], block, elem,
                                               padding)

    def select_composite(self, op: Any) -> Composite:
        """``arith.select`` of two block pointers or descriptors, scalar by scalar (MLIR's canonicalizer makes
        one of a ternary or of an ``if`` whose branches only pick one of two; the frontend refuses descriptors
        of different paddings meeting there)."""
        c = self.scalar_of(op.operands[0])
        a, b = self.values[op.operands[1]], self.values[op.operands[2]]
        picked = [Scalar(self.fn.inst(f"select i1 {c.value}, {x.ty} {x.value}, {y.ty} {y.value}"), x.ty)
                  for x, y in zip(a.flat(), b.flat())]
        return a.rebuild(picked)

    # -- addressing ----------------------------------------------------------------------------------------
    def _i64(self, s: Any) -> str:
        if isinstance(s, str):
            return s
        if s.ty == "i64":
            return s.value
        return self.fn.inst(f"sext {s.ty} {s.value} to i64")

    def block_access(self, c: Composite, offsets: list, lay: Any, checked: list[int],
                     coord_of: Optional[Any] = None) -> tuple[list[str], list[Optional[str]]]:
        """Per register of ``lay``: the element's address and (if any dimension is checked) its in-bounds bit."""
        fn = self.fn
        offs = [self._i64(o) for o in offsets]
        strides = [self._i64(s) for s in c.strides]
        limits = {d: self._i64(c.shape[d]) for d in checked}
        addrs, masks = [], []
        for r in range(lay.num_regs):
            total: Optional[str] = None
            ok: Optional[str] = None
            for d in range(lay.rank):
                idx = coord_of(r, d) if coord_of is not None else None
                if idx is None:
                    ci = self.coord(lay, r, d)
                    idx = ci if ci.isdigit() else fn.inst(f"zext i32 {ci} to i64")
                cd = idx if offs[d] == "0" else fn.inst(f"add i64 {offs[d]}, {idx}")
                if d in limits:
                    t = fn.inst(f"icmp ult i64 {cd}, {limits[d]}")
                    ok = t if ok is None else fn.inst(f"and i1 {ok}, {t}")
                term = cd if strides[d] == "1" else fn.inst(f"mul i64 {cd}, {strides[d]}")
                total = term if total is None else fn.inst(f"add i64 {total}, {term}")
            addrs.append(fn.inst(f"getelementptr {c.elem}, {self.target.global_ptr} {c.base.value}, i64 {total}"))
            masks.append(ok)
        return addrs, masks

    def block_load(self, res: Any, c: Composite, offsets: list, checked: list[int], padding: str,
                   volatile: bool = False, coord_of: Optional[Any] = None, lay: Optional[Any] = None) -> None:
        lay = lay or self.layout_of(res)
        rty = self.value_type(res)
        addrs, masks = self.block_access(c, offsets, lay, checked, coord_of)
        pad = const(c.elem, float("nan")) if padding == "nan" and c.elem in ("half", "bfloat", "float", "double") \
            else const(c.elem, 0)
        regs = []
        for a, m in zip(addrs, masks):
            v = self.target.load(self.fn, self.module, a, c.elem, 1, BYTES.get(c.elem, 8), m,
                                 [pad] if m is not None else None, "", "", volatile)[0]
            regs.append(self._reg_value(v, rty))
        self.values[res] = Tensor(lay, regs, rty)

    def block_store(self, c: Composite, offsets: list, value_v: Any, checked: list[int], kind: str = "",
                    coord_of: Optional[Any] = None, lay: Optional[Any] = None) -> None:
        val = self.tensor(value_v) if lay is None else self.tensor_in(value_v, lay)
        lay = val.layout
        addrs, masks = self.block_access(c, offsets, lay, checked, coord_of)
        tpred = self.unique_pred(lay)
        unique = set(lay.unique_regs())
        for r, (a, m) in enumerate(zip(addrs, masks)):
            if r not in unique:
                continue
            pred = self.and_pred(m, tpred)
            v = self._mem_value(val.regs[r], val.ty)
            if kind:
                k = kind if not (kind == "add" and c.elem in ("half", "bfloat", "float", "double")) else "fadd"
                self.target.atomic_rmw(self.fn, self.module, k, a, c.elem, v, pred, "relaxed", "gpu")
            else:
                self.target.store(self.fn, self.module, a, c.elem, [v], BYTES.get(c.elem, 8), pred)

    # -- ops ---------------------------------------------------------------------------------------------
    def load_block_ptr(self, op: Any, ptr_v: Any) -> None:
        c = self.values[ptr_v]
        checked = list(ir.DenseI32ArrayAttr(op.attributes["boundary_check"])) if "boundary_check" in op.attributes \
            else []
        volatile = "is_volatile" in op.attributes and ir.BoolAttr(op.attributes["is_volatile"]).value
        self.block_load(op.results[0], c, c.offsets, checked, str_attr(op, "padding", "zero"), volatile)

    def store_block_ptr(self, op: Any, ptr_v: Any, value_v: Any) -> None:
        c = self.values[ptr_v]
        checked = list(ir.DenseI32ArrayAttr(op.attributes["boundary_check"])) if "boundary_check" in op.attributes \
            else []
        self.block_store(c, c.offsets, value_v, checked)

    @GPU_OPS.lowers("tt.descriptor_load")
    def op_descriptor_load(self, op: Any) -> None:
        parts = split_operands(op, ["desc", "indices"])
        c = self.values[parts["desc"][0]]
        idx = [self.scalar_of(v) for v in parts["indices"]]
        self.block_load(op.results[0], c, idx, list(range(len(c.block))), c.padding)

    @GPU_OPS.lowers("tt.descriptor_store")
    def op_descriptor_store(self, op: Any) -> None:
        parts = split_operands(op, ["desc", "src", "indices"])
        c = self.values[parts["desc"][0]]
        idx = [self.scalar_of(v) for v in parts["indices"]]
        self.block_store(c, idx, parts["src"][0], list(range(len(c.block))))

    @GPU_OPS.lowers("tt.descriptor_reduce")
    def op_descriptor_reduce(self, op: Any) -> None:
        parts = split_operands(op, ["desc", "src", "indices"])
        c = self.values[parts["desc"][0]]
        idx = [self.scalar_of(v) for v in parts["indices"]]
        self.block_store(c, idx, parts["src"][0], list(range(len(c.block))), kind=str_attr(op, "kind"))

    def _gather_coords(self, rows_v: Any, col: Any, lay: Any) -> Any:
        rows = self.tensor_in(rows_v, _row_layout(lay))
        fn = self.fn

        def coord_of(r: int, d: int) -> Optional[str]:
            if d == 0:
                v = rows.regs[_row_reg(lay, r)]
                return v if rows.ty == "i64" else fn.inst(f"sext {rows.ty} {v} to i64")
            return None
        return coord_of

    @GPU_OPS.lowers("tt.descriptor_gather")
    def op_descriptor_gather(self, op: Any) -> None:
        c = self.values[op.operands[0]]
        col = self.scalar_of(op.operands[2])
        lay = self.layout_of(op.results[0])
        coord_of = self._gather_coords(op.operands[1], col, lay)
        self.block_load(op.results[0], c, ["0", col], [0, 1], c.padding, coord_of=coord_of, lay=lay)

    @GPU_OPS.lowers("tt.descriptor_scatter")
    def op_descriptor_scatter(self, op: Any) -> None:
        c = self.values[op.operands[0]]
        src = self.tensor(op.operands[1])
        col = self.scalar_of(op.operands[3])
        coord_of = self._gather_coords(op.operands[2], col, src.layout)
        self.block_store(c, ["0", col], op.operands[1], [0, 1], coord_of=coord_of, lay=src.layout)

    @GPU_OPS.lowers("tt.unsplat")
    def op_unsplat(self, op: Any) -> None:
        t = self.tensor(op.operands[0])
        self.values[op.results[0]] = Scalar(t.regs[0], t.ty)

    @GPU_OPS.lowers("tt.map_elementwise")
    def op_map_elementwise(self, op: Any) -> None:
        srcs_v = [v for g in split_operands(op, [f"s{i}" for i in range(8)]).values() for v in g]
        pack = ir.IntegerAttr(op.attributes["pack"]).value if "pack" in op.attributes else 1
        res = list(op.results)
        lay = self.layout_of(res[0]) if tensor_shape(res[0].type) is not None else None
        if lay is None:
            raise LoweringError("map_elementwise on scalars")
        last = lay.rank - 1
        if pack > 1 and (lay.reg_run(last) < pack):
            lay = blocked_for(lay.shape, [1] * last + [pack], self.num_warps, self.warp_size)
        srcs = [self.tensor_in(v, lay) for v in srcs_v]
        block = op.regions[0].blocks[0]
        body = block_ops(block)
        args = list(block.arguments)
        out: list[list[str]] = [[""] * lay.num_regs for _ in res]
        for g in range(0, lay.num_regs, pack):
            saved = self.values
            self.values = _Overlay(saved)
            try:
                vals = [s.regs[g + i] for s in srcs for i in range(pack)]
                tys = [s.ty for s in srcs for _ in range(pack)]
                for a, v, t in zip(args, vals, tys):
                    self.values[a] = Scalar(v, t)
                for o in body[:-1]:
                    self.lower_op(o)
                ys = [self.values[v].value for v in body[-1].operands]
            finally:
                self.values = saved
            for j in range(len(res)):
                for i in range(pack):
                    out[j][g + i] = ys[j * pack + i]
        for j, r in enumerate(res):
            self.set_result(op, Tensor(lay, out[j], self.value_type(r)), j)


def _row_layout(lay: Any) -> Any:
    return L.squeeze(L.restrict(lay, (lay.shape[0], 1)), 1)


def _row_reg(lay: Any, r: int) -> int:
    return r
