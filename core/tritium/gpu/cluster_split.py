"""The cluster split (``num_ctas > 1``, the ``ttgir`` stage, before layouts): a dot's N dimension, and every
tensor dimension tied to it, is shared out across the program's cluster, as Triton's CGA layouts split a
wgmma accumulator's N. Each CTA computes ``N / num_ctas`` of the accumulator's columns, loads only its part of B
and stores only its part of C (through pointers or tensor descriptors, whose block shrinks along N); A (and
whatever has no N dimension) is loaded by every CTA.

How: the dimensions of all tensors are grouped into classes that must be split together (an elementwise op ties
its operands' and result's dimensions, ``expand_dims``/``trans``/``broadcast`` map them, a dot ties A's K to
B's K and B's N to the result's N, a loop ties its carried values to its yields). The class of the first dot's N
is split when nothing stands in the way; then every tensor in it gets ``N / num_ctas`` along that dimension and
each ``make_range`` that starts one is offset by this CTA's share (``tt.get_cluster_cta_rank``). The kernel is
marked (``SPLIT_ATTR``) so the lowering runs every CTA instead of only the cluster's first
(:mod:`.lower.clusters`).

Nothing here crosses CTAs: the split is refused, and the kernel keeps the one-CTA form (the reason is left in the
ttgir, ``ONE_CTA_ATTR``), where a value of the class would have to be whole somewhere (a reduction or scan along
it, a tile with N along two dimensions, an op not known to keep elements apart: a reshape, a gather, a block
pointer, a print or assert), where a side effect would be repeated by every CTA (a store or atomic whose pointers
do not run along the class, a scalar one), where CTAs would have to see each other's writes (a load after a
store through the same argument, an in-place update at other addresses), where the class reaches a dot's M or
K, or where the split part would be narrower than ``MIN_PART`` elements or unequal.
"""
from __future__ import annotations

from typing import Any, Optional

from .._mlir import ir
from ..dialect import PURE_OPS
from ..dialect.block_types import block_of, descriptor_type, is_descriptor
from ..dialect.pointers import UNKNOWN, pointer_root
from ..llvmir.scalar import is_scalar_op

#: the kernel function's attribute: how many CTAs its N dimension is split over
SPLIT_ATTR = "tritium.cluster_split"
#: where the split was refused: why (the ``ttgir`` shows it)
ONE_CTA_ATTR = "tritium.cluster_one_cta"
#: the fewest elements per CTA along the split dimension (a wgmma/mma N of at least 16 columns)
MIN_PART = 16

_ALONG = {"tt.addptr", "tt.load", "tt.store", "tt.atomic_rmw", "tt.atomic_cas", "arith.select", "tt.assume"}
_SIDE_EFFECTS = {"tt.store", "tt.atomic_rmw", "tt.atomic_cas", "tt.descriptor_store"}
_SOURCES = {"tt.splat", "tt.make_range", "arith.constant", "tt.debug_barrier", "scf.if", "tt.get_program_id",
            "tt.get_num_programs", "tt.make_tensor_descriptor"}
_IMPURE_OK = {"tt.load", "tt.debug_barrier", "tt.descriptor_load"} | _SIDE_EFFECTS
#: descriptor accesses: the operand index of the first block coordinate, and of the tile (None: the result)
_DESC_COORDS = {"tt.descriptor_load": (1, None), "tt.descriptor_store": (2, 1)}


def _shape(v: Any) -> Optional[list[int]]:
    """A tensor's shape, or a tensor descriptor's block shape."""
    t = v.type
    if isinstance(t, ir.RankedTensorType):
        return list(ir.RankedTensorType(t).shape)
    block = block_of(t) if is_descriptor(t) else None
    return list(block[0]) if block else None


def _with_shape(t: Any, shape: list[int]) -> Any:
    if isinstance(t, ir.RankedTensorType):
        t = ir.RankedTensorType(t)
        return ir.RankedTensorType.get(shape, t.element_type, t.encoding)
    return ir.Type.parse(descriptor_type(shape, block_of(t)[1]))


