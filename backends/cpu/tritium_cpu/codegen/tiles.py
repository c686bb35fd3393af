"""Tiles on the CPU: lazy elementwise expressions over buffers, evaluated inside loop nests.

A tile value is a :class:`Tile` whose ``node`` says how to compute element ``(i0, ..., in)``: read a
buffer, broadcast a scalar, index arithmetic (``arange``), an elementwise op of other nodes, an index
remapping (broadcast, expand_dims, permute, cat, join...), or a masked load. Chains of elementwise ops
are fused into the loop of whatever consumes them (a store, a reduction, a materialization), so a kernel
like ``z = x + y`` becomes one loop that LLVM vectorizes.
"""
from __future__ import annotations

from typing import Callable, Optional

from .irtext import SIZES, Function, const


class Scalar:
    """A scalar SSA value of the kernel (``value`` is its LLVM name or a constant)."""
    __slots__ = ("value", "ty")

    def __init__(self, value: str, ty: str) -> None:
        self.value, self.ty = value, ty


class Node:
    shape: tuple[int, ...]
    ty: str
    #: ``!dbg`` of the op that made this tile: its instructions keep that source line wherever evaluated
    dbg = ""

    def eval(self, ev: "Evaluator", idx: list[str]) -> str:
        raise NotImplementedError

    def children(self) -> list["Node"]:
        return []

    # children never change once a node is made, so what is known of a subtree is kept: asked of every new node,
    # these walks were quadratic in the length of an unrolled chain (and recursed as deep as it)
    def has_load(self) -> bool:
        known = self.__dict__.get("_has_load")
        if known is None:
            known = self._has_load = any(c.has_load() for c in self.children())
        return known

    def depth(self) -> int:
        """The longest path of nodes from this one down to a leaf."""
        known = self.__dict__.get("_depth")
        if known is None:
            known = self._depth = 1 + max((c.depth() for c in self.children()), default=0)
        return known

    def reads(self, buf: str) -> bool:
        return any(c.reads(buf) for c in self.children())

    def reads_remapped(self, buf: str) -> bool:
        """Reads ``buf`` at an index other than the element being computed (unsafe to write in place)."""
        return any(c.reads_remapped(buf) for c in self.children())


class Buf(Node):
    """A materialized tile: ``numel`` elements in row-major order at ``ptr``."""

    def __init__(self, ptr: str, shape: tuple[int, ...], ty: str) -> None:
        self.ptr, self.shape, self.ty = ptr, shape, ty

    def eval(self, ev: "Evaluator", idx: list[str]) -> str:
        p = ev.element_ptr(self, idx)
        return ev.fn.inst(f"load {self.ty}, ptr {p}, align {SIZES[self.ty]}")

    def reads(self, buf: str) -> bool:
        return self.ptr == buf


class Splat(Node):
    def __init__(self, value: str, shape: tuple[int, ...], ty: str) -> None:
        self.value, self.shape, self.ty = value, shape, ty

    def eval(self, ev: "Evaluator", idx: list[str]) -> str:
        return self.value


class Range(Node):
    def __init__(self, start: int, n: int) -> None:
        self.start, self.shape, self.ty = start, (n, ), "i32"

    def eval(self, ev: "Evaluator", idx: list[str]) -> str:
        i = idx[0]
        if not i.startswith("%"):
            return str(int(i) + self.start)
        t = ev.fn.inst(f"trunc i64 {i} to i32")
        if self.start == 0:
            return t
        return ev.fn.inst(f"add nuw nsw i32 {t}, {self.start}")


class Elem(Node):
    """An elementwise op: ``emit(ev, operand values) -> value``."""

    def __init__(self, name: str, args: list[Node], shape: tuple[int, ...], ty: str,
                 emit: Callable[["Evaluator", list[str]], str], attrs: Optional[dict] = None) -> None:
        self.name, self.args, self.shape, self.ty, self.emit = name, args, shape, ty, emit
        self.attrs = attrs or {}

    def eval(self, ev: "Evaluator", idx: list[str]) -> str:
        if ev.masks_true and self.name in _REM:
            return ev.value(self.args[0], idx)    # the fast path checked that x % n == x everywhere
        if ev.masks_true and self.name == "arith.select" and id(self) in getattr(ev.masks_true, "selects", ()):
            return ev.value(self.args[1], idx)    # ... and that this condition is true everywhere
        return self.emit(ev, [ev.value(a, idx) for a in self.args])

    def children(self) -> list[Node]:
        return self.args


