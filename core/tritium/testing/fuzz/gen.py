"""Random, well-formed kernels (:class:`~.program.Program`), the same for the same seed.

Every operation is one Triton defines for its operands: integer division and remainder never see 0 (nor -1
for signed types, whose MIN / -1 overflows), shift amounts are masked below the width, floats are clamped
into the target's range (NaN replaced) before a cast to an integer, NaN never reaches argmax/argmin (whose
answer would depend on the order of comparisons) nor a float-to-int bitcast (NaN payloads are unspecified).
A value whose last bits Triton leaves open (transcendental functions, fp32 division, float sums, dots; see
``tolerance.TABLE``) is stored, never computed on further: an error bound cannot follow it through a chain.
"""
from __future__ import annotations

import random
from typing import Callable, Optional

from . import types as T
from .program import Program, Sink, Stmt, block_shape

DEFAULT_FEATURES = frozenset({"fp64", "dot-fp32", "dot-fp16", "dot-bf16", "dot-int8", "dot-fp64", "int64-atomics",
                              "float-atomics", "ieee", "tf32", "tf32x3"})
MATH = {"exp": "ulp_exp", "exp2": "ulp_exp", "log": "ulp_log", "log2": "ulp_log", "sin": "ulp_trig",
        "cos": "ulp_trig", "sqrt": "ulp_sqrt", "rsqrt": "ulp_rsqrt", "erf": "ulp_erf"}
EXACT_MATH = ("floor", "ceil", "abs", "sqrt_rn")


class Gen:
    def __init__(self, seed: int, features: frozenset = DEFAULT_FEATURES, small: bool = False,
                 max_stmts: int = 10) -> None:
        self.rng = random.Random(seed)
        self.seed = seed
        self.features = features
        self.small = small
        self.max_stmts = max_stmts
        self.stmts: list[Stmt] = []
        self.helpers: dict[str, str] = {}
        self.n = 0
        self.used: set[str] = set()

    # -- helpers -------------------------------------------------------------------------------------
    def var(self) -> str:
        self.n += 1
        return f"v{self.n}"

    def dtypes(self) -> list:
        out = list(T.ALL)
        if "fp64" not in self.features:
            out = [d for d in out if d.name != "float64"]
        return out

    def pick(self, pred: Callable[[Stmt], bool]) -> Optional[Stmt]:
        pool = [s for s in self.stmts if s.tol == "exact" and pred(s)]
        if not pool:
            return None
        # prefer recent values so chains get deep
        w = [1 + i for i in range(len(pool))]
        return self.rng.choices(pool, w)[0]

    def add(self, s: Stmt) -> Stmt:
        self.stmts.append(s)
        self.used.update(s.args)
        return s

    def emit(self, dtype: str, shape: tuple, op: str, tmpl: str, args: list, **kw) -> Stmt:
        return self.add(Stmt(self.var(), dtype, shape, op, tmpl, list(args), **kw))

    def load(self, shape: tuple, d: Optional[T.DType] = None) -> Stmt:
        d = d or self.rng.choice(self.dtypes())
        if d.kind == "b":
            other = self.rng.choice(["0", "1"])
        elif d.is_int:
            other = self.rng.choice(["0", "1", "-1" if d.signed else "3"])
        else:
            other = self.rng.choice(["0.0", "1.5", "-0.0", "-2.5"])
        s = Stmt(self.var(), d.name, shape, "load", other)
        mask_var = None
        if self.rng.random() < 0.15:
            mask_var = self.pick(lambda x: x.dtype == "int1" and x.shape == shape)
        if mask_var is not None:
            s.args = [mask_var.out]
            s.tmpl = other
        return self.add(s)

    def operand(self, shape: tuple, pred: Callable[[T.DType], bool] = lambda d: True, fresh: float = 0.25) -> Stmt:
        s = None
        if self.rng.random() > fresh:
            s = self.pick(lambda x: x.shape == shape and pred(T.get(x.dtype)))
        if s is None:
            choices = [d for d in self.dtypes() if pred(d)]
            s = self.load(shape, self.rng.choice(choices))
        return s

    def shape(self) -> tuple:
        return self.rng.choice([("M", "N")] * 4 + [("M",), ("N",), ("N", "M")])

    # -- the kernel -----------------------------------------------------------------------------------
    def program(self) -> Program:
        p = Program(self.seed, self.stmts, self.sinks(), self.helpers, self.blocks, self.valid, grid=self.grid,
                    input_seed=self.rng.randrange(1 << 30))
        return p.live()

    def choose_blocks(self, has_dot: bool) -> None:
        rng = self.rng
        sizes = [16, 32] if self.small else [16, 32, 64]
        tiny = [1, 2, 4, 8, 16]
        self.blocks = {d: rng.choice(sizes if (has_dot or rng.random() < 0.7) else tiny) for d in "MNK"}
        self.valid = {d: (b if rng.random() < 0.5 else rng.randint(1, b)) for d, b in self.blocks.items()}
        self.grid = rng.choice([1, 1, 2, 3])

    def sinks(self) -> list:
        out = []
        st = {s.out: s for s in self.stmts}
        for s in self.stmts:
            if s.tol != "exact":
                out.append(Sink(s.out))
                if s.scale:
                    out.append(Sink(s.scale, kind="aux"))
        leaves = [s for s in self.stmts if s.out not in self.used and s.tol == "exact" and s.op != "load"]
        if not leaves:
            leaves = [s for s in self.stmts if s.tol == "exact" and s.op != "load"][-1:]
        for s in leaves:
            k = Sink(s.out)
            if self.rng.random() < 0.2 and s.shape:
                m = self.pick(lambda x: x.dtype == "int1" and x.shape == s.shape)
                k.mask = m.out if m is not None else None
            out.append(k)
        for s in self.atomics:
            out.append(s)
        seen, uniq = set(), []
        for k in out:
            if k.var not in seen and k.var in st:
                seen.add(k.var)
                uniq.append(k)
        return uniq

    def generate(self) -> Program:
        rng = self.rng
        ops = list(OPS)
        weights = [OPS[o][1] for o in ops]
        plan = rng.choices(ops, weights, k=rng.randint(2, self.max_stmts))
        self.choose_blocks("dot" in plan)
        self.atomics: list[Sink] = []
        for _ in range(rng.randint(1, 2)):
            self.load(self.shape())
        for op in plan:
            try:
                OPS[op][0](self)
            except _Skip:
                pass
        return self.program()


