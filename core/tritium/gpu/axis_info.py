"""Contiguity, divisibility and constancy of integer and pointer tiles (Triton's axis analysis).

For each dimension of a value: ``contiguity`` c means the values form runs of c consecutive integers (or
pointers to consecutive elements) over aligned groups of c elements; ``divisibility`` d means the first
value of each run is a multiple of d (in bytes for pointers); ``constancy`` k means aligned groups of k
elements hold one value. Loads and stores use them to choose vector widths, masks to share one
predicate per vector. Scalars are one-element values.
"""
from __future__ import annotations

from math import gcd
from typing import Any, Optional

from .._mlir import ir, walk_children

MAX_DIV = 1 << 30


def pow2_divisor(v: int) -> int:
    v = abs(int(v))
    if v == 0:
        return MAX_DIV
    return min(MAX_DIV, v & -v)


class AxisInfo:
    __slots__ = ("contig", "div", "const", "value")

    def __init__(self, contig: tuple[int, ...], div: tuple[int, ...], const: tuple[int, ...],
                 value: Optional[int] = None) -> None:
        self.contig, self.div, self.const, self.value = contig, div, const, value

    @property
    def rank(self) -> int:
        return len(self.contig)

    def __eq__(self, o: object) -> bool:
        return isinstance(o, AxisInfo) and (self.contig, self.div, self.const, self.value) == \
            (o.contig, o.div, o.const, o.value)

    def __repr__(self) -> str:
        return f"AxisInfo(contig={self.contig}, div={self.div}, const={self.const}, value={self.value})"


def unknown(rank: int) -> AxisInfo:
    return AxisInfo((1, ) * rank, (1, ) * rank, (1, ) * rank)


def meet(a: AxisInfo, b: AxisInfo) -> AxisInfo:
    return AxisInfo(tuple(gcd(x, y) for x, y in zip(a.contig, b.contig)),
                    tuple(gcd(x, y) for x, y in zip(a.div, b.div)),
                    tuple(gcd(x, y) for x, y in zip(a.const, b.const)),
                    a.value if a.value == b.value else None)


def _shape(t: Any) -> tuple[int, ...]:
    if isinstance(t, ir.RankedTensorType):
        return tuple(ir.RankedTensorType(t).shape)
    return (1, )


def _elem_bytes(ptr_type: Any) -> int:
    text = str(ptr_type)
    inner = text.split("!tt.ptr<", 1)[1]
    elem = inner.split(">", 1)[0].split(",")[0].strip()
    return {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "f16": 2, "bf16": 2, "f32": 4, "f64": 8}.get(elem, 1) \
        if not elem.startswith("f8") else 1


def _hint(op: Any, name: str) -> Optional[tuple[int, ...]]:
    if name in op.attributes:
        return tuple(ir.DenseI32ArrayAttr(op.attributes[name]))
    return None


