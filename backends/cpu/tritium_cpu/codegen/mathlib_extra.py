"""More library functions for CPU kernels: the ``tl.extra.libdevice`` set and conversion helpers.

Same contract as :mod:`.mathlib`: ``function_names()``, ``library_ir(names)`` (internal, always-inline
definitions of exactly those functions plus ``declare`` lines for the C library functions they call) and
``externs(names)`` (those C symbols, which the driver resolves when it loads the object). Function names
start with ``tritium_``. Where float32 code would otherwise only call libm, the float32 function calls the
float64 libm function and rounds (correctly rounded in nearly all cases, and always faithful); the float64
functions call libm directly.
"""
from __future__ import annotations

from typing import Callable, Iterable

# name -> (IR text builder, C symbols it calls)
_FUNCS: dict[str, tuple[Callable[[str], str], tuple[str, ...]]] = {}
_ATTRS = "alwaysinline nounwind"


def _define(name: str, externs: tuple[str, ...] = ()):
    def register(fn: Callable[[str], str]) -> Callable[[str], str]:
        _FUNCS[name] = (fn, externs)
        return fn
    return register


@_define("tritium_f64_to_f32_odd")
def _f64_to_f32_odd(name: str) -> str:
    # round to odd: truncate toward zero, then set the last bit when anything was lost; a second rounding to
    # a type at least two bits narrower is then exactly the correctly rounded result
    return f"""define internal float @{name}(double %x) {_ATTRS} {{
  %f = fptrunc double %x to float
  %back = fpext float %f to double
  %exact = fcmp oeq double %back, %x
  %ax = call double @llvm.fabs.f64(double %x)
  %ab = call double @llvm.fabs.f64(double %back)
  %over = fcmp ogt double %ab, %ax
  %fb = bitcast float %f to i32
  %dec = sub i32 %fb, 1
  %tz = select i1 %over, i32 %dec, i32 %fb
  %odd = or i32 %tz, 1
  %nan = fcmp uno double %x, 0.0
  %keep = or i1 %exact, %nan
  %r = select i1 %keep, i32 %fb, i32 %odd
  %v = bitcast i32 %r to float
  ret float %v
}}"""


def function_names() -> list[str]:
    return sorted(_FUNCS)


def externs(names: Iterable[str]) -> list[str]:
    out: dict[str, None] = {}
    for n in names:
        out.update(dict.fromkeys(_FUNCS[n][1]))
    return list(out)


def library_ir(names: Iterable[str]) -> str:
    names = list(dict.fromkeys(names))
    unknown = [n for n in names if n not in _FUNCS]
    if unknown:
        raise KeyError(f"no extra math function(s) {', '.join(unknown)}")
    return "\n\n".join(_FUNCS[n][0](n) for n in names) + "\n"
