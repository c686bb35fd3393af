"""Which scalar integers of the tile IR are at least 0 in every program: the proof that lets a descriptor store's
bulk copy go without a run-time start check (descriptor_store.py: a bulk tensor store at a negative coordinate
is an illegal instruction on sm_90).

A sign-only analysis, walked from the value back to its definitions (coordinates are a few ops deep):
- facts: non-negative constants, program ids and counts, zero-extensions, and ``tl.assume`` conditions that
  bound a value from below by 0 (``x >= 0``, ``x > -1``, ``0 <= x``, ``x < c`` unsigned with c >= 0; joined by
  ``&``) when the assume runs in the block that defines the value, so it holds for every instance of it;
- a ``for`` loop's counter counting up (non-negative step) from a non-negative start; a loop-carried value
  whose initial and yielded values are non-negative (by induction: the value itself assumed so while its
  yielded value is checked), and the loop's result for it; an ``if``'s result non-negative in both branches;
- arithmetic that keeps signs: +, *, <<, / and % of non-negative operands, min of non-negative ones, max or
  ``&`` with one, a signed remainder or right shift of a non-negative dividend, ``|`` / ``^`` of non-negative
  ones, a select of two.
Wrapping on overflow is not considered (nor is it by Triton's own index arithmetic). ``tl.multiple_of`` says
nothing about a sign and kernel arguments carry no sign fact (Triton specializes integers by divisibility and
equality to 1 only), so an argument is unproved unless the kernel assumes it.
"""
from __future__ import annotations

from typing import Any, Optional

from ..._mlir import ir
from .values import owner_op

#: at least 0 when all operands are
_ALL = frozenset(("arith.addi", "arith.muli", "arith.divsi", "arith.divui", "arith.floordivsi", "arith.ceildivsi",
                  "arith.ceildivui", "arith.minsi", "arith.minui", "arith.extsi", "arith.index_cast", "arith.shli",
                  "arith.ori", "arith.xori"))
#: ... when any operand is
_ANY = frozenset(("arith.maxsi", "arith.andi", "arith.remui"))
#: ... when the first operand is (a remainder takes the dividend's sign; a right shift keeps it)
_FIRST = frozenset(("arith.remsi", "arith.shrsi", "arith.shrui"))
#: always
_ALWAYS = frozenset(("tt.get_program_id", "tt.get_num_programs", "arith.extui"))

# arith.cmpi predicates
_SLT, _SLE, _SGT, _SGE, _ULT, _ULE = 2, 3, 4, 5, 6, 7
_MAX_DEPTH = 32


def _constant(v: Any) -> Optional[int]:
    o = owner_op(v)
    if o is None or o.name != "arith.constant":
        return None
    try:
        return ir.IntegerAttr(o.attributes["value"]).value
    except (ValueError, TypeError):
        return None


def _bounded_below(cond: Any, out: list) -> None:
    """Append to ``out`` the values that ``cond`` (an i1 assumed true) proves at least 0."""
    o = owner_op(cond)
    if o is None:
        return
    if o.name == "arith.andi":
        for x in o.operands:
            _bounded_below(x, out)
        return
    if o.name != "arith.cmpi":
        return
    pred = ir.IntegerAttr(o.attributes["predicate"]).value
    lhs, rhs = o.operands[0], o.operands[1]
    lc, rc = _constant(lhs), _constant(rhs)
    if rc is not None and (pred == _SGE and rc >= 0 or pred == _SGT and rc >= -1
                           or pred in (_ULT, _ULE) and rc >= 0):
        out.append(lhs)
    elif lc is not None and (pred == _SLE and lc >= 0 or pred == _SLT and lc >= -1):
        out.append(rhs)


def _assumed(v: Any) -> bool:
    """A ``tl.assume`` in the block defining ``v`` bounds it below by 0."""
    o = owner_op(v)
    block = v.owner if isinstance(v, ir.BlockArgument) else (o.operation.block if o is not None else None)
    if block is None:
        return False
    for op in block.operations:
        if op.operation.name == "tt.assume":
            found: list = []
            _bounded_below(op.operation.operands[0], found)
            if any(f == v for f in found):
                return True
    return False


def _yielded(region: Any, i: int) -> Any:
    return region.blocks[0].operations[len(region.blocks[0].operations) - 1].operands[i]


def provably_nonnegative(v: Any, depth: int = 0, assuming: tuple = (), memo: Optional[dict] = None) -> bool:
    """``v`` (a scalar integer) is at least 0 in every program (module doc). ``assuming``: loop-carried values
    taken as non-negative while their own yielded values are checked. ``memo``: the answers of this query so
    far: index arithmetic is a DAG (``s = (s + s) ^ (s * 3)`` twelve times took 185 s to compile without it)."""
    if memo is None:
        memo = {}
    key = (v, assuming)
    found = memo.get(key)
    if found is None:
        # a False from the depth limit is only more careful than the truth, so it may be reused at any depth
        found = memo[key] = _nonnegative(v, depth, assuming, memo)
    return found


def _nonnegative(v: Any, depth: int, assuming: tuple, memo: dict) -> bool:
    if depth > _MAX_DEPTH or "tensor<" in str(v.type):
        return False
    if any(a == v for a in assuming):
        return True
    if _assumed(v):
        return True
    d = depth + 1
    if isinstance(v, ir.BlockArgument):
        loop = v.owner.owner
        if loop is None or loop.operation.name != "scf.for":
            return False
        loop = loop.operation
        lower, _, step = loop.operands[:3]
        if v.arg_number == 0:
            return provably_nonnegative(lower, d, assuming, memo) and provably_nonnegative(step, d, assuming, memo)
        k = v.arg_number - 1
        return (provably_nonnegative(loop.operands[3 + k], d, assuming, memo)
                and provably_nonnegative(_yielded(loop.regions[0], k), d, assuming + (v, ), memo))
    o = owner_op(v)
    if o is None:
        return False
    name = o.name
    if name == "arith.constant":
        c = _constant(v)
        return c is not None and c >= 0
    if name in _ALWAYS:
        return True
    if name in _FIRST:
        return provably_nonnegative(o.operands[0], d, assuming, memo)
    if name in _ALL:
        return all(provably_nonnegative(x, d, assuming, memo) for x in o.operands)
    if name in _ANY:
        return any(provably_nonnegative(x, d, assuming, memo) for x in o.operands)
    if name == "arith.select":
        return all(provably_nonnegative(x, d, assuming, memo) for x in o.operands[1:])
    if name == "scf.for":
        # the last value of the loop-carried argument (or its initial one when the loop does not run)
        i = next(j for j, r in enumerate(o.results) if r == v)
        return provably_nonnegative(o.regions[0].blocks[0].arguments[1 + i], d, assuming, memo)
    if name == "scf.if" and len(o.regions) == 2 and o.regions[1].blocks:
        i = next(j for j, r in enumerate(o.results) if r == v)
        return all(provably_nonnegative(_yielded(r, i), d, assuming, memo) for r in o.regions)
    return False
