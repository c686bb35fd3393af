"""The SSA builder and the registry that :mod:`.mathlib`'s functions are written with.

Writing the functions through a builder (rather than as IR text) keeps the arithmetic readable and lets Python
constants be mixed in: an int or float operand takes the type of the other one. The modules that define functions
(:mod:`.mathlib_f32`, :mod:`.mathlib_sincos`, :mod:`.mathlib_f64`, :mod:`.mathlib_fp8`) register them here with
``_define``; :mod:`.mathlib` renders them on demand.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from functools import partialmethod
from typing import Callable, Iterable, Union

_SUFFIX = {"float": "f32", "double": "f64", "half": "f16", "bfloat": "bf16"}


@dataclass(frozen=True)
class _V:
    ref: str
    ty: str


Operand = Union[_V, int, float]


def _const(ty: str, v: Union[int, float]) -> str:
    if ty == "i1":
        return "true" if v else "false"
    if ty.startswith("i"):
        bits = int(ty[1:])
        iv = int(v) & ((1 << bits) - 1)      # bit patterns such as 0x80000000 are written as signed values
        return str(iv - (1 << bits) if iv >> (bits - 1) else iv)
    fv = float(v)
    if ty == "double":
        return "0x%016X" % struct.unpack("<Q", struct.pack("<d", fv))[0]
    if ty == "float":
        f32 = struct.unpack("<f", struct.pack("<f", fv))[0]
        # a constant that float32 cannot hold is a typo in a coefficient table, never intended
        assert f32 == fv or fv != fv, f"{fv!r} is not a float32 value"
        return "0x%016X" % struct.unpack("<Q", struct.pack("<d", f32))[0]
    raise ValueError(f"no constants of type {ty} are needed")


class _Builder:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.calls: set[str] = set()     # library functions this body calls
        self._n = 0
        self.block = "entry"              # the block being written (for phi operands)

    # -- plumbing ----------------------------------------------------------------------------------
    def _emit(self, ty: str, text: str) -> _V:
        name = f"%t{self._n}"
        self._n += 1
        self.lines.append(f"  {name} = {text}")
        return _V(name, ty)

    def _v(self, x: Operand, ty: str) -> _V:
        return x if isinstance(x, _V) else _V(_const(ty, x), ty)

    def _pair(self, a: Operand, b: Operand) -> tuple[_V, _V]:
        ty = a.ty if isinstance(a, _V) else b.ty
        a, b = self._v(a, ty), self._v(b, ty)
        assert a.ty == b.ty, (a, b)
        return a, b

    def _bin(self, op: str, a: Operand, b: Operand) -> _V:
        a, b = self._pair(a, b)
        return self._emit(a.ty, f"{op} {a.ty} {a.ref}, {b.ref}")

    def const(self, ty: str, v: Union[int, float]) -> _V:
        return _V(_const(ty, v), ty)

    # -- arithmetic --------------------------------------------------------------------------------
    fadd = partialmethod(_bin, "fadd")
    fsub = partialmethod(_bin, "fsub")
    fmul = partialmethod(_bin, "fmul")
    fdiv = partialmethod(_bin, "fdiv")
    add = partialmethod(_bin, "add")
    sub = partialmethod(_bin, "sub")
    mul = partialmethod(_bin, "mul")
    and_ = partialmethod(_bin, "and")
    or_ = partialmethod(_bin, "or")
    xor = partialmethod(_bin, "xor")
    shl = partialmethod(_bin, "shl")
    lshr = partialmethod(_bin, "lshr")
    ashr = partialmethod(_bin, "ashr")

    def fneg(self, a: _V) -> _V:
        return self._emit(a.ty, f"fneg {a.ty} {a.ref}")

    def intrinsic(self, name: str, *args: Operand) -> _V:
        ty = next(a.ty for a in args if isinstance(a, _V))
        vs = [self._v(a, ty) for a in args]
        arglist = ", ".join(f"{v.ty} {v.ref}" for v in vs)
        return self._emit(ty, f"call {ty} @llvm.{name}.{_SUFFIX[ty]}({arglist})")

    fma = partialmethod(intrinsic, "fma")
    rint = partialmethod(intrinsic, "rint")
    fabs = partialmethod(intrinsic, "fabs")
    sqrt = partialmethod(intrinsic, "sqrt")
    copysign = partialmethod(intrinsic, "copysign")

    def horner(self, x: _V, coefs: Iterable[float]) -> _V:
        """c0 + x*(c1 + x*(c2 + ...)), one fma per coefficient."""
        cs = list(coefs)
        acc = self.const(x.ty, cs[-1])
        for c in reversed(cs[:-1]):
            acc = self.fma(acc, x, c)
        return acc

    # -- comparisons and selection -----------------------------------------------------------------
    def fcmp(self, pred: str, a: Operand, b: Operand) -> _V:
        a, b = self._pair(a, b)
        return self._emit("i1", f"fcmp {pred} {a.ty} {a.ref}, {b.ref}")

    def icmp(self, pred: str, a: Operand, b: Operand) -> _V:
        a, b = self._pair(a, b)
        return self._emit("i1", f"icmp {pred} {a.ty} {a.ref}, {b.ref}")

    def select(self, c: _V, a: Operand, b: Operand) -> _V:
        a, b = self._pair(a, b)
        return self._emit(a.ty, f"select i1 {c.ref}, {a.ty} {a.ref}, {b.ty} {b.ref}")

    # -- conversions -------------------------------------------------------------------------------
    def cast(self, op: str, a: _V, ty: str) -> _V:
        return self._emit(ty, f"{op} {a.ty} {a.ref} to {ty}")

    bitcast = partialmethod(cast, "bitcast")
    fptosi = partialmethod(cast, "fptosi")
    sitofp = partialmethod(cast, "sitofp")
    fpext = partialmethod(cast, "fpext")
    fptrunc = partialmethod(cast, "fptrunc")
    zext = partialmethod(cast, "zext")
    trunc = partialmethod(cast, "trunc")

    # -- calls -------------------------------------------------------------------------------------
    def call(self, name: str, *args: _V, attrs: str = "") -> _V:
        """Call another function of this library (which is then emitted too); ``attrs``: call-site
        attributes."""
        self.calls.add(name)
        ret = _FUNCS[name].ret
        arglist = ", ".join(f"{a.ty} {a.ref}" for a in args)
        return self._emit(ret, f"call {ret} @{name}({arglist}){' ' + attrs if attrs else ''}")

    # -- control flow (the float32 functions stay branch-free; see mathlib_trig for the one exception) --
    def label(self, name: str) -> None:
        self.lines.append(f"{name}:")
        self.block = name

    def br(self, target: str) -> None:
        self.lines.append(f"  br label %{target}")

    def cond_br(self, c: _V, if_true: str, if_false: str) -> None:
        self.lines.append(f"  br i1 {c.ref}, label %{if_true}, label %{if_false}")

    def phi(self, *incoming: tuple[_V, str]) -> _V:
        ty = incoming[0][0].ty
        return self._emit(ty, f"phi {ty} " + ", ".join(f"[{v.ref}, %{blk}]" for v, blk in incoming))

    def call_extern(self, name: str, ret: str, *args: _V) -> _V:
        arglist = ", ".join(f"{a.ty} {a.ref}" for a in args)
        return self._emit(ret, f"call {ret} @{name}({arglist})")


# ----------------------------------------------------------------------------------------------------
# The registry
# ----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Fn:
    name: str
    ret: str
    args: tuple[str, ...]
    body: Callable[..., _V]
    externs: tuple[str, ...] = ()   # full `declare` lines of libm symbols it calls
    inline: bool = True
    # IR text emitted along with the function (its vector variants) and the names in it to keep alive
    extra: Callable[[], tuple[str, tuple[str, ...]]] | None = None

    @property
    def attrs(self) -> str:
        # a function calling out to libm must not promise memory(none): libm may set errno
        if self.externs:
            return "alwaysinline nounwind"
        return f"{'alwaysinline' if self.inline else 'noinline'} nounwind willreturn nofree nosync memory(none)"


_FUNCS: dict[str, _Fn] = {}


def _define(name: str, ret: str, args: tuple[str, ...], externs: tuple[str, ...] = (), inline: bool = True,
            extra: Callable[[], tuple[str, tuple[str, ...]]] | None = None):
    def register(body: Callable[..., _V]) -> Callable[..., _V]:
        assert name.startswith("tritium_") and name not in _FUNCS
        _FUNCS[name] = _Fn(name, ret, args, body, externs, inline, extra)
        return body
    return register


def _render(fn: _Fn) -> tuple[str, set[str]]:
    b = _Builder()
    params = [_V(f"%a{i}", t) for i, t in enumerate(fn.args)]
    result = fn.body(b, *params)
    assert result.ty == fn.ret, (fn.name, result.ty)
    header = ", ".join(f"{p.ty} {p.ref}" for p in params)
    text = "\n".join([f"define internal {fn.ret} @{fn.name}({header}) {fn.attrs} {{", "entry:", *b.lines,
                      f"  ret {fn.ret} {result.ref}", "}"])
    return text, b.calls



def _hex(*xs: str) -> tuple[float, ...]:
    return tuple(float.fromhex(x) for x in xs)