_REM = ("arith.remsi", "arith.remui")


class Remap(Node):
    """Element ``idx`` of this tile is element ``fn(idx)`` of ``src``."""

    def __init__(self, src: Node, shape: tuple[int, ...], remap: Callable[["Evaluator", list[str]], list[str]],
                 identity_safe: bool = False, axes: Optional[list[Optional[int]]] = None) -> None:
        self.src, self.shape, self.ty, self.remap = src, shape, src.ty, remap
        self.identity_safe = identity_safe
        #: for pure index shuffles: axes[d] is the axis of this tile that index d of ``src`` is, or None
        #: where that index is constant (lets analyses such as lanes.inner_step see through the remap)
        self.axes = axes

    def eval(self, ev: "Evaluator", idx: list[str]) -> str:
        return ev.value(self.src, ev.index(self, "remap", self.remap, idx))

    def children(self) -> list[Node]:
        return [self.src]

    def reads_remapped(self, buf: str) -> bool:
        return (not self.identity_safe and self.src.reads(buf)) or self.src.reads_remapped(buf)


class Select2(Node):
    """Element-wise choice between two tiles by a condition on the index (cat, join)."""

    def __init__(self, shape: tuple[int, ...], ty: str, cond: Callable[["Evaluator", list[str]], str],
                 a: Node, a_idx: Callable, b: Node, b_idx: Callable) -> None:
        self.shape, self.ty, self.cond = shape, ty, cond
        self.a, self.a_idx, self.b, self.b_idx = a, a_idx, b, b_idx

    def eval(self, ev: "Evaluator", idx: list[str]) -> str:
        c = self.cond(ev, idx)
        va = ev.value(self.a, ev.index(self, "a", self.a_idx, idx))
        vb = ev.value(self.b, ev.index(self, "b", self.b_idx, idx))
        return ev.fn.inst(f"select i1 {c}, {self.ty} {va}, {self.ty} {vb}")

    def children(self) -> list[Node]:
        return [self.a, self.b]

    def reads_remapped(self, buf: str) -> bool:
        return self.a.reads(buf) or self.b.reads(buf)


class Load(Node):
    """``mask ? *ptr : other`` per element. Evaluated where consumed unless a side effect intervenes."""

    def __init__(self, ptr: Node, mask: Optional[Node], other: Optional[Node], ty: str, volatile: bool = False):
        self.ptr, self.mask, self.other, self.ty, self.shape = ptr, mask, other, ty, ptr.shape
        self.volatile = volatile

    #: the access's index in the kernel's bounds checker (codegen/oob.py), None when unchecked
    site: Optional[int] = None

    def _read(self, fn: Function, p: str) -> str:
        checker = getattr(fn, "bounds", None)
        if checker is not None and self.site is not None:
            p = checker.guard(fn, p, self.site)   # on the lanes that execute the load only
        vol = "volatile " if self.volatile else ""
        return fn.inst(f"load {vol}{self.ty}, ptr {p}, align {SIZES[self.ty]}")

    def eval(self, ev: "Evaluator", idx: list[str]) -> str:
        fn = ev.fn
        if self.mask is not None and not ev.masks_true:
            lanes = ev.masked_load(self, idx)   # this lane's element of a vector load (codegen/lanes.py)
            if lanes is not None:
                return lanes
        p = ev.value(self.ptr, idx, address=True)
        if self.mask is None or ev.masks_true:
            return self._read(fn, p)
        o = ev.value(self.other, idx) if self.other is not None else const(self.ty, 0)
        m = ev.value(self.mask, idx)
        if m == "true":
            return self._read(fn, p)
        do, join = fn.label("ld"), fn.label("ldj")
        before = fn.current
        fn.cond_br(m, do, join)
        fn.start_block(do)
        v = self._read(fn, p)
        end = fn.current   # the check, when on, ends the block the load began in
        fn.br(join)
        fn.start_block(join)
        return fn.inst(f"phi {self.ty} [{v}, %{end}], [{o}, %{before}]")

    def children(self) -> list[Node]:
        return [c for c in (self.ptr, self.mask, self.other) if c is not None]

    def has_load(self) -> bool:
        return True


class Tile:
    """A tile-typed SSA value of the kernel. ``node`` can be replaced by a buffer once materialized."""

    def __init__(self, node: Node, uses: int = 1) -> None:
        self.node = node
        self.uses = uses

    @property
    def shape(self) -> tuple[int, ...]:
        return self.node.shape

    @property
    def ty(self) -> str:
        return self.node.ty