class AxisAnalysis:
    """Run over a kernel function: ``info(value)`` afterwards."""

    def __init__(self, func: Any) -> None:
        self.infos: dict[Any, AxisInfo] = {}
        entry = func.regions[0].blocks[0]
        arg_attrs = func.attributes["arg_attrs"] if "arg_attrs" in func.attributes else None
        for i, arg in enumerate(entry.arguments):
            div = 1
            if arg_attrs is not None:
                d = ir.DictAttr(ir.ArrayAttr(arg_attrs)[i])
                if "tt.divisibility" in d:
                    div = ir.IntegerAttr(d["tt.divisibility"]).value
            if "!tt.ptr" in str(arg.type) and div == 1:
                div = _elem_bytes(arg.type)
            self.infos[arg] = AxisInfo((1, ), (div, ), (1, ))
        self.visit_block_ops(walk_children(func))

    def info(self, value: Any) -> AxisInfo:
        got = self.infos.get(value)
        if got is None:
            got = unknown(len(_shape(value.type)))
        return got

    def visit_block_ops(self, ops: list[Any]) -> None:
        for op in ops:
            self.visit(op)

    # -- ops -------------------------------------------------------------------------------------
    def visit(self, op: Any) -> None:
        name = op.name
        if name == "scf.for":
            self._for(op)
            return
        if name in ("scf.if", "scf.while"):
            for region in op.regions:
                for block in region.blocks:
                    for a in block.arguments:
                        self.infos[a] = unknown(len(_shape(a.type)))
                    self.visit_block_ops([o for o in block.operations])
            if name == "scf.if":
                self._if_results(op)
            return
        if not op.results or len(op.results) != 1:
            return
        res = op.results[0]
        shape = _shape(res.type)
        info = self._compute(op, name, shape)
        if info is None:
            info = unknown(len(shape))
        hc, hd, hk = _hint(op, "tt.contiguity"), _hint(op, "tt.divisibility"), _hint(op, "tt.constancy")
        if hc or hd or hk:
            info = AxisInfo(tuple(max(a, b) for a, b in zip(info.contig, hc)) if hc else info.contig,
                            tuple(max(a, b) for a, b in zip(info.div, hd)) if hd else info.div,
                            tuple(max(a, b) for a, b in zip(info.const, hk)) if hk else info.const, info.value)
        self.infos[res] = info

    def _if_results(self, op: Any) -> None:
        regions = list(op.regions)
        yields = []
        for r in regions:
            blocks = list(r.blocks)
            if blocks:
                ops = list(blocks[0].operations)
                yields.append(list(ops[-1].operands))
        for i, res in enumerate(op.results):
            infos = [self.info(y[i]) for y in yields if i < len(y)]
            out = infos[0] if infos else unknown(len(_shape(res.type)))
            for x in infos[1:]:
                out = meet(out, x)
            if len(infos) < 2:
                out = unknown(len(_shape(res.type)))
            self.infos[res] = out

    def _for(self, op: Any) -> None:
        operands = list(op.operands)
        lb, step = self.info(operands[0]), self.info(operands[2])
        block = op.regions[0].blocks[0]
        args = list(block.arguments)
        self.infos[args[0]] = AxisInfo((1, ), (gcd(lb.div[0], step.div[0]), ), (1, ))
        current = [self.info(v) for v in operands[3:]]
        ops = list(block.operations)
        for _ in range(4):
            for a, i in zip(args[1:], current):
                self.infos[a] = i
            self.visit_block_ops(ops)
            yielded = [self.info(v) for v in ops[-1].operands]
            new = [meet(c, y) for c, y in zip(current, yielded)]
            if new == current:
                break
            current = new
        else:
            current = [unknown(c.rank) for c in current]
            for a, i in zip(args[1:], current):
                self.infos[a] = i
            self.visit_block_ops(ops)
        for r, i in zip(op.results, current):
            self.infos[r] = i

    def _compute(self, op: Any, name: str, shape: tuple[int, ...]) -> Optional[AxisInfo]:
        rank = len(shape)
        ops = list(op.operands)
        if name == "arith.constant":
            attr = op.attributes["value"]
            if isinstance(attr, ir.IntegerAttr):
                v = ir.IntegerAttr(attr).value
                return AxisInfo((1, ), (pow2_divisor(v), ), (1, ), v)
            if isinstance(attr, ir.DenseIntElementsAttr) or isinstance(attr, ir.DenseElementsAttr):
                dense = ir.DenseElementsAttr(attr)
                if dense.is_splat and "i" in str(ir.RankedTensorType(dense.type).element_type)[:1]:
                    v = ir.IntegerAttr(dense.get_splat_value()).value
                    return AxisInfo((1, ) * rank, (pow2_divisor(v), ) * rank, shape, v)
            return None
        if name == "tt.make_range":
            start = ir.IntegerAttr(op.attributes["start"]).value
            end = ir.IntegerAttr(op.attributes["end"]).value
            return AxisInfo((end - start, ), (pow2_divisor(start), ), (1, ))
        if name == "tt.splat":
            s = self.info(ops[0])
            return AxisInfo((1, ) * rank, (s.div[0], ) * rank, shape, s.value)
        if name == "tt.broadcast":
            s = self.info(ops[0])
            src_shape = _shape(ops[0].type)
            return AxisInfo(tuple(c if ss == d else 1 for c, ss, d in zip(s.contig, src_shape, shape)), s.div,
                            tuple(k if ss == d else d for k, ss, d in zip(s.const, src_shape, shape)), s.value)
        if name == "tt.expand_dims":
            s = self.info(ops[0])
            axis = ir.IntegerAttr(op.attributes["axis"]).value
            if not isinstance(ops[0].type, ir.RankedTensorType):
                return None
            # the new dimension's "runs" are single elements: only what every element is divisible by holds
            # there ([16, 17, ...] starts a run divisible by 16, but 17 is not)
            d = MAX_DIV
            for c, dv in zip(s.contig, s.div):
                d = gcd(d, 1 if c > 1 else dv)
            return AxisInfo(s.contig[:axis] + (1, ) + s.contig[axis:], s.div[:axis] + (d, ) + s.div[axis:],
                            s.const[:axis] + (1, ) + s.const[axis:], s.value)
        if name == "tt.trans":
            s = self.info(ops[0])
            order = list(ir.DenseI32ArrayAttr(op.attributes["order"]))
            return AxisInfo(tuple(s.contig[o] for o in order), tuple(s.div[o] for o in order),
                            tuple(s.const[o] for o in order), s.value)
        if name in ("arith.extsi", "arith.extui", "arith.trunci", "arith.index_cast", "arith.index_castui"):
            return self.info(ops[0])
        if name in ("tt.get_program_id", "tt.get_num_programs", "tt.get_cluster_cta_rank"):
            return AxisInfo((1, ), (1, ), (1, ))
        if len(ops) == 2 and name in _BINARY:
            a, b = self.info(ops[0]), self.info(ops[1])
            if a.rank != rank or b.rank != rank:
                return None
            return _BINARY[name](self, op, a, b, shape)
        if name == "arith.select":
            c, a, b = (self.info(v) for v in ops)
            if a.rank != rank or c.rank != rank:
                return None
            contig = tuple(gcd(ck, min(ac, bc)) for ck, ac, bc in zip(c.const, a.contig, b.contig))
            return AxisInfo(contig, tuple(gcd(_cut(ad, ac, k), _cut(bd, bc, k))
                                          for ad, ac, bd, bc, k in zip(a.div, a.contig, b.div, b.contig, contig)),
                            tuple(gcd(gcd(x, y), z) for x, y, z in zip(c.const, a.const, b.const)))
        return None


