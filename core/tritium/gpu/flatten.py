"""``tl.range(..., flatten=True)``: an outer loop and the loop nested in it become one loop, as Triton's
nested-loop fusion does, so that the software pipeline of the inner loop's loads runs on across the outer
loop's iterations (a persistent matmul starts loading the next tile while it finishes this one, instead of
draining and refilling its stages at every tile).

The shape fused (anything else is left as it is)::

    for t in range(LB, UB, ST) [iter_args O]:       # tt.flatten
        P: pure ops without regions (tile coordinates from t)
        R = for k in range(KLB, KUB, KST) [iter_args I = INIT]: body
        E: the epilogue (any ops), reads R, P, t, O
        yield Y

with KLB, KUB, KST defined outside the outer loop. It becomes::

    n_in = trip count of the inner loop
    if n_in > 0:
        for j in range(0, trips(LB, UB, ST) * n_in) [kk = 0, t = LB, I = INIT, O]:
            P
            I = select(kk == 0, INIT, I)       (for an INIT that P computes)
            body with k = KLB + kk * KST -> I'
            last = kk == n_in - 1
            I, O = (E; yield INIT, Y) if last else (I', O)     (INIT from outside the loop; I' otherwise)
            kk, t = (0, t + ST) if last else (kk + 1, t)
    else:
        the original loop (its inner loop runs no iteration)

An accumulator initialized outside the loop (``tl.zeros`` is hoisted there) is reset in the branch that ends a
tile, after the epilogue has read it, so that a dot left running across iterations keeps its registers to
itself (a select before the dot would write them between the tensor-core instructions). An INIT computed by P
(pointers of the tile) is selected at the top instead; the loop's first value is P evaluated for t = LB.

P is recomputed in every iteration (it is pure scalar work, which the pipeline evaluates for the iteration
it loads ahead); the epilogue runs in the iteration that ends a tile.
"""
from __future__ import annotations

from typing import Any, Optional

from .._mlir import block_ops, ir, walk_children

#: ops P may hold: they are re-evaluated in every iteration of the fused loop
_PURE_TT = {"tt.splat", "tt.make_range", "tt.expand_dims", "tt.broadcast", "tt.addptr", "tt.get_program_id",
            "tt.get_num_programs"}
_CMPI = {"eq": 0, "ne": 1, "slt": 2, "sle": 3, "sgt": 4, "sge": 5}


def flatten_loops(module: Any) -> int:
    """Fuse every ``tt.flatten`` loop of ``module`` that has the shape above; return how many were fused."""
    fused = 0
    with module.context, ir.Location.unknown():
        loops = [o for o in _walk(module.operation) if o.name == "scf.for" and "tt.flatten" in o.attributes]
        # inner loops first: fusing an outer loop erases the loop nested in it (an inner loop fused first leaves
        # its guard in the outer body, which is then not fused)
        for op in reversed(loops):
            plan = _plan(op)
            if plan is not None:
                _fuse(op, *plan)
                fused += 1
            else:
                del op.attributes["tt.flatten"]
    return fused


def _walk(op: Any) -> list:
    out = []
    for o in walk_children(op):
        out.append(o)
        out.extend(_walk(o))
    return out


def _inside(v: Any, loop: Any) -> bool:
    owner = v.owner
    o = owner.owner if isinstance(owner, ir.Block) else owner
    target = loop.operation
    while o is not None:
        o = o.operation if hasattr(o, "operation") else o
        if o == target:
            return True
        o = o.parent
    return False


def _positive_constant(v: Any) -> Optional[int]:
    o = v.owner
    if isinstance(o, ir.Block) or o.name != "arith.constant":
        return None
    try:
        c = ir.IntegerAttr(o.attributes["value"]).value
    except (ValueError, TypeError):
        return None
    return c if c > 0 else None


def _pure(o: Any) -> bool:
    if len(o.regions) or len(o.results) != 1:
        return False
    return o.name.startswith("arith.") or o.name.startswith("math.") or o.name in _PURE_TT


