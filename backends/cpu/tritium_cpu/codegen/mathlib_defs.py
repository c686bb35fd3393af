"""The registry the CPU's extra library functions are defined into (:mod:`.mathlib_extra`,
:mod:`.libdevice_special`): each definition's IR text, the functions it calls, the C symbols it needs."""
from __future__ import annotations

import struct
from typing import Callable

_ATTRS = "alwaysinline nounwind"

# name -> (body text builder, functions it calls, C symbols it calls)
_FUNCS: dict[str, tuple[Callable[[], str], tuple[str, ...], tuple[str, ...]]] = {}
C_SYMBOLS: set[str] = set()
_DECLS: dict[str, str] = {}


def _c(name: str, ret: str, *args: str) -> str:
    """Declare the C function ``name`` (used by definitions); returns its IR name."""
    C_SYMBOLS.add(name)
    _DECLS[name] = f"declare {ret} @{name}({', '.join(args)}) nounwind"
    return f"@{name}"


def _def(name: str, ret: str, params: list[tuple[str, str]], body: list[str], calls: tuple[str, ...] = (),
         c_syms: tuple[str, ...] = ()) -> None:
    header = ", ".join(f"{t} {n}" for t, n in params)
    text = "\n".join([f"define internal {ret} @{name}({header}) {_ATTRS} {{", "entry:"] +
                     ["  " + b for b in body] + ["}"])
    _FUNCS[name] = (lambda: text, calls, c_syms)


def _fconst(t: str, v: float) -> str:
    if t == "float":
        v = struct.unpack("<f", struct.pack("<f", v))[0]
    return "0x%016X" % struct.unpack("<Q", struct.pack("<d", v))[0]


def _via_double(name: str, s: str, nargs: int, compute: list[str], calls: tuple = (), c_syms: tuple = ()) -> None:
    """Define ``name`` for float32 (``s="f32"``: widen, compute in double, round) or float64. ``compute`` uses
    %a0, %a1... as double values and leaves the result in %r."""
    t = "float" if s == "f32" else "double"
    params = [(t, f"%x{i}") for i in range(nargs)]
    body = [f"%a{i} = fpext float %x{i} to double" if t == "float" else f"%a{i} = bitcast double %x{i} to double"
            for i in range(nargs)]
    body += compute
    body += ["%v = fptrunc double %r to float", "ret float %v"] if t == "float" else ["ret double %r"]
    _def(name, t, params, body, calls, c_syms)


def _fix_int_param(name: str) -> None:
    """``_via_double`` makes every parameter a float; make the one named %n an i32 (first or second)."""
    make, calls, c_syms = _FUNCS[name]
    text = make()
    text = text.replace("(float %x0)", "(i32 %n, float %x0)" if "_i32_f" in name else "(float %x0, i32 %n)")
    text = text.replace("(double %x0)", "(i32 %n, double %x0)" if "_i32_f" in name else "(double %x0, i32 %n)")
    _FUNCS[name] = (lambda: text, calls, c_syms)