class _Dims:
    """Union-find over (value, dimension) for dimensions longer than 1 (a length-1 dimension is never split)."""

    def __init__(self) -> None:
        self.parent: dict = {}

    def find(self, k: Any) -> Any:
        p = self.parent.setdefault(k, k)
        if p != k:
            p = self.parent[k] = self.find(p)
        return p

    def tie(self, a: Any, da: int, b: Any, db: int) -> None:
        sa, sb = _shape(a), _shape(b)
        if sa is None or sb is None or sa[da] != sb[db] or sa[da] == 1:
            return
        ra, rb = self.find((a, da)), self.find((b, db))
        if ra != rb:
            self.parent[ra] = rb

    def tie_all(self, values: list) -> None:
        tensors = [v for v in values if _shape(v) is not None]
        for a, b in zip(tensors, tensors[1:]):
            if len(_shape(a)) == len(_shape(b)):
                for d in range(len(_shape(a))):
                    self.tie(a, d, b, d)


def _ops(func: Any) -> list:
    out: list = []

    def visit(op: Any) -> Any:
        out.append(op)
        return ir.WalkResult.ADVANCE

    func.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return out[1:]


def _int(op: Any, name: str) -> int:
    return ir.IntegerAttr(op.attributes[name]).value


def _classes(func: Any) -> tuple[_Dims, list, list, list]:
    """Tie every dimension to its class; return the classes, the dots, the (value, axis) pairs that reductions and
    scans run along, and the ops whose tensors must stay out of the split class."""
    dims, dots, along, other = _Dims(), [], [], []
    for op in _ops(func):
        name = op.name
        operands, results = list(op.operands), list(op.results)
        if name in ("tt.load", "tt.store") and _shape(operands[0]) is None and \
                any(_shape(v) is not None for v in operands[1:] + results):
            other.append(op)     # through a block pointer, whose block keeps its shape
        elif is_scalar_op(name) or name in _ALONG:
            dims.tie_all(operands + results)
        elif name in _SOURCES or name in ("func.return", ) and not operands:
            continue
        elif name == "tt.broadcast":
            for d in range(len(_shape(results[0]))):
                dims.tie(operands[0], d, results[0], d)
        elif name == "tt.expand_dims":
            axis = _int(op, "axis")
            for d in range(len(_shape(operands[0]) or ())):
                dims.tie(operands[0], d, results[0], d if d < axis else d + 1)
        elif name == "tt.trans":
            order = list(ir.DenseI32ArrayAttr(op.attributes["order"]))
            for d, src in enumerate(order):
                dims.tie(operands[0], src, results[0], d)
        elif name in _DESC_COORDS and _desc_rank_matches(op):
            tile = results[0] if _DESC_COORDS[name][1] is None else operands[_DESC_COORDS[name][1]]
            for d in range(len(_shape(tile))):
                dims.tie(operands[0], d, tile, d)
        elif name == "tt.dot" and len(_shape(results[0]) or ()) == 2:     # (a batched dot stays whole)
            a, b, c = operands[:3]
            r = results[0]
            dims.tie(a, 0, r, 0)
            dims.tie(c, 0, r, 0)
            dims.tie(b, 1, r, 1)
            dims.tie(c, 1, r, 1)
            dims.tie(a, 1, b, 0)
            dots.append(op)
        elif name in ("tt.reduce", "tt.scan"):
            axis = _int(op, "axis")
            dims.tie_all(operands)      # reduced together (argmax's values and indices): split together
            for v, r in zip(operands, results):
                along.append((v, axis))
                for d in range(len(_shape(v) or ())):
                    if name == "tt.scan":
                        dims.tie(v, d, r, d)
                    elif d != axis:
                        dims.tie(v, d, r, d if d < axis else d - 1)
        elif name == "scf.for":
            body = op.regions[0].blocks[0]
            for init, arg, res in zip(operands[3:], list(body.arguments)[1:], results):
                dims.tie_all([init, arg, res])
        elif name == "scf.yield" and op.parent is not None and op.parent.name in ("scf.for", "scf.if"):
            for v, r in zip(operands, op.parent.results):
                dims.tie_all([v, r])
        else:
            other.append(op)
    return dims, dots, along, other


