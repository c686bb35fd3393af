"""Block pointers (``tl.make_block_ptr``) and tensor descriptors (``tl.make_tensor_descriptor``) on the CPU.

Both are a base pointer plus per-dimension shape, strides and (for block pointers) offsets, carried as SSA
scalars (:class:`Composite`). A load through one is a lazy :class:`~.tiles.Load` whose address and mask are
computed from the element index; bounds checks become the mask and the padding option its ``other``.
"""
from __future__ import annotations

from typing import Any, Optional

from tritium._mlir import ir

from .context import Context
from .hazards import UNKNOWN, must_stage, pointer_root
from .irtext import SIZES, const
from .opinfo import RMW, split_operands, type_info
from .optable import CPU_OPS
from .tiles import Evaluator, Load, Node, Scalar, Splat, Tile, loop_nest, numel


class Composite:
    """A value made of several scalars: a block pointer or a tensor descriptor.

    ``base`` is a pointer; ``shape``/``strides`` are i64, ``offsets`` i32 (empty for descriptors);
    ``block`` is the block shape, ``elem`` the LLVM element type and ``padding`` the fill of
    out-of-bounds reads ("zero" or "nan")."""

    __slots__ = ("base", "shape", "strides", "offsets", "block", "elem", "padding")

    def __init__(self, base: Any, shape: list, strides: list, offsets: list, block: tuple[int, ...], elem: str,
                 padding: str = "zero") -> None:
        self.base, self.shape, self.strides, self.offsets = base, shape, strides, offsets
        self.block, self.elem, self.padding = block, elem, padding

    def scalars(self) -> list:
        return [self.base, *self.shape, *self.strides, *self.offsets]

    def rebuild(self, scalars: list) -> "Composite":
        n = len(self.shape)
        k = len(self.offsets)
        return Composite(scalars[0], scalars[1:1 + n], scalars[1 + n:1 + 2 * n], scalars[1 + 2 * n:1 + 2 * n + k],
                         self.block, self.elem, self.padding)


class _Coord(Node):
    """The i64 coordinate ``offset + index`` of an element along one dimension."""

    def __init__(self, offset: Optional[str], dim: int, shape: tuple[int, ...]) -> None:
        self.offset, self.dim, self.shape, self.ty = offset, dim, shape, "i64"

    def eval(self, ev: Evaluator, idx: list[str]) -> str:
        i = idx[self.dim]
        if self.offset is None:
            return i
        return ev.fn.inst(f"add i64 {self.offset}, {i}")


class _Address(Node):
    """``base + sum(coord_d * stride_d)`` elements of ``elem``."""

    def __init__(self, base: str, coords: list[Node], strides: list[str], elem: str, shape: tuple[int, ...]):
        self.base, self.coords, self.strides, self.elem, self.shape, self.ty = base, coords, strides, elem, shape, "ptr"

    def eval(self, ev: Evaluator, idx: list[str]) -> str:
        fn = ev.fn
        total: Optional[str] = None
        for c, s in zip(self.coords, self.strides):
            v = ev.value(c, idx)
            term = v if s == "1" else fn.inst(f"mul i64 {v}, {s}")
            total = term if total is None else fn.inst(f"add i64 {total}, {term}")
        if total is None:
            return self.base
        return fn.inst(f"getelementptr {self.elem}, ptr {self.base}, i64 {total}")

    def children(self) -> list[Node]:
        return list(self.coords)


class _InBounds(Node):
    """``0 <= coord_d < shape_d`` for the checked dimensions."""

    def __init__(self, coords: list[Node], limits: list[str], shape: tuple[int, ...]) -> None:
        self.coords, self.limits, self.shape, self.ty = coords, limits, shape, "i1"

    def eval(self, ev: Evaluator, idx: list[str]) -> str:
        fn = ev.fn
        ok: Optional[str] = None
        for c, lim in zip(self.coords, self.limits):
            v = ev.value(c, idx)
            # one unsigned compare checks both bounds: a negative coordinate is a huge unsigned number
            t = fn.inst(f"icmp ult i64 {v}, {lim}")
            ok = t if ok is None else fn.inst(f"and i1 {ok}, {t}")
        return ok or "true"

    def children(self) -> list[Node]:
        return list(self.coords)


