"""Tile-level operations of generated kernels: reductions, scans, dots, shape ops, loops, device-function
calls and atomics."""
from __future__ import annotations

from typing import TYPE_CHECKING

from . import types as T
from .program import Sink, Skip, block_shape

if TYPE_CHECKING:
    from .gen import Gen


# -- reductions and scans ---------------------------------------------------------------------------------
COMBINE_INT = {"add": "a + b", "xor": "a ^ b", "max": "tl.maximum(a, b)", "min": "tl.minimum(a, b)",
               "or": "a | b"}
# Triton's max/min of floats (maxnum/minnum) may return either zero of a +0/-0 tie, so a reduction's zero sign
# depends on the order; adding 0.0 turns -0.0 into 0.0 and changes nothing else, so the value stays exact
CANON_ZERO = " + 0.0"
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


def g_reduce(g: Gen, scan: bool = False, shapes: list | None = None) -> None:
    rng = g.rng
    shape = rng.choice(shapes or [("M", "N"), ("M", "N"), ("M",), ("N", "M")])
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
    if fn == "cumprod" and d.is_float:
        if d.name == "float16":
            raise Skip   # 64 factors leave float16's range
        # factors of magnitude 1/2..2: no partial product under- or overflows, so the order of the
        # multiplications changes only the rounding (an underflow in one order and not another is unbounded)
        src = "tl.where(tl.abs({0}) < 0.5, 0.75, tl.minimum(tl.maximum({0}, -2.0), 2.0))"
    if fn == "custom":
        if d.kind == "b":
            raise Skip
        table = COMBINE_INT if d.is_int else COMBINE_FLOAT
        cname = rng.choice(sorted(table))
        h = _helper(g, f"combine_{cname}", f"def combine_{cname}(a, b):\n    return {table[cname]}")
        call = "tl.associative_scan" if scan else "tl.reduce"
        extra = f", reverse={rng.choice(['True', 'False'])}" if scan and rng.random() < 0.3 else ""
        zero = CANON_ZERO if d.is_float else ""
        g.emit(d.name, out_shape, "scan" if scan else "reduce",
               f"{{out}} = {call}({src}, {axis}, {h}{extra}){zero}", [a.out], helpers=(h,))
        return
    r = _reduce_dtype(d, fn)
    inexact = r.is_float and fn in ("sum", "cumsum", "cumprod")
    k = g.blocks.get(shape[axis], 2)
    rev = ", reverse=True" if scan and rng.random() < 0.3 else ""
    call = f"{{out}} = tl.{fn}({{x}}, axis={axis}{rev})" + (CANON_ZERO if r.is_float and fn in ("max", "min") else "")
    tmpl = call.replace("{x}", src)
    if not inexact:
        g.emit(r.name, out_shape, "scan" if scan else "reduce", tmpl, [a.out])
        return
    # the magnitude the error bound scales with: the same reduction over |x|
    mag = g.emit(r.name, out_shape, "aux", call.replace("{x}", f"tl.abs({src})"), [a.out], tol="aux")
    g.emit(r.name, out_shape, fn, tmpl, [a.out], tol="prod" if fn == "cumprod" else "sum", scale=mag.out, k=k)


def g_scan(g: Gen) -> None:
    g_reduce(g, scan=True)


# -- dot ---------------------------------------------------------------------------------------------------
def g_dot(g: Gen) -> None:
    rng = g.rng
    kinds = [k for k in ("fp32", "fp16", "bf16", "int8", "fp64") if f"dot-{k}" in g.features]
    if not kinds or min(g.blocks.values()) < 16:
        raise Skip
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