def _plan(op: Any) -> Optional[tuple]:
    body = op.regions[0].blocks[0]
    ops = block_ops(body)
    inner = [o for o in ops if o.name == "scf.for"]
    if len(inner) != 1:
        return None
    inner = inner[0]
    k = ops.index(inner)
    pre, epilogue = ops[:k], ops[k + 1:-1]
    if not all(_pure(o) for o in pre):
        return None
    ity = op.operands[0].type
    inner_ops = list(inner.operands)
    if _positive_constant(op.operands[2]) is None or _positive_constant(inner_ops[2]) is None:
        return None
    if any(_inside(v, op) for v in inner_ops[:3]) or inner_ops[0].type != ity:
        return None
    return inner, pre, epilogue


class _B:
    """Creates arith ops at an insertion point."""

    def __init__(self, ip: Any, loc: Any) -> None:
        self.ip, self.loc = ip, loc

    def op(self, name: str, operands: list, ty: Any, attrs: Optional[dict] = None) -> Any:
        return ir.Operation.create(name, results=[ty], operands=operands, attributes=attrs or {}, loc=self.loc,
                                   ip=self.ip).results[0]

    def const(self, value: int, ty: Any) -> Any:
        return self.op("arith.constant", [], ty, {"value": ir.IntegerAttr.get(ty, value)})

    def bin(self, name: str, a: Any, b: Any) -> Any:
        return self.op(f"arith.{name}", [a, b], a.type)

    def cmp(self, pred: str, a: Any, b: Any) -> Any:
        i64 = ir.IntegerType.get_signless(64)
        return self.op("arith.cmpi", [a, b], ir.IntegerType.get_signless(1),
                       {"predicate": ir.IntegerAttr.get(i64, _CMPI[pred])})

    def select(self, c: Any, a: Any, b: Any) -> Any:
        return self.op("arith.select", [c, a, b], a.type)

    def trips(self, lb: Any, ub: Any, st: Any) -> Any:
        zero, one = self.const(0, lb.type), self.const(1, lb.type)
        span = self.bin("maxsi", self.bin("subi", ub, lb), zero)
        return self.bin("divsi", self.bin("addi", span, self.bin("subi", st, one)), st)


def _evaluate_at(values: list, inside: list, pre: list, op: Any, args: list, block: Any) -> list:
    """``values`` as the outer loop's first iteration computes them (its block arguments bound to ``args``):
    the ops of P they need are cloned into ``block``."""
    if not any(inside):
        return list(values)
    mapping = dict(zip(list(op.regions[0].blocks[0].arguments), args))
    ip = ir.InsertionPoint(block)
    for o in pre:
        c = o.clone(ip=ip).operation
        for old, new in mapping.items():
            c.replace_uses_of_with(old, new)
        mapping[o.results[0]] = c.results[0]
    return [mapping.get(v, v) if i else v for v, i in zip(values, inside)]