def _cut(div: int, contig: int, run: int) -> int:
    """Divisibility of the starts of runs of ``run`` elements taken from runs of ``contig`` elements whose starts
    are multiples of ``div``: a shorter run can start inside a longer one ([16..31] cut in fours starts at 20)."""
    return div if contig <= run else gcd(div, run)


def _each(div: int, contig: int) -> int:
    """What every element (not only each run's first) is divisible by."""
    return 1 if contig > 1 else div


def _add(self: AxisAnalysis, op: Any, a: AxisInfo, b: AxisInfo, shape: tuple[int, ...], sub: bool = False,
         ptr: bool = False) -> AxisInfo:
    scale = _elem_bytes(op.results[0].type) if ptr else 1
    contig = tuple(max(gcd(ac, bk), 1 if sub else gcd(ak, bc))
                   for ac, ak, bc, bk in zip(a.contig, a.const, b.contig, b.const))
    div = tuple(gcd(_cut(ad, ac, k), min(MAX_DIV, _cut(bd, bc, k) * scale))
                for ad, ac, bd, bc, k in zip(a.div, a.contig, b.div, b.contig, contig))
    const = tuple(gcd(x, y) for x, y in zip(a.const, b.const))
    value = None
    if a.value is not None and b.value is not None and not ptr:
        value = a.value - b.value if sub else a.value + b.value
    return AxisInfo(contig, div, const, value)


def _mul(self: AxisAnalysis, op: Any, a: AxisInfo, b: AxisInfo, shape: tuple[int, ...]) -> AxisInfo:
    contig = tuple(ac if b.value == 1 else (bc if a.value == 1 else 1)
                   for ac, bc in zip(a.contig, b.contig))
    # a run scaled by anything but 1 is no run: [16, 17] * 2 = [32, 34] is divisible by 2, not by 32
    div = tuple(min(MAX_DIV, (ad if b.value == 1 else _each(ad, ac)) * (bd if a.value == 1 else _each(bd, bc)))
                for ad, ac, bd, bc in zip(a.div, a.contig, b.div, b.contig))
    if a.value == 0 or b.value == 0:
        div = (MAX_DIV, ) * len(shape)
    const = tuple(gcd(x, y) for x, y in zip(a.const, b.const))
    value = a.value * b.value if a.value is not None and b.value is not None else None
    return AxisInfo(contig, div, const, value)


