"""Reductions of one tile along its innermost axis with a simple combine (a sum, product, min, max or bitwise
op), written as explicit vector code: four vector accumulators (independent chains, so the loop runs at the
machine's throughput rather than an add's latency) and one horizontal reduction at the end.

Element values are computed by the tile's lazy expression one lane at a time and gathered into vectors with
``insertelement``; LLVM's SLP vectorizer turns those lane copies back into vector operations (contiguous
loads become one vector load). In the masked copy of the loop the lanes of one vector are evaluated together
(:class:`.lanes.LaneGroup`): each masked load is one masked vector load, not a branch per lane.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from .bounds import all_true
from .context import Context
from .fastpath import load_masks
from .irtext import SIZES, Function
from .lanes import LaneGroup
from .scalar import num_min_max
from .tiles import Buf, Evaluator, Node

# combine op -> (vector instruction or intrinsic, horizontal reduction intrinsic, start value or None)
_FLOAT = {
    "arith.addf": ("fadd reassoc", "fadd", "-0.0"), "arith.mulf": ("fmul reassoc", "fmul", "1.0"),
    "arith.maxnumf": (None, "fmax", None), "arith.minnumf": (None, "fmin", None),     # scalar.num_min_max
    "arith.maximumf": ("@llvm.maximum", "fmaximum", None), "arith.minimumf": ("@llvm.minimum", "fminimum", None),
}
_INT = {
    "arith.addi": ("add", "add"), "arith.muli": ("mul", "mul"), "arith.andi": ("and", "and"),
    "arith.ori": ("or", "or"), "arith.xori": ("xor", "xor"), "arith.maxsi": ("@llvm.smax", "smax"),
    "arith.minsi": ("@llvm.smin", "smin"), "arith.maxui": ("@llvm.umax", "umax"), "arith.minui": ("@llvm.umin", "umin"),
}
# tl.max/tl.min (a NaN operand is ignored unless both are NaN; -0 < +0, as in scalar.py) lower on x86 to
# several instructions per vector (vmaxps + cmpunord + blendv and zero-sign fixes). ``x > acc ? x : acc`` from
# a -inf start is one vmaxps and never takes a NaN, so it equals maximumnum whenever the row's result is above
# -inf and not a zero; a row whose result is the start value (all -inf / NaN) or a zero (whose sign depends
# on which zero the select kept) is reduced again with the exact loop.
# op -> (fcmp predicate, start value as LLVM hex, horizontal reduction, sentinel test)
_SELECT_FORM = {"arith.maxnumf": ("ogt", "-inf", "fmax"), "arith.minnumf": ("olt", "inf", "fmin")}
_INF = {("float", "-inf"): "0xFFF0000000000000", ("float", "inf"): "0x7FF0000000000000",
        ("double", "-inf"): "0xFFF0000000000000", ("double", "inf"): "0x7FF0000000000000"}
_SFX = {"float": "f32", "double": "f64", "i8": "i8", "i16": "i16", "i32": "i32", "i64": "i64"}
_UNROLL = 4


def simple_combine(body: list[Any], args: list[Any]) -> Optional[str]:
    """The op name when the combine region is ``yield op(acc, value)`` (or ``op(value, acc)``)."""
    if len(body) != 2 or body[1].name != "gpu.yield":
        return None
    op = body[0]
    if op.name not in _FLOAT and op.name not in _INT:
        return None
    ins = list(op.operands)
    if len(ins) != 2 or {ins[0], ins[1]} != {args[0], args[1]} or ins[0] == ins[1]:
        return None
    if list(body[1].operands) != [op.results[0]]:
        return None
    return op.name


def lanes(ty: str, vector_bits: int) -> int:
    return max(1, vector_bits // (8 * SIZES[ty])) if ty in _SFX else 0


def supported(op_name: str, ty: str, length: int, vector_bits: int) -> bool:
    vl = lanes(ty, vector_bits)
    if vl < 2 or length % (vl * _UNROLL) or length < 2 * vl * _UNROLL:
        return False
    is_float = ty in ("float", "double")
    return (op_name in _FLOAT) if is_float else (op_name in _INT)


def _vop(fn: Function, op_name: str, vt: str, a: str, b: str, select: bool = False) -> str:
    if select:   # a: accumulator, b: new values (see _SELECT_FORM)
        c = fn.inst(f"fcmp {_SELECT_FORM[op_name][0]} {vt} {b}, {a}")
        return fn.inst(f"select <{vt.split(' x ')[0].lstrip('<')} x i1> {c}, {vt} {b}, {vt} {a}")
    if op_name in _SELECT_FORM:     # not llvm.maximumnum: see scalar.num_min_max
        return num_min_max(fn, op_name == "arith.maxnumf", vt, a, b)
    table = _FLOAT if op_name in _FLOAT else _INT
    ins = table[op_name][0]
    if ins.startswith("@"):
        elem = vt.split(" x ")[1].rstrip(">")
        n = vt.split(" x ")[0].lstrip("<")
        return fn.inst(f"call {vt} {ins}.v{n}{_SFX[elem]}({vt} {a}, {vt} {b})")
    return fn.inst(f"{ins} {vt} {a}, {b}")


def _halving(fn: Function, op_name: str, ty: str, vl: int, acc: str) -> str:
    """The horizontal maximumNumber/minimumNumber of ``acc`` by halving shuffles (llvm.vector.reduce.fmax/fmin
    leave the sign of a zero result open)."""
    v, n = acc, vl
    while n > 1:
        h = n // 2
        lo = fn.inst(f"shufflevector <{n} x {ty}> {v}, <{n} x {ty}> poison, <{h} x i32> "
                     f"<{', '.join(f'i32 {i}' for i in range(h))}>")
        hi = fn.inst(f"shufflevector <{n} x {ty}> {v}, <{n} x {ty}> poison, <{h} x i32> "
                     f"<{', '.join(f'i32 {i}' for i in range(h, n))}>")
        v = num_min_max(fn, op_name == "arith.maxnumf", f"<{h} x {ty}>", lo, hi)
        n = h
    return fn.inst(f"extractelement <1 x {ty}> {v}, i64 0")


def reduce_inner(ctx: Context, fn: Function, node: Node, full_of: Callable[[str], list[str]], axis: int,
                 length: int, op_name: str, ty: str, vector_bits: int, into: Optional[Buf] = None) -> str:
    """Emit the reduction of ``node`` over elements ``full_of(0..length-1)`` (along ``axis``); returns the
    scalar result.
    ``into``: a buffer of ``node``'s shape that also receives each element (contiguous along the axis)."""
    vl = lanes(ty, vector_bits)
    vt = f"<{vl} x {ty}>"
    src = {"node": node, "into": into}   # what vec_at reads, and the buffer it also fills (None: none)

    def vec_at(ev: Evaluator, base: str, offset: int) -> str:
        at = [full_of(str(int(base) + offset + lane) if not base.startswith("%") else
                      (fn.inst(f"add nuw nsw i64 {base}, {offset + lane}") if offset + lane else base))
              for lane in range(vl)]
        if not ev.masks_true:     # masked loads: one vector load for all lanes, not a branch per lane
            ev = LaneGroup(fn, ev.masks_true, at, axis)
        v = "poison"
        for lane, idx in enumerate(at):
            v = fn.inst(f"insertelement {vt} {v}, {ty} {ev.value(src['node'], idx)}, i64 {lane}")
            if lane == 0 and src["into"] is not None:
                dst = ev.element_ptr(src["into"], idx)
        if src["into"] is not None:
            fn.emit(f"store {vt} {v}, ptr {dst}, align {SIZES[ty]}")
        return v

    def emit(masks_true: bool, select: bool, masked: bool = False) -> list[str]:
        src["node"], src["into"] = node, into
        if into is not None and masked:
            # lanes gathered one by one under masks would scalarize the costly expression: fill the buffer
            # with the ordinary (loop-vectorized) masked loop and reduce from it, as without fusion
            ctx.store_node(node, into)
            src["node"], src["into"] = into, None
        # a fused (costly) element expression has ILP enough in one vector; four in flight spill its constants
        unroll = 1 if src["into"] is not None else _UNROLL
        step = vl * unroll
        # the accumulators start at the combine's identity, not at the first step's values: a peeled first
        # step doubled the lanes written out per reduction (a 128-wide row was all peel and one iteration),
        # and an unrolled static_range of reductions gave LLVM twice the code to digest (same results: the
        # identity combines exactly with any value)
        start = f"<{', '.join([f'{ty} {_identity(op_name, ty, select)}'] * vl)}>"

        def body(k: str, accs: list[str]) -> list[str]:
            base = fn.inst(f"mul nuw nsw i64 {k}, {step}")
            ev = Evaluator(fn, masks_true)
            return [_vop(fn, op_name, vt, a, vec_at(ev, base, u * vl), select) for u, a in enumerate(accs)]

        accs = seq_loop(fn, length // step, [start] * unroll, [vt] * unroll, body)
        while len(accs) > 1:
            accs = [_vop(fn, op_name, vt, accs[i], accs[i + 1], select) for i in range(0, len(accs), 2)]
        return accs

    def whole(select: bool) -> str:
        """The reduction over all elements (both mask cases) down to one scalar."""
        masks = load_masks(node)
        if masks:
            known = [all_true(fn, m) for m in masks]
            ok: Optional[str] = None
            if all(k is not None for k in known):
                ok = "true"
                for k in known:
                    ok = k if ok == "true" else fn.inst(f"and i1 {ok}, {k}")
            if ok is not None and ok != "true":
                fast, slow, done = fn.label("vrfast"), fn.label("vrmasked"), fn.label("vrdone")
                fn.cond_br(ok, fast, slow)
                fn.start_block(fast)
                fv = emit(True, select)[0]
                fend = fn.current
                fn.br(done)
                fn.start_block(slow)
                sv = emit(False, select, True)[0]
                send = fn.current
                fn.br(done)
                fn.start_block(done)
                acc = fn.inst(f"phi {vt} [{fv}, %{fend}], [{sv}, %{send}]")
            else:
                acc = emit(ok == "true", select, ok != "true")[0]
        else:
            acc = emit(False, select)[0]
        if ty in ("float", "double"):
            _, red, start = _FLOAT[op_name]
            sfx = _SFX[ty]
            if start is not None:
                return fn.inst(f"call reassoc {ty} @llvm.vector.reduce.{red}.v{vl}{sfx}({ty} {start}, {vt} {acc})")
            if select:   # the accumulators are never NaN, and a zero result is recomputed exactly
                return fn.inst(f"call nnan {ty} @llvm.vector.reduce.{red}.v{vl}{sfx}({vt} {acc})")
            if op_name in _SELECT_FORM:
                return _halving(fn, op_name, ty, vl, acc)
            return fn.inst(f"call {ty} @llvm.vector.reduce.{red}.v{vl}{sfx}({vt} {acc})")
        red = _INT[op_name][1]
        return fn.inst(f"call {ty} @llvm.vector.reduce.{red}.v{vl}{_SFX[ty]}({vt} {acc})")

    if op_name not in _SELECT_FORM or ty not in ("float", "double"):
        return whole(False)
    quick = whole(True)
    qend = fn.current
    start = fn.inst(f"fcmp oeq {ty} {quick}, {_INF[ty, _SELECT_FORM[op_name][1]]}")
    zero = fn.inst(f"fcmp oeq {ty} {quick}, 0.0")
    edge = fn.inst(f"or i1 {start}, {zero}")
    exact, done = fn.label("vrexact"), fn.label("vrjoin")
    fn.cond_br(edge, exact, done)
    fn.start_block(exact)
    slow = whole(False)
    send = fn.current
    fn.br(done)
    fn.start_block(done)
    return fn.inst(f"phi {ty} [{quick}, %{qend}], [{slow}, %{send}]")


def _identity(op_name: str, ty: str, select: bool) -> str:
    """The value that ``op_name`` combines with any ``x`` into exactly ``x`` (NaN, signed zeros included)."""
    if select:
        return _INF[ty, _SELECT_FORM[op_name][1]]
    if ty in ("float", "double"):
        # maxnum/minnum ignore a NaN operand; maximum/minimum propagate one and -inf/+inf lose to anything else
        return {"arith.addf": "-0.0", "arith.mulf": "1.0", "arith.maxnumf": "0x7FF8000000000000",
                "arith.minnumf": "0x7FF8000000000000", "arith.maximumf": _INF[ty, "-inf"],
                "arith.minimumf": _INF[ty, "inf"]}[op_name]
    bits = 8 * SIZES[ty]
    return str({"arith.addi": 0, "arith.muli": 1, "arith.andi": -1, "arith.ori": 0, "arith.xori": 0,
                "arith.maxsi": -(1 << (bits - 1)), "arith.minsi": (1 << (bits - 1)) - 1, "arith.maxui": 0,
                "arith.minui": -1}[op_name])


def seq_loop(fn: Function, count: int, init: list[str], tys: list[str],
              step: Callable[[str, list[str]], list[str]]) -> list[str]:
    """A loop of ``count`` iterations carrying scalars; returns their final values."""
    if count <= 0:
        return init
    pre = fn.current
    head, latch, exit_ = fn.label("R"), fn.label("Rlatch"), fn.label("Rexit")
    fn.br(head)
    fn.start_block(head)
    k = fn.tmp("k")
    phis = [fn.tmp("acc") for _ in init]
    at = len(fn.blocks[-1][1])
    for _ in range(len(init) + 1):
        fn.emit("")
    new = step(k, phis)
    fn.br(latch)
    fn.start_block(latch)
    nk = fn.inst(f"add nuw nsw i64 {k}, 1")
    c = fn.inst(f"icmp ult i64 {nk}, {count}")
    fn.cond_br(c, head, exit_)
    for label, lines in fn.blocks:
        if label == head:
            lines[at] = f"{k} = phi i64 [0, %{pre}], [{nk}, %{latch}]"
            for j, (p, t, i0, nv) in enumerate(zip(phis, tys, init, new)):
                lines[at + 1 + j] = f"{p} = phi {t} [{i0}, %{pre}], [{nv}, %{latch}]"
            break
    fn.start_block(exit_)
    return new
