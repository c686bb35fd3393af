"""Whether a mask is true everywhere, decided from the bounds of its operands instead of a loop.

Masks are nearly always comparisons of an affine index expression (``offs = pid * B + tl.arange(0, B)``)
with a scalar (``offs < n``), combined with ``&``. For those, the smallest and largest value of each side
follow from the expression's structure; comparing them decides the whole mask with a few scalar
instructions. Bounds are computed in i64 and required to fit the operand's type, so wrapping arithmetic
never makes the answer wrong. Anything else returns None and is checked element by element.
"""
from __future__ import annotations

from typing import Optional

from .irtext import Function
from .tiles import Elem, Evaluator, Node, Range, Remap, Splat

_ICMP = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
_BITS = {"i8": 8, "i16": 16, "i32": 32, "i64": 64}


class RemIdentity(Node):
    """A pseudo-mask, true where ``x % n == x``: index expressions wrapped with ``% N`` (``offs % M`` in
    Triton's matmul) cost a division per element, and are the identity whenever the offsets are in range, which
    the fast path of a loop checks once."""

    def __init__(self, rem: "Elem") -> None:
        self.rem, self.shape, self.ty = rem, rem.shape, "i1"

    def eval(self, ev: "Evaluator", idx: list[str]) -> str:
        x = ev.value(self.rem.args[0], idx)
        r = ev.value(self.rem, idx)
        return ev.fn.inst(f"icmp eq {self.rem.ty} {x}, {r}")

    def children(self) -> list[Node]:
        return [self.rem]


class _Bounds:
    def __init__(self, lo: str, hi: str, ok: str) -> None:
        self.lo, self.hi, self.ok = lo, hi, ok   # i64 values; ok: i1, the bounds are exact (no wrap)


def _wide(fn: Function, v: str, ty: str, signed: bool = True) -> str:
    if ty == "i64":
        return v
    return fn.inst(f"{'sext' if signed else 'zext'} {ty} {v} to i64")


def _and(fn: Function, a: str, b: str) -> str:
    if a == "true":
        return b
    if b == "true":
        return a
    return fn.inst(f"and i1 {a}, {b}")


def _fits(fn: Function, b: _Bounds, ty: str) -> str:
    bits = _BITS.get(ty, 64)
    if bits == 64:
        return b.ok
    lo_ok = fn.inst(f"icmp sge i64 {b.lo}, {-(1 << (bits - 1))}")
    hi_ok = fn.inst(f"icmp sle i64 {b.hi}, {(1 << (bits - 1)) - 1}")
    return _and(fn, b.ok, _and(fn, lo_ok, hi_ok))


def bounds(fn: Function, node: Node) -> Optional[_Bounds]:
    """Signed bounds of an integer tile, or None when the structure is not understood."""
    if isinstance(node, Range):
        return _Bounds(str(node.start), str(node.start + node.shape[0] - 1), "true")
    if isinstance(node, Splat):
        if node.ty not in _BITS:
            return None
        v = node.value
        if not v.startswith("%") and not v.lstrip("-").isdigit():
            return None
        w = _wide(fn, v, node.ty)
        return _Bounds(w, w, "true")
    if isinstance(node, Remap):
        return bounds(fn, node.src)       # every value of the result is a value of the source
    if not isinstance(node, Elem) or node.ty not in _BITS:
        return None
    name = node.name
    if name in ("arith.extsi", "arith.extui"):
        inner = bounds(fn, node.args[0])
        if inner is None or name == "arith.extui":
            # zero extension of a possibly negative value is not monotonic
            if inner is None:
                return None
            nonneg = fn.inst(f"icmp sge i64 {inner.lo}, 0")
            return _Bounds(inner.lo, inner.hi, _and(fn, inner.ok, nonneg))
        return inner
    if name not in ("arith.addi", "arith.subi", "arith.muli"):
        return None
    a, b = (bounds(fn, x) for x in node.args)
    if a is None or b is None:
        return None
    ok = _and(fn, a.ok, b.ok)
    if name == "arith.addi":
        r = _Bounds(fn.inst(f"add nsw i64 {a.lo}, {b.lo}"), fn.inst(f"add nsw i64 {a.hi}, {b.hi}"), ok)
    elif name == "arith.subi":
        r = _Bounds(fn.inst(f"sub nsw i64 {a.lo}, {b.hi}"), fn.inst(f"sub nsw i64 {a.hi}, {b.lo}"), ok)
    else:
        prods = [fn.inst(f"mul nsw i64 {x}, {y}") for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
        lo, hi = prods[0], prods[0]
        for p in prods[1:]:
            lo = fn.inst(f"call i64 @llvm.smin.i64(i64 {lo}, i64 {p})")
            hi = fn.inst(f"call i64 @llvm.smax.i64(i64 {hi}, i64 {p})")
        r = _Bounds(lo, hi, ok)
    r.ok = _fits(fn, r, node.ty)
    return r


def all_true(fn: Function, mask: Node) -> Optional[str]:
    """An i1 that implies every element of ``mask`` is true (None: cannot tell without a loop)."""
    if isinstance(mask, Splat) and mask.ty == "i1":
        return mask.value
    if isinstance(mask, RemIdentity):
        x, n = (bounds(fn, a) for a in mask.rem.args)
        if x is None or n is None:
            return None
        ok = _and(fn, x.ok, n.ok)
        ok = _and(fn, ok, fn.inst(f"icmp sge i64 {x.lo}, 0"))
        return _and(fn, ok, fn.inst(f"icmp slt i64 {x.hi}, {n.lo}"))
    if isinstance(mask, Remap):
        return all_true(fn, mask.src)
    if not isinstance(mask, Elem):
        return None
    if mask.name == "arith.andi" and mask.ty == "i1":
        parts = [all_true(fn, a) for a in mask.args]
        if any(p is None for p in parts):
            return None
        return _and(fn, parts[0], parts[1])
    if mask.name != "arith.cmpi":
        return None
    pred = _ICMP[getattr(mask, "attrs", {}).get("predicate", -1)] if "predicate" in getattr(mask, "attrs", {}) \
        else None
    if pred is None or pred in ("eq", "ne"):
        return None
    a, b = (bounds(fn, x) for x in mask.args)
    if a is None or b is None:
        return None
    ok = _and(fn, a.ok, b.ok)
    if pred.startswith("u"):
        # unsigned order is the signed one when both sides are non-negative
        ok = _and(fn, ok, _and(fn, fn.inst(f"icmp sge i64 {a.lo}, 0"), fn.inst(f"icmp sge i64 {b.lo}, 0")))
        pred = "s" + pred[1:]
    lhs, rhs = {"slt": (a.hi, b.lo), "sle": (a.hi, b.lo), "sgt": (a.lo, b.hi), "sge": (a.lo, b.hi)}[pred]
    return _and(fn, ok, fn.inst(f"icmp {pred} i64 {lhs}, {rhs}"))