class _Skip(Exception):
    pass


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
        g.emit(r.name, shape, "minmax", f"{{out}} = tl.{fn}({{0}}, {{1}}{nan})", [a.out, b.out])
    elif r.is_int:
        if da.signed != db.signed:
            raise _Skip   # Triton refuses /, // and % on mixed signedness
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
    a = g.operand(shape)
    d = T.get(a.dtype)
    if d.is_float and rng.random() < 0.6:
        if d.name not in ("float32", "float64"):
            raise _Skip
        fn = rng.choice(list(MATH) + list(EXACT_MATH))
        if fn == "sqrt_rn":
            if d.name != "float32":
                raise _Skip
            g.emit(d.name, shape, "sqrt_rn", "{out} = tl.sqrt_rn({0})", [a.out])
        elif fn in EXACT_MATH:
            g.emit(d.name, shape, fn, f"{{out}} = tl.{fn}({{0}})", [a.out])
        else:
            g.emit(d.name, shape, fn, f"{{out}} = tl.{fn}({{0}})", [a.out], tol=MATH[fn])
        return
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


def g_cast(g: Gen) -> None:
    rng = g.rng
    shape = g.shape()
    a = g.operand(shape)
    d = T.get(a.dtype)
    dst = rng.choice(g.dtypes())
    if dst.name == "bfloat16" and d.is_int and d.bits > 16:
        raise _Skip   # known, documented: the CPU backend converts wide integers to bf16 through fp32
    if d.is_float and dst.is_int:
        lo, hi = T.int_range(dst)
        mx = T.finfo(d)[0]
        # the bounds must be exact both in the source type and as a float32 constant (a Python float
        # literal may become one before it is converted)
        hi_f = T.round_down_to(T.get("float32"), T.round_down_to(d, min(float(hi), mx)))
        lo_f = 0.0 if dst.kind == "u" else max(float(lo), -mx)
        if dst.kind == "b":
            g.emit("int1", shape, "cast", "{out} = {0}.to(tl.int1)", [a.out])
            return
        g.emit(dst.name, shape, "f2i",
               f"{{out}} = tl.where({{0}} == {{0}}, tl.minimum(tl.maximum({{0}}, {lo_f!r}), {hi_f!r}), 0)"
               f".to(tl.{dst.name})", [a.out])
        return
    if d.is_float and dst.is_float and dst.bits < d.bits and rng.random() < 0.5 and d.name != "float16":
        g.emit(dst.name, shape, "cast_rtz", f"{{out}} = {{0}}.to(tl.{dst.name}, fp_downcast_rounding=\"rtz\")",
               [a.out])
        return
    g.emit(dst.name, shape, "cast", f"{{out}} = {{0}}.to(tl.{dst.name})", [a.out])