def _i64(fn: Any, s: Any) -> str:
    if s.ty == "i64":
        return s.value
    return fn.inst(f"sext {s.ty} {s.value} to i64")


# -- construction ------------------------------------------------------------------------------
@CPU_OPS.lowers("tt.make_block_ptr")
def make_block_ptr(ctx: Context, op: Any) -> None:
    parts = split_operands(op, ["base", "shape", "strides", "offsets"])
    base = ctx.consume(parts["base"][0])
    shape = [ctx.consume(v) for v in parts["shape"]]
    strides = [ctx.consume(v) for v in parts["strides"]]
    offsets = [ctx.consume(v) for v in parts["offsets"]]
    block, elem = _pointee_block(op.results[0].type)
    ctx.values[op.results[0]] = Composite(base, shape, strides, offsets, block, elem)


@CPU_OPS.lowers("tt.advance")
def advance(ctx: Context, op: Any) -> None:
    parts = split_operands(op, ["ptr", "offsets"])
    bp = ctx.consume(parts["ptr"][0])
    deltas = [ctx.consume(v) for v in parts["offsets"]]
    fn = ctx.fn
    new = []
    for o, d in zip(bp.offsets, deltas):
        dv = d.value if d.ty == "i32" else fn.inst(f"trunc {d.ty} {d.value} to i32")
        new.append(Scalar(fn.inst(f"add i32 {o.value}, {dv}"), "i32"))
    ctx.values[op.results[0]] = Composite(bp.base, bp.shape, bp.strides, new, bp.block, bp.elem, bp.padding)


@CPU_OPS.lowers("tt.make_tensor_descriptor")
def make_tensor_descriptor(ctx: Context, op: Any) -> None:
    parts = split_operands(op, ["base", "shape", "strides"])
    base = ctx.consume(parts["base"][0])
    shape = [ctx.consume(v) for v in parts["shape"]]
    strides = [ctx.consume(v) for v in parts["strides"]]
    block, elem = _desc_block(op.results[0].type)
    padding = ir.StringAttr(op.attributes["padding"]).value if "padding" in op.attributes else "zero"
    ctx.values[op.results[0]] = Composite(base, shape, strides, [], block, elem, padding)


def select_composite(ctx: Context, cond: Any, a: Composite, b: Composite) -> Composite:
    """``arith.select`` of two block pointers or descriptors, scalar by scalar. MLIR's canonicalizer makes
    one of a ternary (``d = a if c else b``) or of an ``if`` whose branches only pick one of two. The
    frontend refuses descriptors of different paddings meeting here, so ``a``'s is the result's."""
    fn = ctx.fn
    picked = [Scalar(fn.inst(f"select i1 {cond.value}, {x.ty} {x.value}, {y.ty} {y.value}"), x.ty)
              for x, y in zip(a.scalars(), b.scalars())]
    return a.rebuild(picked)


# -- element addressing ------------------------------------------------------------------------
def _block_nodes(ctx: Context, bp: Composite, offsets: list, checked: list[int], shape: tuple[int, ...]
                 ) -> tuple[Node, Optional[Node]]:
    fn = ctx.fn
    offs = [_i64(fn, o) for o in offsets]
    coords = [_Coord(o, d, shape) for d, o in enumerate(offs)]
    strides = [_i64(fn, s) for s in bp.strides]
    addr = _Address(bp.base.value, coords, strides, bp.elem, shape)
    if not checked:
        return addr, None
    limits = [_i64(fn, bp.shape[d]) for d in checked]
    return addr, _InBounds([coords[d] for d in checked], limits, shape)


def _padding(ctx: Context, bp: Composite, padding: str, shape: tuple[int, ...]) -> Optional[Node]:
    if padding == "nan" and bp.elem in ("half", "bfloat", "float", "double"):
        return Splat(const(bp.elem, float("nan")), shape, bp.elem)
    return None


