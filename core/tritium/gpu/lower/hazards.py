"""Stores whose value was read, by other threads, from the memory they overwrite.

Tile semantics read a whole tile before a store writes any of it: ``tl.store(p + offs + 1, tl.load(p + offs))``
shifts, ``tl.store(bp, tl.trans(tl.load(bp)))`` transposes in place. Distributed over threads, the element a thread
stores may have been loaded by another thread, and nothing orders that load before this store: lanes of one warp
execute together on a GPU, but warps do not (a tile spread over several warps, or a transpose that moves elements
between warps, races on real GPUs), and host threads (the emulator) do not even within a warp. Such a store is
preceded by a CTA barrier, after which every thread's earlier loads have been performed.

The check follows the data: the loads the stored value is computed from. A load through another kernel argument is
taken not to overlap (as Triton's kernels assume); a load of exactly the addresses the store writes, in the same
layout, through elementwise ops only, has each element loaded and stored by the same thread, and needs no barrier
(in-place updates stay free). Anything else through the same argument, or a pointer of unknown origin, gets one.
A load the value does not depend on is not considered: ordering it is not a tile-semantics guarantee on GPUs.
"""
from __future__ import annotations

from typing import Any

from ..._mlir import ir
from ...dialect.pointers import DERIVED_OPS, UNKNOWN, pointer_root
from .context import Context
from .operands import split_operands
from .scalar import is_scalar_op
from .values import Tensor

#: ops that read memory, and the operand (by position) holding the pointer, block pointer or descriptor
_READS = {"tt.load": 0, "tt.descriptor_load": 0, "tt.atomic_rmw": 0, "tt.atomic_cas": 0, "tt.descriptor_gather": 0}
#: ops that write memory: (pointer operand names, the value operand's name)
STORES = {"tt.store": (["ptr", "value", "mask"], "value"),
          "tt.descriptor_store": (["desc", "src", "indices"], "src"),
          "tt.descriptor_reduce": (["desc", "src", "indices"], "src")}


def barrier_before_store(ctx: Context, op: Any) -> None:
    """Emit a CTA barrier before the store ``op`` when its value was loaded from what it overwrites."""
    names, value_name = STORES[op.name]
    parts = split_operands(op, names)
    target = parts[names[0]][0]
    value = parts[value_name][0]
    root = pointer_root(target)
    for load, direct in _reads(value):
        lroot = pointer_root(load.operands[_READS[load.name]])
        if lroot is not UNKNOWN and root is not UNKNOWN and lroot != root:
            continue
        if direct and _same_access(load, op, parts, names) and _same_threads(ctx, load, value, target):
            continue
        ctx.target.barrier(ctx.fn)
        return


def _reads(value: Any) -> list[tuple[Any, bool]]:
    """The memory reads ``value`` is computed from, each with whether only elementwise ops lie between (element
    ``i`` of the value comes from element ``i`` of the load)."""
    out: list[tuple[Any, bool]] = []
    seen: set = set()
    todo: list[tuple[Any, bool]] = [(value, True)]
    while todo:
        v, direct = todo.pop()
        if (v, direct) in seen:
            continue
        seen.add((v, direct))
        if isinstance(v, ir.BlockArgument):
            parent = v.owner.owner
            if parent is None or parent.operation.name == "func.func":
                continue                                            # a kernel argument
            # a loop-carried value: anything the loop reads may have made it
            _region_reads(parent, out)
            todo += [(x, False) for x in parent.operands]
            continue
        owner = v.owner
        name = owner.operation.name
        if name in _READS:
            out.append((owner, direct))
            todo += [(x, False) for x in owner.operands]        # pointers computed from loaded indices
            continue
        if len(owner.regions):
            _region_reads(owner, out)
        # elementwise ops keep element positions; a scalar operand (or anything else) is every element's
        keep = direct and is_scalar_op(name) and not len(owner.regions)
        todo += [(x, keep and _is_tensor(x)) for x in owner.operands]
    return out


def _region_reads(op: Any, out: list) -> None:
    def visit(o: Any) -> Any:
        if o.name in _READS:
            out.append((o, False))
        return ir.WalkResult.ADVANCE
    op.operation.walk(visit, ir.WalkOrder.PRE_ORDER)


def _is_tensor(v: Any) -> bool:
    return "tensor<" in str(v.type)


def _same_access(load: Any, store: Any, parts: dict, names: list[str]) -> bool:
    """Does the load read exactly the addresses the store writes, index for index?"""
    if load.name == "tt.load" and store.name == "tt.store":
        return _same_value(split_operands(load, ["ptr", "mask", "other"])["ptr"][0], parts["ptr"][0])
    if load.name == "tt.descriptor_load" and store.name in ("tt.descriptor_store", "tt.descriptor_reduce"):
        lp = split_operands(load, ["desc", "indices"])
        return (_same_value(lp["desc"][0], parts["desc"][0]) and len(lp["indices"]) == len(parts["indices"])
                and all(map(_same_value, lp["indices"], parts["indices"])))
    return False


def _same_value(a: Any, b: Any, depth: int = 0) -> bool:
    """Equal as SSA values, or computed by the same pure ops from equal operands."""
    if a == b:
        return True
    if depth > 16 or isinstance(a, ir.BlockArgument) or isinstance(b, ir.BlockArgument):
        return False
    oa, ob = a.owner, b.owner
    na = oa.operation.name
    if na != ob.operation.name or na in _READS or len(oa.regions) or len(ob.regions):
        return False
    if not (na in DERIVED_OPS or is_scalar_op(na) or na in ("tt.make_range", "arith.constant")):
        return False
    if list(oa.results).index(a) != list(ob.results).index(b) or _attrs(oa) != _attrs(ob):
        return False
    return len(oa.operands) == len(ob.operands) and all(_same_value(x, y, depth + 1)
                                                        for x, y in zip(oa.operands, ob.operands))


def _attrs(op: Any) -> list[tuple[str, str]]:
    return sorted((k, str(op.attributes[k])) for k in op.attributes)


def _same_threads(ctx: Context, load: Any, value: Any, target: Any) -> bool:
    """Is every element stored by a thread that loaded it itself: the loaded and the stored tile in one layout, and
    the pointer's layout (which a store may prefer) that one too?"""
    got, want = ctx.values.get(load.results[0]), ctx.values.get(value)
    if not isinstance(got, Tensor) or not isinstance(want, Tensor):
        return False
    ptr_lay = ctx.layouts.get(target)
    return got.layout == want.layout and (ptr_lay is None or ptr_lay == want.layout)