def g_bitcast(g: Gen) -> None:
    rng = g.rng
    shape = g.shape()
    a = g.operand(shape, lambda d: d.kind != "b")
    d = T.get(a.dtype)
    same = [x for x in g.dtypes() if x.bits == d.bits and x.name != d.name and x.kind != "b"]
    if not same:
        raise _Skip
    dst = rng.choice(same)
    src = "{0}"
    if d.is_float and not dst.is_float:
        src = "tl.where({0} != {0}, 0.0, {0})"   # NaN payloads are unspecified
    g.emit(dst.name, shape, "bitcast", f"{{out}} = {src}.to(tl.{dst.name}, bitcast=True)", [a.out])


# -- reductions and scans ---------------------------------------------------------------------------------
COMBINE_INT = {"add": "a + b", "xor": "a ^ b", "max": "tl.maximum(a, b)", "min": "tl.minimum(a, b)",
               "or": "a | b"}
COMBINE_FLOAT = {"max": "tl.maximum(a, b)", "min": "tl.minimum(a, b)"}


def _helper(g: Gen, name: str, src: str) -> str:
    g.helpers[name] = src
    return name


def _reduce_dtype(d: T.DType, fn: str) -> T.DType:
    if fn in ("sum", "cumsum"):
        if d.is_int or d.kind == "b":
            if d.bits < 32:
                return T.get("uint32" if d.kind == "u" else "int32")
        if d.name == "bfloat16" and fn == "cumsum":
            return T.get("float32")
        return d
    if fn in ("max", "min"):
        if d.name == "bfloat16" or (d.bits < 32):
            return T.get("float32" if d.is_float else "int32")
        return d
    if fn == "cumprod":
        return T.get("float32") if d.name == "bfloat16" else d
    if fn in ("argmax", "argmin"):
        return T.get("int32")
    return d


def g_reduce(g: Gen, scan: bool = False) -> None:
    rng = g.rng
    shape = rng.choice([("M", "N"), ("M", "N"), ("M",), ("N", "M")])
    a = g.operand(shape, lambda d: d.kind != "b" or not scan)
    d = T.get(a.dtype)
    axis = rng.randrange(len(shape))
    out_shape = shape if scan else tuple(x for i, x in enumerate(shape) if i != axis)
    if scan:
        fns = ["cumsum", "cumprod", "custom"]
    else:
        fns = ["sum", "max", "min", "argmax", "argmin", "custom"] + (["xor_sum"] if d.is_int else [])
    fn = rng.choice(fns)
    src = "{0}"
    if fn in ("argmax", "argmin") and d.is_float:
        src = "tl.where({0} != {0}, 0.0, {0})"
    if fn == "custom":
        if d.kind == "b":
            raise _Skip
        table = COMBINE_INT if d.is_int else COMBINE_FLOAT
        cname = rng.choice(sorted(table))
        h = _helper(g, f"combine_{cname}", f"def combine_{cname}(a, b):\n    return {table[cname]}")
        call = "tl.associative_scan" if scan else "tl.reduce"
        extra = f", reverse={rng.choice(['True', 'False'])}" if scan and rng.random() < 0.3 else ""
        g.emit(d.name, out_shape, "scan" if scan else "reduce", f"{{out}} = {call}({src}, {axis}, {h}{extra})",
               [a.out], helpers=(h,))
        return
    r = _reduce_dtype(d, fn)
    inexact = r.is_float and fn in ("sum", "cumsum", "cumprod")
    k = g.blocks.get(shape[axis], 2)
    if scan:
        rev = ", reverse=True" if rng.random() < 0.3 else ""
        tmpl = f"{{out}} = tl.{fn}({src}, axis={axis}{rev})"
    else:
        tmpl = f"{{out}} = tl.{fn}({src}, axis={axis})"
    if not inexact:
        g.emit(r.name, out_shape, "scan" if scan else "reduce", tmpl, [a.out])
        return
    # the magnitude the error bound scales with: the same reduction over |x|
    mag = g.emit(r.name, out_shape, "aux", tmpl.replace("({0}", "(tl.abs({0})"), [a.out], tol="aux")
    g.emit(r.name, out_shape, fn, tmpl, [a.out], tol="prod" if fn == "cumprod" else "sum", scale=mag.out, k=k)