# -- loads and stores through block pointers ---------------------------------------------------
def load_block_ptr(ctx: Context, op: Any, ptr_value: Any) -> None:
    bp = ctx.consume(ptr_value)
    checked = list(ir.DenseI32ArrayAttr(op.attributes["boundary_check"])) \
        if "boundary_check" in op.attributes else []
    padding = ir.StringAttr(op.attributes["padding"]).value if "padding" in op.attributes else "zero"
    volatile = "is_volatile" in op.attributes and ir.BoolAttr(op.attributes["is_volatile"]).value
    _load_block(ctx, op.results[0], bp, bp.offsets, checked, padding, volatile, pointer_root(ptr_value))


def _load_block(ctx: Context, res: Any, bp: Composite, offsets: list, checked: list[int], padding: str,
                volatile: bool = False, root: Any = UNKNOWN) -> None:
    shape = bp.block
    addr, mask = _block_nodes(ctx, bp, offsets, checked, shape)
    other = _padding(ctx, bp, padding, shape) if mask is not None else None
    ctx.work += 2 * numel(shape)
    node = Load(addr, mask, other, bp.elem, volatile)
    node.root = root
    node.site = ctx.access_site(res.owner, "load", mask is not None, bp.elem)
    ctx.set(res, Tile(node))


def store_block_ptr(ctx: Context, op: Any, ptr_value: Any, value: Any) -> None:
    bp = ctx.consume(ptr_value)
    val = ctx.consume(value)
    checked = list(ir.DenseI32ArrayAttr(op.attributes["boundary_check"])) \
        if "boundary_check" in op.attributes else []
    _store_block(ctx, bp, bp.offsets, val, checked, pointer_root(ptr_value), op)


def _store_block(ctx: Context, bp: Composite, offsets: list, val: Any, checked: list[int], root: Any = UNKNOWN,
                 op: Any = None) -> None:
    ctx.flush_pending(consumed=(val, ) if isinstance(val, Tile) else ())
    shape = bp.block
    addr, mask = _block_nodes(ctx, bp, offsets, checked, shape)
    vn = ctx.as_node(val, shape)
    if isinstance(val, Tile) and must_stage(vn, addr, root):
        vn = ctx.materialize(val)
    fn = ctx.fn
    ty = bp.elem
    ctx.work += 2 * numel(shape)
    site = ctx.access_site(op, "store", mask is not None, ty) if op is not None else None

    def body(idx: list[str]) -> None:
        ev = Evaluator(fn)
        p = ev.value(addr, idx, address=True)
        v = ev.value(vn, idx)
        m = ev.value(mask, idx) if mask is not None else None
        ctx.guarded(m, lambda: fn.emit(f"store {ty} {v}, ptr {ctx.checked(p, site)}, align {SIZES[ty]}"))

    loop_nest(fn, shape, body)
    ctx.drop_consumed((val, ))


# -- tensor descriptors ------------------------------------------------------------------------
@CPU_OPS.lowers("tt.descriptor_load")
def descriptor_load(ctx: Context, op: Any) -> None:
    parts = split_operands(op, ["desc", "indices"])
    d = ctx.consume(parts["desc"][0])
    idx = [ctx.consume(v) for v in parts["indices"]]
    _load_block(ctx, op.results[0], d, idx, list(range(len(d.block))), d.padding,
                     root=pointer_root(parts["desc"][0]))


@CPU_OPS.lowers("tt.descriptor_store")
def descriptor_store(ctx: Context, op: Any) -> None:
    parts = split_operands(op, ["desc", "src", "indices"])
    d = ctx.consume(parts["desc"][0])
    val = ctx.consume(parts["src"][0])
    idx = [ctx.consume(v) for v in parts["indices"]]
    _store_block(ctx, d, idx, val, list(range(len(d.block))), pointer_root(parts["desc"][0]), op)