def _div(self: AxisAnalysis, op: Any, a: AxisInfo, b: AxisInfo, shape: tuple[int, ...]) -> AxisInfo:
    const = tuple(max(gcd(ak, bk), gcd(gcd(ac, ad), bd) if bk == s else 1)
                  for ak, bk, ac, ad, bd, s in zip(a.const, b.const, a.contig, a.div, b.div, shape))
    div = tuple(max(1, ad // bd) if b.value is not None and b.value > 0 and ad % bd == 0 and bd == b.value else 1
                for ad, bd in zip(a.div, b.div))
    return AxisInfo((1, ) * len(shape), div, const)


def _rem(self: AxisAnalysis, op: Any, a: AxisInfo, b: AxisInfo, shape: tuple[int, ...]) -> AxisInfo:
    # x % n with n uniform: runs of x stay runs within aligned groups of gcd(run, n's divisibility)
    contig = tuple(gcd(gcd(ac, ad), bd) if bk == s else 1
                   for ac, ad, bd, bk, s in zip(a.contig, a.div, b.div, b.const, shape))
    div = tuple(gcd(x, y) for x, y in zip(a.div, b.div))
    const = tuple(gcd(x, y) for x, y in zip(a.const, b.const))
    return AxisInfo(contig, div, const)


def _cmp(self: AxisAnalysis, op: Any, a: AxisInfo, b: AxisInfo, shape: tuple[int, ...]) -> AxisInfo:
    # a run r, r+1, .. r+k-1 (r a multiple of k) against a constant c that is a multiple of k: run >= c and
    # run < c hold for the whole run, run > c and run <= c differ at r == c (and mirrored for c against a run)
    pred = ir.IntegerAttr(op.attributes["predicate"]).value
    run_vs_const = pred in (2, 5, 6, 9)          # slt, sge, ult, uge
    const_vs_run = pred in (3, 4, 7, 8)          # sle, sgt, ule, ugt
    const = []
    for d in range(len(shape)):
        k = gcd(a.const[d], b.const[d])
        if run_vs_const and b.const[d] == shape[d] and a.contig[d] > 1:
            k = max(k, gcd(gcd(a.contig[d], a.div[d]), b.div[d]))
        if const_vs_run and a.const[d] == shape[d] and b.contig[d] > 1:
            k = max(k, gcd(gcd(b.contig[d], b.div[d]), a.div[d]))
        const.append(k)
    return AxisInfo((1, ) * len(shape), (1, ) * len(shape), tuple(const))


def _logic(self: AxisAnalysis, op: Any, a: AxisInfo, b: AxisInfo, shape: tuple[int, ...]) -> AxisInfo:
    return AxisInfo((1, ) * len(shape), (1, ) * len(shape), tuple(gcd(x, y) for x, y in zip(a.const, b.const)))


def _shift(self: AxisAnalysis, op: Any, a: AxisInfo, b: AxisInfo, shape: tuple[int, ...]) -> AxisInfo:
    const = tuple(gcd(x, y) for x, y in zip(a.const, b.const))
    if b.value is None:
        return AxisInfo((1, ) * len(shape), (1, ) * len(shape), const)
    if b.value == 0:
        return AxisInfo(a.contig, a.div, const)
    if op.name == "arith.shli":
        return AxisInfo((1, ) * len(shape), tuple(min(MAX_DIV, _each(d, c) << b.value)
                                                  for d, c in zip(a.div, a.contig)), const)
    return AxisInfo((1, ) * len(shape), tuple(max(1, _each(d, c) >> b.value) for d, c in zip(a.div, a.contig)), const)


def _minmax(self: AxisAnalysis, op: Any, a: AxisInfo, b: AxisInfo, shape: tuple[int, ...]) -> AxisInfo:
    return AxisInfo((1, ) * len(shape), tuple(gcd(x, y) for x, y in zip(a.div, b.div)),
                    tuple(gcd(x, y) for x, y in zip(a.const, b.const)))


_BINARY = {
    "arith.addi": _add,
    "arith.subi": lambda s, op, a, b, sh: _add(s, op, a, b, sh, sub=True),
    "tt.addptr": lambda s, op, a, b, sh: _add(s, op, a, b, sh, ptr=True),
    "arith.muli": _mul,
    "arith.divsi": _div, "arith.divui": _div,
    "arith.remsi": _rem, "arith.remui": _rem,
    "arith.cmpi": _cmp,
    "arith.andi": _logic, "arith.ori": _logic, "arith.xori": _logic,
    "arith.shli": _shift, "arith.shrsi": _shift, "arith.shrui": _shift,
    "arith.maxsi": _minmax, "arith.minsi": _minmax, "arith.maxui": _minmax, "arith.minui": _minmax,
}