def g_scan(g: Gen) -> None:
    g_reduce(g, scan=True)


# -- dot ---------------------------------------------------------------------------------------------------
def g_dot(g: Gen) -> None:
    rng = g.rng
    kinds = [k for k in ("fp32", "fp16", "bf16", "int8", "fp64") if f"dot-{k}" in g.features]
    if not kinds or min(g.blocks.values()) < 16:
        raise _Skip
    k = rng.choice(kinds)
    dt = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "int8": "int8", "fp64": "float64"}[k]
    a = g.operand(("M", "K"), lambda d: d.name == dt, fresh=0.5)
    b = g.operand(("K", "N"), lambda d: d.name == dt, fresh=0.5)
    prec = ""
    tol = "dot_ieee"
    if k == "fp32":
        precs = [p for p in ("ieee", "tf32", "tf32x3") if p in g.features] or ["ieee"]
        p = rng.choice(precs)
        prec = f', input_precision="{p}"'
        tol = f"dot_{p}"
    out = {"int8": "int32", "fp64": "float64"}.get(k, "float32")
    if k == "int8":
        g.emit("int32", ("M", "N"), "dot", "{out} = tl.dot({0}, {1})", [a.out, b.out])
        return
    acc = ""
    args = [a.out, b.out]
    if rng.random() < 0.3:
        c = g.operand(("M", "N"), lambda d: d.name == out, fresh=1.0)
        args.append(c.out)
        acc = ", {2}"
    absacc = ", tl.abs({2})" if acc else ""
    mag = g.emit(out, ("M", "N"), "aux", f"{{out}} = tl.dot(tl.abs({{0}}), tl.abs({{1}}){absacc}{prec})", args,
                 tol="aux")
    g.emit(out, ("M", "N"), "dot", f"{{out}} = tl.dot({{0}}, {{1}}{acc}{prec})", args, tol=tol, scale=mag.out,
           k=g.blocks["K"] + (1 if acc else 0))


# -- shapes ------------------------------------------------------------------------------------------------
def g_shape(g: Gen) -> None:
    rng = g.rng
    kind = rng.choice(["broadcast", "expand", "trans", "permute", "reshape", "join_split", "join_permute"])
    if kind in ("broadcast", "expand"):
        src_dim = rng.choice(["M", "N"])
        a = g.operand((src_dim,))
        other = "N" if src_dim == "M" else "M"
        if kind == "broadcast":
            g.emit(a.dtype, (src_dim, other), "broadcast",
                   f"{{out}} = tl.broadcast_to({{0}}[:, None], {block_shape((src_dim, other))})", [a.out])
        else:
            g.emit(a.dtype, (other, src_dim), "expand_dims",
                   f"{{out}} = tl.broadcast_to(tl.expand_dims({{0}}, 0), {block_shape((other, src_dim))})", [a.out])
    elif kind in ("trans", "permute"):
        shape = rng.choice([("M", "N"), ("N", "M")])
        a = g.operand(shape)
        fn = "tl.trans({0})" if kind == "trans" else rng.choice(["tl.permute({0}, (1, 0))", "{0}.T"])
        g.emit(a.dtype, shape[::-1], kind, "{out} = " + fn, [a.out])
    elif kind == "reshape":
        a = g.operand(("M", "N"))
        # through one flat axis and back: the element order must survive both reshapes
        g.emit(a.dtype, ("M", "N"), "reshape",
               "{out} = tl.reshape(tl.reshape({0}, (BM * BN,)), (BM, BN))", [a.out])
    else:
        shape = rng.choice([("M", "N"), ("M",)])
        a = g.operand(shape)
        b = g.operand(shape, lambda d: d.name == a.dtype, fresh=0.5)
        j = g.emit(a.dtype, shape + ("2",), "join", "{out} = tl.join({0}, {1})", [a.out, b.out])
        if kind == "join_permute" and len(shape) == 2:
            g.emit(a.dtype, ("2", "N", "M"), "permute", "{out} = tl.permute({0}, (2, 1, 0))", [j.out])
            return
        which = rng.randrange(2)
        g.emit(a.dtype, shape, "split",
               "{out}, _{out} = tl.split({0})" if which == 0 else "_{out}, {out} = tl.split({0})", [j.out])


