"""The fast copy of a loop: taken when every load mask of the fused expression is true, every ``x % n`` in
it is ``x`` and (optionally) some ``tl.where`` conditions hold everywhere, which the index bounds usually decide
without looking at the elements (see :mod:`.bounds`). Masked vector memory operations are slow on x86 and
integer division is slower still; most tiles of most programs need neither."""
from __future__ import annotations

from typing import Callable

from .bounds import RemIdentity
from .bounds import all_true as from_bounds
from .irtext import Function
from .tiles import _REM, Elem, Evaluator, Load, Node, Remap, Select2, Splat, numel, strides


def _collect(node: Node, pick: Callable[[Node], list[Node]]) -> list[Node]:
    """``pick(n)`` (a list) for every node of an expression DAG, each shared node once, in visiting order."""
    out: list[Node] = []
    seen: set[int] = set()

    def visit(n: Node) -> None:
        if id(n) in seen:
            return
        seen.add(id(n))
        out.extend(pick(n))
        for c in n.children():
            visit(c)

    visit(node)
    return out


def load_masks(node: Node) -> list[Node]:
    """The masks of the loads a fused expression performs (not those behind a materialized buffer), and the
    conditions under which its remainders are the identity: the conditions of its fast path. Each in the
    expression's index space: one found under a Remap (broadcast, expand_dims, trans...) or under one side of a
    Select2 (cat, join) is wrapped in that index map, as the load's value is. Unwrapped, ``tl.load(p + rn,
    mask=m)[None, :]`` stored as an (M, N) tile was checked at the row index: with M < N the masked-off lanes past
    M went unchecked and the fast copy loaded them, giving the loaded value instead of ``other``; a mask buffer
    under a join was read at the joined index, one axis too many (IndexError)."""
    out: list[Node] = []
    seen: set[tuple] = set()
    Map = tuple[tuple[int, ...], Callable]          # (the shape indexed, its index map to the child)

    def visit(n: Node, maps: tuple[Map, ...]) -> None:
        key = (id(n), ) + tuple((shape, id(f)) for shape, f in maps)
        if key in seen:
            return
        seen.add(key)
        found: list[Node] = [n.mask] if isinstance(n, Load) and n.mask is not None else []
        if isinstance(n, Elem) and n.name in _REM:
            found.append(RemIdentity(n))
        for m in found:
            for shape, f in reversed(maps):        # the innermost map first
                m = Remap(m, shape, f)
            out.append(m)
        if isinstance(n, Remap):
            kids = [(n.src, maps + ((n.shape, n.remap), ))]
        elif isinstance(n, Select2):
            # both sides are evaluated at every index (clamped into range), so each side's masks must hold
            # over all of that side: its index map covers it
            kids = [(n.a, maps + ((n.shape, n.a_idx), )), (n.b, maps + ((n.shape, n.b_idx), ))]
        else:
            kids = [(c, maps) for c in n.children()]
        for c, m in kids:
            visit(c, m)

    visit(node, ())
    return out


def all_true(fn: Function, shape: tuple[int, ...], masks: list[Node]) -> str:
    """An i1 that is true when every element of every mask is true: from the masks' bounds where their
    structure allows (see :mod:`.bounds`), else one flat, vectorizable loop."""
    known = "true"
    rest = []
    for m in masks:
        b = from_bounds(fn, m)
        if b is None:
            rest.append(m)
        else:
            known = b if known == "true" else fn.inst(f"and i1 {known}, {b}")
    if not rest:
        return known
    masks = rest
    total = numel(shape)
    pre = fn.current
    head, exit_ = fn.label("all"), fn.label("allx")
    fn.br(head)
    fn.start_block(head)
    lin = fn.tmp("lin")
    acc = fn.tmp("allacc")
    at = len(fn.blocks[-1][1])
    fn.emit("")
    fn.emit("")
    idx = []
    st = strides(shape)
    for d, n in enumerate(shape):
        if n == 1:
            idx.append("0")
            continue
        q = lin if st[d] == 1 else fn.inst(f"udiv i64 {lin}, {st[d]}")
        idx.append(fn.inst(f"urem i64 {q}, {n}") if d > 0 else q)
    ev = Evaluator(fn)
    cur = acc
    for m in masks:
        v = ev.value(m, idx)
        cur = fn.inst(f"and i1 {cur}, {v}")
    nxt = fn.inst(f"add nuw nsw i64 {lin}, 1")
    c = fn.inst(f"icmp ult i64 {nxt}, {total}")
    body_end = fn.current
    fn.cond_br(c, head, exit_)
    for label, lines in fn.blocks:
        if label == head:
            lines[at] = f"{lin} = phi i64 [0, %{pre}], [{nxt}, %{body_end}]"
            lines[at + 1] = f"{acc} = phi i1 [true, %{pre}], [{cur}, %{body_end}]"
            break
    fn.start_block(exit_)
    return fn.inst(f"and i1 {cur}, {known}")


class FastFacts:
    """What the fast copy of a loop may assume (truthy): every load mask is true, every ``x % n`` is ``x``,
    and the conditions of the selects in ``selects`` (ids of their nodes) are true everywhere."""

    def __init__(self, selects: frozenset = frozenset()) -> None:
        self.selects = selects

    def __bool__(self) -> bool:
        return True


def select_conditions(node: Node) -> list[Node]:
    """The ``tl.where`` nodes of an expression whose conditions vary (candidates for the fast path)."""
    return _collect(node, lambda n: [n] if isinstance(n, Elem) and n.name == "arith.select"
                    and not isinstance(n.args[0], Splat) else [])


def with_mask_fast_path(fn: Function, shape: tuple[int, ...], masks: list[Node], emit_loop,
                        selects: list[Node] = ()) -> None:
    """Emit ``emit_loop(masks_true)`` twice: a copy without mask checks for the common case where every
    mask is true (masked vector memory ops are slow on x86), and the general copy. ``selects``: ``tl.where``
    nodes whose conditions the fast copy may take as true, where the index bounds decide them."""
    proven, conds = [], []
    for sel in selects:
        c = from_bounds(fn, sel.args[0])
        if c is not None:
            proven.append(id(sel))
            conds.append(c)
    if not masks and not proven:
        emit_loop(False)
        return
    ok = all_true(fn, shape, masks) if masks else "true"
    for c in conds:
        ok = c if ok == "true" else fn.inst(f"and i1 {ok}, {c}")
    fast, slow, done = fn.label("fast"), fn.label("masked"), fn.label("done")
    fn.cond_br(ok, fast, slow)
    fn.start_block(fast)
    emit_loop(FastFacts(frozenset(proven)))
    fn.br(done)
    fn.start_block(slow)
    emit_loop(False)
    fn.br(done)
    fn.start_block(done)
