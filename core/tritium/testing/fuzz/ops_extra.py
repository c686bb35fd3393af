"""Operations earlier sessions' kernels never held (session 20): reductions and scans of 3-D tiles (over every
axis, the leading one included), tl.sort, tl.gather, tl.flip, tl.cat into a reduction, tl.histogram (masked and
not), tl.where with a broadcast condition, tl.umulhi.

Each keeps the generator's rule that a compared value is exact: NaN and the sign of zero are made canonical where
the order of comparisons would decide them (sorting NaN, or a +0/-0 tie), an index into a tile is masked below
its (power of two) extent, and histogram bins are masked below the bin count.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from . import types as T
from .ops_tiles import _reduce_dtype, g_reduce

if TYPE_CHECKING:
    from .gen import Gen

#: 3-D tiles: the trailing "2" as tl.join makes it, the leading one as a permute of a join makes it
SHAPES_3D = [("M", "N", "2"), ("2", "N", "M"), ("2", "M")]


def _canon(d: T.DType) -> str:
    """Source of ``{0}`` with NaN replaced and -0.0 turned to +0.0, for floats: a sort or a max/min tie may then
    order lanes in any way and still give the same values."""
    return "(tl.where({0} != {0}, 0.0, {0}) + 0.0)" if d.is_float else "{0}"


def g_reduce3(g: Gen) -> None:
    g_reduce(g, scan=g.rng.random() < 0.3, shapes=SHAPES_3D)


def g_sort(g: Gen) -> None:
    rng = g.rng
    shape = rng.choice([("M", "N"), ("M",), ("N", "M")])
    a = g.operand(shape, lambda d: d.kind != "b")
    d = T.get(a.dtype)
    desc = rng.choice(["", ", descending=True"])
    g.emit(d.name, shape, "sort", f"{{out}} = tl.sort({_canon(d)}{desc})", [a.out])


def g_gather(g: Gen) -> None:
    rng = g.rng
    shape = rng.choice([("M", "N"), ("M",), ("N", "M")])
    axis = rng.randrange(len(shape))
    src = g.operand(shape)
    idx = g.operand(shape, lambda d: d.is_int)
    ext = {"M": "BM", "N": "BN"}[shape[axis]]
    g.emit(src.dtype, shape, "gather", f"{{out}} = tl.gather({{0}}, {{1}}.to(tl.int32) & ({ext} - 1), {axis})",
           [src.out, idx.out])


def g_flip(g: Gen) -> None:
    rng = g.rng
    shape = rng.choice([("M", "N"), ("M",), ("M", "N", "2")])
    a = g.operand(shape)
    dim = rng.choice(["", *(f", {i}" for i in range(len(shape)))])
    g.emit(a.dtype, shape, "flip", f"{{out}} = tl.flip({{0}}{dim})", [a.out])


def g_cat(g: Gen) -> None:
    # can_reorder=True leaves the order of the result open: only an order-blind reduction may read it
    rng = g.rng
    a = g.operand(("M",), lambda d: d.kind != "b")
    b = g.operand(("M",), lambda d: d.name == a.dtype, fresh=0.5)
    d = T.get(a.dtype)
    fns = ["max", "min"] + (["sum", "xor_sum"] if d.is_int else [])
    fn = rng.choice(fns)
    r = _reduce_dtype(d, fn)
    zero = " + 0.0" if d.is_float else ""
    g.emit(r.name, (), "cat", f"{{out}} = tl.{fn}(tl.cat({{0}}, {{1}}, can_reorder=True), axis=0){zero}",
           [a.out, b.out])


def g_histogram(g: Gen) -> None:
    rng = g.rng
    a = g.operand(("M",), lambda d: d.is_int)
    mask = rng.choice(["", ", mask=rM < vM"])
    g.emit("int32", ("N",), "histogram", f"{{out}} = tl.histogram({{0}}.to(tl.int32) & (BN - 1), BN{mask})",
           [a.out])


def g_where_bcast(g: Gen) -> None:
    rng = g.rng
    row = rng.random() < 0.5
    c = g.operand(("M",) if row else ("N",), lambda d: d.kind == "b", fresh=0.3)
    a = g.operand(("M", "N"))
    cond = "{0}[:, None]" if row else "{0}[None, :]"
    if rng.random() < 0.4:
        # a scalar other side: the where broadcasts both its condition and one value
        d = T.get(a.dtype)
        lit = "1" if d.kind == "b" else ("-3" if d.signed else ("7" if d.is_int else "-0.5"))
        if d.kind == "b":
            g.emit("int1", ("M", "N"), "where_bcast", f"{{out}} = tl.where({cond}, {{1}}, {{1}} == 0)",
                   [c.out, a.out])
            return
        r = T.with_scalar(d, "f" if "." in lit else "i")
        g.emit(r.name, ("M", "N"), "where_bcast", f"{{out}} = tl.where({cond}, {{1}}, {lit})", [c.out, a.out])
        return
    b = g.operand(("M", "N"), lambda d: (d.kind == "b") == (T.get(a.dtype).kind == "b"))
    r = T.promote(T.get(a.dtype), T.get(b.dtype))
    g.emit(r.name, ("M", "N"), "where_bcast", f"{{out}} = tl.where({cond}, {{1}}, {{2}})", [c.out, a.out, b.out])


def g_umulhi(g: Gen) -> None:
    shape = g.shape()
    ok = {"int32", "uint32", "int64", "uint64"}
    a = g.operand(shape, lambda d: d.name in ok)
    b = g.operand(shape, lambda d: d.name == a.dtype, fresh=0.5)
    g.emit(a.dtype, shape, "umulhi", "{out} = tl.umulhi({0}, {1})", [a.out, b.out])


KINDS = {"reduce3": g_reduce3, "sort": g_sort, "gather": g_gather, "flip": g_flip, "cat": g_cat,
         "histogram": g_histogram, "where_bcast": g_where_bcast, "umulhi": g_umulhi}


def g_extra(g: Gen) -> None:
    KINDS[g.rng.choice(sorted(KINDS))](g)