# -- control flow and calls ----------------------------------------------------------------------------
def g_loop(g: Gen) -> None:
    rng = g.rng
    shape = g.shape()
    a = g.operand(shape, lambda d: d.kind != "b")
    x = g.operand(shape, lambda d: d.name == a.dtype, fresh=0.4)
    d = T.get(a.dtype)
    trips = rng.randint(0, 5)
    if d.is_int:
        body = rng.choice(["({out} * 3 + {1} + i{out}).to(tl.%s)", "({out} ^ ({1} >> 1)) + 1",
                           "tl.maximum({out}, {1} - i{out}).to(tl.%s)"])
    else:
        body = rng.choice(["tl.maximum({out}, {1} - i{out}).to(tl.%s)", "tl.where({1} > {out}, {1}, {out} * 0.5)",
                           "({out} * 0.5 + {1}).to(tl.%s)"])
    body = body.replace("%s", d.name)
    if rng.random() < 0.6:
        start = rng.choice(["0", "1"])
        step = rng.choice(["", ", 1", ", 2"])
        head = f"for i{{out}} in tl.range({start}, {start} + {trips}{step}):"
        tmpl = f"{{out}} = {{0}}\n{head}\n    {{out}} = {body}"
    else:
        tmpl = (f"{{out}} = {{0}}\ni{{out}} = 0\nwhile i{{out}} < {trips}:\n    {{out}} = {body}\n"
                f"    i{{out}} += 1")
    g.emit(a.dtype, shape, "loop", tmpl, [a.out, x.out])


DEVICE_FNS = {
    "lin": ("def dev_lin(a, b, C: tl.constexpr):\n    return a * C + b", lambda d: d.kind != "b"),
    "sel": ("def dev_sel(a, b, C: tl.constexpr):\n    if C > 1:\n        return tl.where(a > b, a, b)\n"
            "    return tl.where(a < b, a, b)", lambda d: True),
    "shl": ("def dev_shl(a, b, C: tl.constexpr):\n    return (a ^ b) << C", lambda d: d.is_int),
}


def g_call(g: Gen) -> None:
    rng = g.rng
    name = rng.choice(sorted(DEVICE_FNS))
    src, ok = DEVICE_FNS[name]
    shape = g.shape()
    a = g.operand(shape, ok)
    b = g.operand(shape, lambda d: d.name == a.dtype, fresh=0.5)
    c = rng.randint(1, 3)
    _helper(g, f"dev_{name}", src)
    g.emit(a.dtype, shape, "call", f"{{out}} = dev_{name}({{0}}, {{1}}, {c})", [a.out, b.out], helpers=(f"dev_{name}",))


# -- atomics -----------------------------------------------------------------------------------------------
def g_atomic(g: Gen) -> None:
    rng = g.rng
    # (atomic_cas takes no mask, so it cannot skip a masked tail: not generated)
    fn = rng.choice(["atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or", "atomic_xor",
                     "atomic_xchg"])
    ok = {"int32", "uint32"}
    if "int64-atomics" in g.features:
        ok |= {"int64", "uint64"}
    if "float-atomics" in g.features and fn in ("atomic_add", "atomic_xchg"):
        ok |= {"float32"} | ({"float64"} if "fp64" in g.features else set())
    shape = rng.choice([("M", "N"), ("M",)])
    a = g.operand(shape, lambda d: d.name in ok, fresh=0.6)
    g.atomics.append(Sink(a.out, kind="atomic", atomic=fn))
    g.used.add(a.out)


OPS = {
    "binary": (g_binary, 10), "unary": (g_unary, 4), "where": (g_where, 3), "cast": (g_cast, 4),
    "bitcast": (g_bitcast, 1), "reduce": (g_reduce, 4), "scan": (g_scan, 2), "dot": (g_dot, 2),
    "shape": (g_shape, 3), "loop": (g_loop, 2), "call": (g_call, 2), "atomic": (g_atomic, 1),
}


def generate(seed: int, features: frozenset = DEFAULT_FEATURES, small: bool = False) -> Program:
    """The kernel of ``seed`` for targets offering ``features`` (capability names, dot input precisions)."""
    return Gen(seed, features, small).generate()