def _fuse(op: Any, inner: Any, pre: list, epilogue: list) -> None:
    loc = op.location
    ity = op.operands[0].type
    lb, ub, st = list(op.operands)[:3]
    outer_inits = list(op.operands)[3:]
    klb, kub, kst = list(inner.operands)[:3]
    inner_inits = list(inner.operands)[3:]
    del op.attributes["tt.flatten"]
    b = _B(ir.InsertionPoint(op), loc)
    n_in = b.trips(klb, kub, kst)
    total = b.bin("muli", b.trips(lb, ub, st), n_in)
    last_k = b.bin("subi", n_in, b.const(1, ity))
    has_inner = b.cmp("sgt", n_in, b.const(0, ity))
    o_types = [r.type for r in op.results]
    guard = ir.Operation.create("scf.if", results=o_types, operands=[has_inner], regions=2, loc=loc,
                                ip=ir.InsertionPoint(op))
    then_b, else_b = guard.regions[0].blocks.append(), guard.regions[1].blocks.append()
    # the unfused loop, for programs whose inner loop runs no iteration
    twin = op.clone(ip=ir.InsertionPoint(else_b))
    ir.Operation.create("scf.yield", operands=list(twin.results), loc=loc, ip=ir.InsertionPoint(else_b))
    # the fused loop
    tb = _B(ir.InsertionPoint(then_b), loc)
    zero = tb.const(0, ity)
    one = tb.const(1, ity)
    i_types = [v.type for v in inner_inits]
    inner_defined = [_inside(v, op) for v in inner_inits]
    start = _evaluate_at(inner_inits, inner_defined, pre, op, [lb] + outer_inits, then_b)
    fused = ir.Operation.create("scf.for", results=[ity, ity] + i_types + o_types,
                                operands=[zero, total, one, zero, lb] + start + outer_inits, regions=1,
                                loc=loc, ip=ir.InsertionPoint(then_b))
    ir.Operation.create("scf.yield", operands=list(fused.results)[2 + len(i_types):], loc=loc,
                        ip=ir.InsertionPoint(then_b))
    fb = fused.regions[0].blocks.append(ity, ity, ity, *i_types, *o_types)
    fargs = list(fb.arguments)
    kk, t = fargs[1], fargs[2]
    f_inner, f_outer = fargs[3:3 + len(i_types)], fargs[3 + len(i_types):]
    ob = op.regions[0].blocks[0]
    ib = inner.regions[0].blocks[0]
    # P, then the inner body, move into the fused loop's body
    end = ir.Operation.create("scf.yield", operands=[], loc=loc, ip=ir.InsertionPoint(fb))
    for o in pre:
        o.move_before(end)
    fbb = _B(ir.InsertionPoint(end), loc)
    kv = fbb.bin("addi", klb, fbb.bin("muli", kk, kst))
    # an init computed by P starts each tile: selected while kk == 0 (the inner body's uses of the iter arg
    # are rewired to the selection below)
    first = fbb.cmp("eq", kk, fbb.const(0, ity)) if any(inner_defined) else None
    body_inner = [fbb.select(first, init, arg) if inside else arg
                  for init, arg, inside in zip(inner_inits, f_inner, inner_defined)]
    inner_body = block_ops(ib)
    inner_yield = inner_body[-1]
    for o in inner_body[:-1]:
        o.move_before(end)
    ylds = list(inner_yield.operands)
    last = fbb.cmp("eq", kk, last_k)
    branch = ir.Operation.create("scf.if", results=i_types + o_types, operands=[last], regions=2, loc=loc,
                                 ip=ir.InsertionPoint(end))
    eb, nb = branch.regions[0].blocks.append(), branch.regions[1].blocks.append()
    outer_yield = block_ops(ob)[-1]
    resets = [y if inside else init for init, y, inside in zip(inner_inits, ylds, inner_defined)]
    e_end = ir.Operation.create("scf.yield", operands=resets + list(outer_yield.operands), loc=loc,
                                ip=ir.InsertionPoint(eb))
    for o in epilogue:
        o.move_before(e_end)
    ir.Operation.create("scf.yield", operands=ylds + f_outer, loc=loc, ip=ir.InsertionPoint(nb))
    kk_next = fbb.select(last, fbb.const(0, ity), fbb.bin("addi", kk, fbb.const(1, ity)))
    t_next = fbb.select(last, fbb.bin("addi", t, st), t)
    ir.Operation.create("scf.yield", operands=[kk_next, t_next] + list(branch.results), loc=loc,
                        ip=ir.InsertionPoint(end))
    end.erase()
    # rewire: the inner loop's values, then the outer loop's
    list(ib.arguments)[0].replace_all_uses_with(kv)
    for a, v in zip(list(ib.arguments)[1:], body_inner):
        a.replace_all_uses_with(v)
    for r, v in zip(inner.results, list(inner_yield.operands)):
        r.replace_all_uses_with(v)
    list(ob.arguments)[0].replace_all_uses_with(t)
    for a, v in zip(list(ob.arguments)[1:], f_outer):
        a.replace_all_uses_with(v)
    for r, v in zip(op.results, guard.results):
        r.replace_all_uses_with(v)
    inner.erase()
    op.erase()