def numel(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def strides(shape: tuple[int, ...]) -> list[int]:
    out = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        out[d] = out[d + 1] * shape[d + 1]
    return out


class Evaluator:
    """Evaluates nodes at one index tuple inside a loop body, computing shared subexpressions once."""

    def __init__(self, fn: Function, masks_true: bool = False) -> None:
        self.fn = fn
        self.memo: dict[tuple, str] = {}
        self.address = False
        #: set inside the copy of a loop that runs when every mask of the tile is known to be true
        self.masks_true = masks_true

    def value(self, node: Node, idx: list[str], address: bool = False) -> str:
        key = (id(node), tuple(idx), address or self.address)
        v = self.memo.get(key)
        if v is None:
            saved = self.address
            self.address = address or self.address
            fn, dbg = self.fn, node.dbg
            saved_dbg = fn.dbg
            if dbg:
                fn.dbg = dbg
            try:
                v = node.eval(self, idx)
            finally:
                self.address = saved
                fn.dbg = saved_dbg
            self.memo[key] = v
        return v

    def index(self, owner: Node, part: str, f: Callable[["Evaluator", list[str]], list[str]],
              idx: list[str]) -> list[str]:
        """``f(self, idx)``: the index of a child of ``owner`` (its ``part``) at this node's ``idx``."""
        return f(self, idx)

    def masked_load(self, load: "Load", idx: list[str]) -> Optional[str]:
        """This element of a masked load when loaded together with others (codegen/lanes.py), else None."""
        return None

    def element_ptr(self, buf: Buf, idx: list[str]) -> str:
        lin = linear_index(self.fn, buf.shape, idx)
        return self.fn.inst(f"getelementptr inbounds {buf.ty}, ptr {buf.ptr}, i64 {lin}")


def linear_index(fn: Function, shape: tuple[int, ...], idx: list[str]) -> str:
    st = strides(shape)
    total: Optional[str] = None
    const_part = 0
    for d, i in enumerate(idx):
        if shape[d] == 1:
            continue
        if not i.startswith("%"):
            const_part += int(i) * st[d]
            continue
        term = i if st[d] == 1 else fn.inst(f"mul nuw nsw i64 {i}, {st[d]}")
        total = term if total is None else fn.inst(f"add nuw nsw i64 {total}, {term}")
    if total is None:
        return str(const_part)
    if const_part:
        total = fn.inst(f"add nuw nsw i64 {total}, {const_part}")
    return total


def loop_nest(fn: Function, shape: tuple[int, ...], body: Callable[[list[str]], None],
              order: Optional[list[int]] = None, keep_inner: bool = False) -> None:
    """Emit loops over every index of ``shape`` (dimensions of size 1 get no loop) and call ``body``.

    ``keep_inner``: forbid LLVM to unroll the innermost loop before vectorizing it (a fully unrolled short
    loop gets vectorized along the loop around it instead, which is wrong for accumulators kept in memory)."""
    dims = order if order is not None else list(range(len(shape)))
    idx = ["0"] * len(shape)

    def rec(k: int) -> None:
        if k == len(dims):
            body(list(idx))
            return
        d = dims[k]
        n = shape[d]
        if n == 1:
            idx[d] = "0"
            rec(k + 1)
            return
        pre = fn.current
        head, latch, exit_ = fn.label("L"), fn.label("Llatch"), fn.label("Lexit")
        fn.br(head)
        fn.start_block(head)
        i = fn.tmp("i")
        head_lines = fn.blocks[-1][1]
        phi_at = len(head_lines)
        fn.emit("")  # placeholder for the phi, filled below once the latch's name is known
        idx[d] = i
        rec(k + 1)
        fn.br(latch)
        fn.start_block(latch)
        nxt = fn.inst(f"add nuw nsw i64 {i}, 1")
        c = fn.inst(f"icmp ult i64 {nxt}, {n}")
        innermost = all(shape[dd] == 1 for dd in dims[k + 1:])
        md = fn.loop_metadata("llvm.loop.unroll.disable") if keep_inner and innermost else ""
        fn.cond_br(c, head, exit_, md)
        # (held by reference: finding the block by name made kernels of many loops quadratic to lower)
        head_lines[phi_at] = f"{i} = phi i64 [0, %{pre}], [{nxt}, %{latch}]"
        fn.start_block(exit_)

    rec(0)