def _untie_sources(func: Any) -> None:
    """Give each user of a ``make_range``, tensor ``splat`` or tensor constant its own copy: CSE merged
    ``tl.arange(0, BM)`` and ``tl.arange(0, BN)`` (or two zero tiles) when BM == BN, which would tie a dot's M to its
    N."""
    for op in _ops(func):
        if op.name not in ("tt.make_range", "tt.splat", "arith.constant") or _shape(op.results[0]) is None:
            continue
        users = []
        for use in op.results[0].uses:
            if use.owner not in users:
                users.append(use.owner)
        for user in users[1:]:
            twin = op.clone(ip=ir.InsertionPoint(op))
            user.operation.replace_uses_of_with(op.results[0], twin.results[0])


def _desc_rank_matches(op: Any) -> bool:
    name = op.name
    tile = op.results[0] if _DESC_COORDS[name][1] is None else op.operands[_DESC_COORDS[name][1]]
    block, shape = _shape(op.operands[0]), _shape(tile)
    return block is not None and block == shape


def _plan(func: Any, n: int) -> Any:
    """The split class and its length, or the reason the kernel keeps the one-CTA form (a string)."""
    _untie_sources(func)
    dims, dots, along, other = _classes(func)
    if not dots:
        return "no dot"
    split = dims.find((dots[0].results[0], 1))
    for dot in dots:
        a, b = list(dot.operands)[:2]
        if split in (dims.find((a, 0)), dims.find((a, 1)), dims.find((b, 0))):
            return "the dot's N is tied to a dot's M or K"
    along_n: dict = {}
    for (v, d) in list(dims.parent):
        if dims.find((v, d)) == split:
            along_n.setdefault(v, []).append(d)
    if any(len(ds) > 1 for ds in along_n.values()):
        return "a tile with N along two of its dimensions"     # a CTA would hold only its diagonal block
    lengths = {_shape(v)[d] for (v, d) in list(dims.parent) if dims.find((v, d)) == split}
    if len(lengths) != 1:
        return "tensors of unequal lengths along N"
    length = lengths.pop()
    if length % n or length // n < MIN_PART:
        return f"N={length} gives each CTA fewer than {MIN_PART} columns"

    def in_split(v: Any) -> bool:
        s = _shape(v)
        return s is not None and any(dims.find((v, d)) == split for d in range(len(s)) if s[d] > 1)

    if any(dims.find((v, axis)) == split for v, axis in along):
        return "a reduction or scan along N"
    for op in other:
        if any(in_split(v) for v in list(op.operands) + list(op.results)):
            return f"{op.name} on a tensor along N"
        if op.name.startswith("tt.") and op.name not in _IMPURE_OK and op.name not in PURE_OPS:
            return f"{op.name} would run in every CTA"
    if _reads_after_writes(func):
        return "a load of memory the kernel may have written"
    if _writes_what_others_read(func):
        return "a store to memory the kernel reads elsewhere"
    for op in _ops(func):
        if op.name in _SIDE_EFFECTS and not in_split(op.operands[0]):
            return f"{op.name} not along N would run in every CTA"
        if op.name == "arith.constant" and in_split(op.results[0]):
            if not ir.DenseElementsAttr(op.attributes["value"]).is_splat:
                return "a constant tensor along N"
    return dims, split, length


def _reads(op: Any) -> bool:
    if op.name in ("tt.load", "tt.descriptor_load"):
        return True
    return op.name in ("tt.atomic_rmw", "tt.atomic_cas") and any(True for _ in op.results[0].uses)


def _loops(op: Any) -> list:
    out, p = [], op.parent
    while p is not None and p.name != "func.func":
        if p.name in ("scf.for", "scf.while"):
            out.append(p)
        p = p.parent
    return out


def _overlap(a: Any, b: Any) -> bool:
    """May the pointers (or descriptors) of ``a`` and ``b`` reach the same memory: the same kernel argument, or
    either of unknown origin?"""
    ra, rb = pointer_root(a.operands[0]), pointer_root(b.operands[0])
    return ra is UNKNOWN or rb is UNKNOWN or ra == rb


