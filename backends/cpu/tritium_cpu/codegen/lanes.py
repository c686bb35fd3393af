"""The lanes of one vector of a reduction, evaluated together so that each masked load is one vector load.

An explicit vector reduction (:mod:`.vreduce`) computes a tile's elements lane by lane and gathers them with
``insertelement``; the SLP vectorizer turns the lane copies back into vector operations. That works while every
lane's load is unconditional. A masked load evaluated alone is a branch around a scalar load (``Load.eval``), and
a vector of such lanes is a chain of branches no vectorizer undoes: a 4-block, 8192-wide masked kernel became
~23,000 lines of LLVM IR and a scalar loop. :class:`LaneGroup` evaluates the lanes of one vector instead: the
first time a lane reaches a masked load, the pointer, mask and ``other`` of every lane of the vector are
computed and loaded with one ``llvm.masked.load`` (consecutive elements) or ``llvm.masked.gather`` (any other
addresses); each lane then reads its element out of that vector. A masked-off lane is never read, as before.

Lanes are told apart by the path of nodes from the reduced tile down to the load: the same index remappings
(broadcasts, permutations, concatenations) applied to each lane's index give that lane's index at the load,
memoized so that a lane evaluated later meets the same SSA names. A load this cannot follow (a node kind it
does not know on the path, a load under another load, a volatile or bounds-checked load, an element type
without a vector form) stays the per-lane branch.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from .irtext import SIZES, Function, const
from .tiles import Elem, Evaluator, Load, Node, Range, Remap, Select2, Splat

# element types a vector load can carry, as the type it loads (halves travel as i16 and are bitcast)
_MEMORY = {"float": "float", "double": "double", "i8": "i8", "i16": "i16", "i32": "i32", "i64": "i64",
           "half": "i16", "bfloat": "i16"}
_SFX = {"float": "f32", "double": "f64", "i8": "i8", "i16": "i16", "i32": "i32", "i64": "i64"}


class LaneGroup(Evaluator):
    """An :class:`Evaluator` for the ``len(lanes)`` elements at ``lanes`` (index lists of the root node, one per
    lane, consecutive along ``axis``)."""

    def __init__(self, fn: Function, masks_true: Any, lanes: list[list[str]], axis: int) -> None:
        super().__init__(fn, masks_true)
        self.lanes, self.axis = lanes, axis
        self.path: list[tuple[Node, list[str]]] = []   # the nodes being evaluated, root first
        self.indices: dict[tuple, list[str]] = {}
        self.loaded: dict[tuple, str] = {}
        self.vector_loads = 0

    def value(self, node: Node, idx: list[str], address: bool = False) -> str:
        self.path.append((node, idx))
        try:
            return super().value(node, idx, address)
        finally:
            self.path.pop()

    def index(self, owner: Any, part: str, f: Callable, idx: list[str]) -> list[str]:
        key = (id(owner), part, tuple(idx))
        got = self.indices.get(key)
        if got is None:
            got = self.indices[key] = f(self, idx)
        return got

    def masked_load(self, load: Load, idx: list[str]) -> Optional[str]:
        key = (id(load), tuple(idx))
        if key not in self.loaded and not self._load_lanes(load):
            return None
        return self.loaded.get(key)

    # -- the vector load ---------------------------------------------------------------------------------
    def _lane_indices(self) -> Optional[tuple[list[list[str]], Optional[int]]]:
        """Each lane's index at the node on top of ``path`` and the axis its lanes run along there (None: not
        known to be one axis)."""
        root, root_idx = self.path[0]
        if root_idx not in self.lanes:
            return None
        cur = [list(i) for i in self.lanes]
        axis: Optional[int] = self.axis
        for (parent, _), (child, _) in zip(self.path, self.path[1:]):
            if isinstance(parent, Elem) and any(a is child for a in parent.args):
                continue
            if isinstance(parent, Load) and any(c is child for c in parent.children()):
                continue
            if isinstance(parent, Remap) and parent.src is child:
                cur = [self.index(parent, "remap", parent.remap, i) for i in cur]
                axes = parent.axes
                axis = None if axes is None or axis is None or axis not in axes else axes.index(axis)
                continue
            if isinstance(parent, Select2) and (parent.a is child) != (parent.b is child):
                part, f = ("a", parent.a_idx) if parent.a is child else ("b", parent.b_idx)
                cur = [self.index(parent, part, f, i) for i in cur]
                axis = None
                continue
            return None
        if cur[self.lanes.index(root_idx)] != self.path[-1][1]:
            return None
        return cur, axis

    def _load_lanes(self, load: Load) -> bool:
        fn = self.fn
        if (load.volatile or load.ty not in _MEMORY or load.mask is None
                or (getattr(fn, "bounds", None) is not None and load.site is not None)
                or any(c.has_load() for c in load.children())):
            return False
        found = self._lane_indices()
        if found is None:
            return False
        lane_idx, axis = found
        n = len(lane_idx)
        align = SIZES[load.ty]
        contiguous = axis is not None and inner_step(load.ptr, axis) == align
        # consecutive elements: the first lane's address is the vector's (a masked-off lane's is never read)
        ptrs = [self.value(load.ptr, i, address=True) for i in (lane_idx[:1] if contiguous else lane_idx)]
        masks = [self.value(load.mask, i) for i in lane_idx]
        others = [self.value(load.other, i) if load.other is not None else const(load.ty, 0) for i in lane_idx]
        mt = _MEMORY[load.ty]
        vt, mvt = f"<{n} x {load.ty}>", f"<{n} x {mt}>"
        mvec = _vector(fn, "i1", masks)
        ovec = _vector(fn, load.ty, others)
        if mt != load.ty:
            ovec = fn.inst(f"bitcast {vt} {ovec} to {mvt}")
        sfx = _SFX[mt]
        if contiguous:
            got = fn.inst(f"call {mvt} @llvm.masked.load.v{n}{sfx}.p0(ptr {ptrs[0]}, i32 {align}, <{n} x i1> {mvec}, "
                          f"{mvt} {ovec})")
        else:
            pvec = _vector(fn, "ptr", ptrs)
            got = fn.inst(f"call {mvt} @llvm.masked.gather.v{n}{sfx}.v{n}p0(<{n} x ptr> {pvec}, i32 {align}, "
                          f"<{n} x i1> {mvec}, {mvt} {ovec})")
        if mt != load.ty:
            got = fn.inst(f"bitcast {mvt} {got} to {vt}")
        for lane, i in enumerate(lane_idx):
            self.loaded[(id(load), tuple(i))] = fn.inst(f"extractelement {vt} {got}, i64 {lane}")
        self.vector_loads += 1
        return True


def _vector(fn: Function, ty: str, vals: list[str]) -> str:
    """The vector of ``vals``: a constant when they all are one literal, a splat when they are one value."""
    n = len(vals)
    vt = f"<{n} x {ty}>"
    if all(v == vals[0] for v in vals):
        if not vals[0].startswith("%"):
            return f"<{', '.join([f'{ty} {vals[0]}'] * n)}>"
        one = fn.inst(f"insertelement <1 x {ty}> poison, {ty} {vals[0]}, i64 0")
        return fn.inst(f"shufflevector <1 x {ty}> {one}, <1 x {ty}> poison, <{n} x i32> zeroinitializer")
    v = "poison"
    for lane, x in enumerate(vals):
        v = fn.inst(f"insertelement {vt} {v}, {ty} {x}, i64 {lane}")
    return v


def inner_step(node: Node, axis: Optional[int]) -> Optional[int]:
    """How much ``node`` changes when index ``axis`` of its own shape grows by one (bytes for pointers,
    units for integers); 0 when it does not depend on it; None when not provably constant."""
    if axis is None or isinstance(node, Splat):
        return 0
    if isinstance(node, Range):
        return 1
    if isinstance(node, Remap):
        axes = getattr(node, "axes", None)
        if axes is None:
            return None
        src_axis = axes.index(axis) if axis in axes else None
        return inner_step(node.src, src_axis)
    if not isinstance(node, Elem):
        return None
    steps = [inner_step(a, axis) for a in node.args]
    if None in steps:
        return None
    name = node.name
    if not any(steps):
        return 0
    if name in ("arith.addi", "arith.subi") and len(steps) == 2:
        return steps[0] + steps[1] if name == "arith.addi" else steps[0] - steps[1]
    if name in ("arith.extsi", "arith.extui", "arith.trunci", "arith.index_cast"):
        return steps[0]
    if name == "arith.muli":
        for k in (0, 1):
            other = node.args[1 - k]
            if steps[1 - k] == 0 and isinstance(other, Splat) and _int_literal(other.value) is not None:
                return steps[k] * _int_literal(other.value)
        return None
    if name == "tt.addptr" and "pointee_bytes" in node.attrs:
        return steps[0] + steps[1] * node.attrs["pointee_bytes"]
    return None


def _int_literal(v: str) -> Optional[int]:
    try:
        return int(v)
    except ValueError:
        return None
