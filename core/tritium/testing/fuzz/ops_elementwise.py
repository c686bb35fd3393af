"""Elementwise operations of generated kernels: arithmetic, comparisons, bitwise ops, shifts, min/max,
division, math functions, tl.where, casts and bitcasts (see gen.py for the rules that keep them defined)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from . import types as T
from .program import Skip, Stmt

if TYPE_CHECKING:
    from .gen import Gen

MATH = {"exp": "ulp_exp", "exp2": "ulp_exp", "log": "ulp_log", "log2": "ulp_log", "sin": "ulp_trig",
        "cos": "ulp_trig", "sqrt": "ulp_sqrt", "rsqrt": "ulp_rsqrt", "erf": "ulp_erf"}
EXACT_MATH = ("floor", "ceil", "abs", "sqrt_rn")


# -- elementwise ------------------------------------------------------------------------------------------
ARITH = ("+", "-", "*")
BITWISE = ("&", "|", "^")
CMP = ("<", "<=", "==", "!=", ">", ">=")


def g_binary(g: Gen) -> None:
    rng = g.rng
    shape = g.shape()
    a = g.operand(shape)
    da = T.get(a.dtype)
    kind = rng.choice(["arith", "arith", "bitwise", "cmp", "minmax", "div", "mod", "shift", "scalar"])
    if da.kind == "b" and kind != "cmp":
        kind = "bitwise"
    if da.is_float and kind in ("bitwise", "shift"):
        kind = "cmp"
    if kind == "cmp":
        b = g.operand(shape)
        op = rng.choice(CMP)
        g.emit("int1", shape, "cmp", f"{{out}} = {{0}} {op} {{1}}", [a.out, b.out])
        return
    if kind == "bitwise":
        same_kind = rng.random() < 0.7
        b = g.operand(shape, lambda d: not d.is_float and (not same_kind or (d.kind == "b") == (da.kind == "b")))
        op = rng.choice(BITWISE)
        g.emit(T.promote(da, T.get(b.dtype)).name, shape, "bitwise", f"{{out}} = {{0}} {op} {{1}}", [a.out, b.out])
        return
    if kind == "scalar":
        lits = ["3", "-2", "7", "1"] if da.is_int or rng.random() < 0.5 else ["2.5", "-0.75", "1e-3"]
        lit = rng.choice(lits)
        if da.kind == "u":
            lit = lit.lstrip("-")
        op = rng.choice(ARITH)
        rd = T.with_scalar(da, "f" if ("." in lit or "e" in lit) else "i")
        tmpl = f"{{out}} = {{0}} {op} {lit}" if rng.random() < 0.5 else f"{{out}} = {lit} {op} {{0}}"
        g.emit(rd.name, shape, "arith_scalar", tmpl, [a.out])
        return
    if kind == "shift":
        b = g.operand(shape, lambda d: d.is_int)
        db = T.get(b.dtype)
        if da.signed != db.signed and rng.random() < 0.8:
            b = g.emit(da.name, shape, "cast", "{out} = {0}.to(tl.%s)" % da.name, [b.out])
            db = da
        r = T.promote(da, db)
        op = rng.choice(["<<", ">>"])
        g.emit(r.name, shape, "shift", f"{{out}} = {{0}} {op} ({{1}} & {r.bits - 1})", [a.out, b.out])
        return
    b = g.operand(shape, lambda d: d.kind != "b")
    db = T.get(b.dtype)
    r = T.promote(da, db)
    if kind == "arith":
        op = rng.choice(ARITH)
        g.emit(r.name, shape, "arith", f"{{out}} = {{0}} {op} {{1}}", [a.out, b.out])
    elif kind == "minmax":
        fn = rng.choice(["minimum", "maximum"])
        nan = rng.choice(["", ", propagate_nan=tl.PropagateNan.ALL"]) if r.is_float else ""
        # maxnum/minnum may return either zero of a +0/-0 tie (PropagateNan.ALL orders -0 below +0)
        zero = " + 0.0" if r.is_float and not nan else ""
        g.emit(r.name, shape, "minmax", f"{{out}} = tl.{fn}({{0}}, {{1}}{nan}){zero}", [a.out, b.out])
    elif r.is_int:
        if da.signed != db.signed:
            raise Skip   # Triton refuses /, // and % on mixed signedness
        guard = "({1} == 0) | ({1} == -1)" if r.signed else "({1} == 0)"
        op, name, lit = ("//", "idiv", 7) if kind == "div" else ("%", "imod", 5)
        g.emit(r.name, shape, name, f"{{out}} = {{0}} {op} tl.where({guard}, {lit}, {{1}})", [a.out, b.out])
    elif kind == "div":
        rr = T.promote(da, db, div_or_mod=True)
        if rr.name == "float32" and rng.random() < 0.5:
            g.emit("float32", shape, "div_rn", "{out} = tl.div_rn({0}.to(tl.float32), {1}.to(tl.float32))",
                   [a.out, b.out])
        else:
            g.emit(rr.name, shape, "fdiv", "{out} = {0} / {1}", [a.out, b.out],
                   tol="exact" if rr.name == "float64" else "fdiv")
    else:
        rr = T.promote(da, db, div_or_mod=True)
        g.emit(rr.name, shape, "fmod", "{out} = {0} % {1}", [a.out, b.out])


def g_unary(g: Gen) -> None:
    rng = g.rng
    shape = g.shape()
    if rng.random() < 0.5:
        a = g.operand(shape, lambda d: d.name in ("float32", "float64"))
        d = T.get(a.dtype)
        fn = rng.choice(list(MATH) + list(EXACT_MATH))
        if fn == "sqrt_rn":
            if d.name != "float32":
                raise Skip
            g.emit(d.name, shape, "sqrt_rn", "{out} = tl.sqrt_rn({0})", [a.out])
        elif fn in EXACT_MATH:
            g.emit(d.name, shape, fn, f"{{out}} = tl.{fn}({{0}})", [a.out])
        else:
            g.emit(d.name, shape, fn, f"{{out}} = tl.{fn}({{0}})", [a.out], tol=MATH[fn])
        return
    a = g.operand(shape)
    d = T.get(a.dtype)
    if d.kind == "b":
        g.emit("int1", shape, "not", "{out} = ~{0}", [a.out])
        return
    op = rng.choice(["-", "abs"] + (["~"] if d.is_int else []))
    if op == "abs":
        g.emit(d.name, shape, "abs", "{out} = tl.abs({0})", [a.out])
    else:
        g.emit(d.name, shape, "neg" if op == "-" else "invert", f"{{out}} = {op}{{0}}", [a.out])


def g_where(g: Gen) -> None:
    shape = g.shape()
    c = g.operand(shape, lambda d: d.kind == "b", fresh=0.1)
    a = g.operand(shape)
    b = g.operand(shape, lambda d: (d.kind == "b") == (T.get(a.dtype).kind == "b"))
    r = T.promote(T.get(a.dtype), T.get(b.dtype))
    g.emit(r.name, shape, "where", "{out} = tl.where({0}, {1}, {2})", [c.out, a.out, b.out])


def convert(g: Gen, a: Stmt, dst: T.DType) -> Stmt:
    """``a`` converted to ``dst`` in a way Triton defines (floats clamped and NaN replaced before an integer)."""
    d = T.get(a.dtype)
    shape = a.shape
    if dst.name == "bfloat16" and d.is_int and d.bits > 16:
        raise Skip   # a known, documented difference (two roundings through fp32 on a backend): tolerance.py
    if d.is_float and dst.kind == "b":
        return g.emit("int1", shape, "cast", "{out} = {0}.to(tl.int1)", [a.out])
    if d.is_float and dst.is_int:
        lo, hi = T.int_range(dst)
        mx = T.finfo(d)[0]
        # the bounds must be exact both in the source type and as a float32 constant (a Python float
        # literal may become one before it is converted)
        hi_f = T.round_down_to(T.get("float32"), T.round_down_to(d, min(float(hi), mx)))
        lo_f = 0.0 if dst.kind == "u" else max(float(lo), -mx)
        return g.emit(dst.name, shape, "f2i",
                      f"{{out}} = tl.where({{0}} == {{0}}, tl.minimum(tl.maximum({{0}}, {lo_f!r}), {hi_f!r}), 0)"
                      f".to(tl.{dst.name})", [a.out])
    if d.is_float and dst.is_float and dst.bits < d.bits and g.rng.random() < 0.5 and d.name != "float16":
        return g.emit(dst.name, shape, "cast_rtz",
                      f"{{out}} = {{0}}.to(tl.{dst.name}, fp_downcast_rounding=\"rtz\")", [a.out])
    return g.emit(dst.name, shape, "cast", f"{{out}} = {{0}}.to(tl.{dst.name})", [a.out])


def g_cast(g: Gen) -> None:
    a = g.operand(g.shape())
    convert(g, a, g.rng.choice(g.dtypes()))


def g_bitcast(g: Gen) -> None:
    rng = g.rng
    shape = g.shape()
    a = g.operand(shape, lambda d: d.kind != "b")
    d = T.get(a.dtype)
    same = [x for x in g.dtypes() if x.bits == d.bits and x.name != d.name and x.kind != "b"]
    if not same:
        raise Skip
    dst = rng.choice(same)
    src = "{0}"
    if d.is_float and not dst.is_float:
        src = "tl.where({0} != {0}, 0.0, {0})"   # NaN payloads are unspecified
    g.emit(dst.name, shape, "bitcast", f"{{out}} = {src}.to(tl.{dst.name}, bitcast=True)", [a.out])