@CPU_OPS.lowers("tt.descriptor_reduce")
def descriptor_reduce(ctx: Context, op: Any) -> None:
    parts = split_operands(op, ["desc", "src", "indices"])
    d = ctx.consume(parts["desc"][0])
    val = ctx.consume(parts["src"][0])
    idx = [ctx.consume(v) for v in parts["indices"]]
    kind = RMW[ir.StringAttr(op.attributes["kind"]).value]
    ctx.flush_pending(consumed=(val, ) if isinstance(val, Tile) else ())
    shape = d.block
    addr, mask = _block_nodes(ctx, d, idx, list(range(len(shape))), shape)
    vn = ctx.as_node(val, shape)
    fn, ty = ctx.fn, d.elem
    site = ctx.access_site(op, f"descriptor_reduce({kind})", True, ty)

    def body(ix: list[str]) -> None:
        ev = Evaluator(fn)
        p = ev.value(addr, ix, address=True)
        v = ev.value(vn, ix)
        m = ev.value(mask, ix) if mask is not None else None
        ctx.guarded(m, lambda: fn.emit(f"atomicrmw {kind} ptr {ctx.checked(p, site)}, {ty} {v} monotonic, "
                                         f"align {SIZES[ty]}"))

    loop_nest(fn, shape, body)
    ctx.drop_consumed((val, ))


def _gather_nodes(ctx: Context, d: Composite, rows: Any, col: Any, shape: tuple[int, ...]) -> tuple[Node, Node]:
    fn = ctx.fn
    rnode = ctx.as_node(rows, shape[:1])
    col64 = _i64(fn, col)
    rty = rows.ty if not isinstance(rows, Tile) else rows.node.ty

    class _Row(Node):
        def __init__(self) -> None:
            self.shape, self.ty = shape, "i64"

        def eval(self, ev: Evaluator, idx: list[str]) -> str:
            r = ev.value(rnode, idx[:1])
            return r if rty == "i64" else ev.fn.inst(f"sext {rty} {r} to i64")

        def children(self) -> list[Node]:
            return [rnode]

    coords = [_Row(), _Coord(col64, 1, shape)]
    strides = [_i64(fn, s) for s in d.strides]
    limits = [_i64(fn, s) for s in d.shape]
    return _Address(d.base.value, coords, strides, d.elem, shape), _InBounds(coords, limits, shape)


@CPU_OPS.lowers("tt.descriptor_gather")
def descriptor_gather(ctx: Context, op: Any) -> None:
    d = ctx.consume(op.operands[0])
    rows = ctx.consume(op.operands[1])
    col = ctx.consume(op.operands[2])
    shape = type_info(op.results[0].type)[0]
    addr, mask = _gather_nodes(ctx, d, rows, col, shape)
    node = Load(addr, mask, _padding(ctx, d, d.padding, shape), d.elem)
    node.site = ctx.access_site(op, "load", True, d.elem)
    ctx.set(op.results[0], Tile(node))


@CPU_OPS.lowers("tt.descriptor_scatter")
def descriptor_scatter(ctx: Context, op: Any) -> None:
    d = ctx.consume(op.operands[0])
    val = ctx.consume(op.operands[1])
    rows = ctx.consume(op.operands[2])
    col = ctx.consume(op.operands[3])
    ctx.flush_pending(consumed=tuple(x for x in (val, rows) if isinstance(x, Tile)))
    shape = val.shape
    addr, mask = _gather_nodes(ctx, d, rows, col, shape)
    fn, ty, vn = ctx.fn, d.elem, val.node
    site = ctx.access_site(op, "store", True, ty)

    def body(idx: list[str]) -> None:
        ev = Evaluator(fn)
        p = ev.value(addr, idx, address=True)
        v = ev.value(vn, idx)
        m = ev.value(mask, idx)
        ctx.guarded(m, lambda: fn.emit(f"store {ty} {v}, ptr {ctx.checked(p, site)}, align {SIZES[ty]}"))

    loop_nest(fn, shape, body)
    ctx.drop_consumed((val, rows))


def _inner(text: str, prefix: str) -> str:
    inner = text[text.index(prefix) + len(prefix):]
    depth = 1
    for i, ch in enumerate(inner):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
            if depth == 0:
                return inner[:i]
    raise ValueError(text)


def _block_of(tensor_text: str, context: Any) -> tuple[tuple[int, ...], str]:
    shape, elem, _ = type_info(ir.Type.parse(tensor_text, context))
    return tuple(shape), elem


def _pointee_block(t: Any) -> tuple[tuple[int, ...], str]:
    return _block_of(_inner(str(t), "!tt.ptr<"), t.context)


def _desc_block(t: Any) -> tuple[tuple[int, ...], str]:
    return _block_of(_inner(str(t), "!tt.tensordesc<"), t.context)