def _reads_after_writes(func: Any) -> bool:
    """Does the kernel read global memory it may have written (a load, or an atomic whose old value is used, after a
    store or atomic through the same argument, or in a loop around both)? Within one CTA the lowering orders those
    (hazards.py); across the CTAs of a split nothing would."""
    ops = _ops(func)
    order = {id(op): i for i, op in enumerate(ops)}
    writes = [op for op in ops if op.name in _SIDE_EFFECTS]
    for i, r in enumerate(ops):
        if not _reads(r):
            continue
        loops = _loops(r)
        for w in writes:
            if w == r or not _overlap(w, r):
                continue
            if order[id(w)] < i or any(loop in loops for loop in _loops(w)):
                return True
    return False


def _writes_what_others_read(func: Any) -> bool:
    """Does a store or atomic write through the kernel argument a load (or a used atomic) reads, other than at the
    very pointers it writes? A shifted or transposed in-place update would then race between CTAs, which own
    different columns (within a CTA the lowering puts a barrier before such a store, hazards.py)."""
    ops = _ops(func)
    writes = [op for op in ops if op.name in _SIDE_EFFECTS]
    reads = [op for op in ops if _reads(op)]
    for w in writes:
        root = pointer_root(w.operands[0])
        for r in reads:
            if r == w or (r.operands[0] == w.operands[0] and r.name == "tt.load" and w.name == "tt.store"):
                continue
            other = pointer_root(r.operands[0])
            if root is UNKNOWN or other is UNKNOWN or root == other:
                return True
    return False


def split_cluster(module: Any, options: Any) -> int:
    """Split each kernel of ``module`` across its cluster where it can (see the module's note); return the number
    of CTAs the kernels' N dimensions were split over (1: none was)."""
    n = int(getattr(options, "num_ctas", 1) or 1)
    if n == 1:
        return 1
    done = 1
    with module.context, ir.Location.unknown():
        for func in list(module.body.operations):
            if func.operation.name != "func.func":
                continue
            plan = _plan(func, n)
            if isinstance(plan, str):
                func.attributes[ONE_CTA_ATTR] = ir.StringAttr.get(plan)
            else:
                _rewrite(func, *plan, n)
                done = n
    return done


def _rewrite(func: Any, dims: _Dims, split: Any, length: int, n: int) -> None:
    part = length // n
    i32 = ir.IntegerType.get_signless(32)
    members: dict = {}
    for (v, d) in list(dims.parent):
        if dims.find((v, d)) == split:
            members.setdefault(v, set()).add(d)
    entry = func.regions[0].blocks[0]
    first = entry.operations[0]
    ip = ir.InsertionPoint(first)
    rank = ir.Operation.create("tt.get_cluster_cta_rank", results=[i32], ip=ip).results[0]
    width = ir.Operation.create("arith.constant", results=[i32], attributes={"value": ir.IntegerAttr.get(i32, part)},
                                ip=ip).results[0]
    offset = ir.Operation.create("arith.muli", results=[i32], operands=[rank, width], ip=ip).results[0]
    for v, ds in members.items():
        shape = [part if d in ds else s for d, s in enumerate(_shape(v))]
        new_t = _with_shape(v.type, shape)
        v.set_type(new_t)
        owner = v.owner
        if isinstance(owner, ir.Block):
            continue
        op = owner
        if op.name == "arith.constant":
            old = ir.DenseElementsAttr(op.attributes["value"])
            op.attributes["value"] = ir.DenseElementsAttr.get_splat(new_t, old.get_splat_value())
        elif op.name == "tt.make_range":
            start = _int(op, "start")
            op.attributes["end"] = ir.IntegerAttr.get(i32, start + part)
            ip2 = ir.InsertionPoint.after(op)
            spl = ir.Operation.create("tt.splat", results=[new_t], operands=[offset], ip=ip2)
            add = ir.Operation.create("arith.addi", results=[new_t], operands=[v, spl.results[0]], ip=ip2)
            v.replace_all_uses_except(add.results[0], add)
    for op in _ops(func):
        if op.name in _DESC_COORDS and op.operands[0] in members:
            first = _DESC_COORDS[op.name][0]
            for d in members[op.operands[0]]:
                # this CTA's block starts rank * part further along the split dimension
                coord = op.operands[first + d]
                moved = ir.Operation.create("arith.addi", results=[coord.type], operands=[coord, offset],
                                            ip=ir.InsertionPoint(op))
                op.operands[first + d] = moved.results[0]
    func.attributes[SPLIT_ATTR] = ir.IntegerAttr.get(i32, n)
