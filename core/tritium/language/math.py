"""Elementwise math (``tl.exp``, ``tl.math.sqrt_rn``...). As in Triton, transcendental functions take
fp32 or fp64; other types must be cast explicitly (accelerators rarely have fp16 versions)."""
from __future__ import annotations

from typing import Any

from .core import CompileTimeError, _unwrap, builtin, tensor

F32_F64 = ("fp32", "fp64")


def _check(name: str, args: tuple[Any, ...], dtypes: tuple[str, ...]) -> None:
    for a in args:
        if isinstance(a, tensor) and a.type.scalar.name not in dtypes:
            raise CompileTimeError(f"{name} expects {' or '.join(dtypes)} values, got {a.type.scalar.name}; "
                                   f"cast first, e.g. x.to(tl.float32)")


def _math1(name: str, mlir_op: str, dtypes: tuple[str, ...] = F32_F64, doc: str = ""):
    def fn(x, _semantic=None):
        _check(name, (x, ), dtypes)
        return _semantic.unary_math(mlir_op, _unwrap(x))
    fn.__name__ = name
    fn.__doc__ = doc or f"Elementwise {name}."
    return builtin(fn)


exp = _math1("exp", "math.exp", doc="Elementwise e**x.")
exp2 = _math1("exp2", "math.exp2", doc="Elementwise 2**x.")
log = _math1("log", "math.log", doc="Elementwise natural logarithm.")
log2 = _math1("log2", "math.log2", doc="Elementwise base-2 logarithm.")
cos = _math1("cos", "math.cos")
sin = _math1("sin", "math.sin")
sqrt = _math1("sqrt", "math.sqrt", doc="Elementwise square root (fast, approximate where the target allows).")
rsqrt = _math1("rsqrt", "math.rsqrt", doc="Elementwise 1/sqrt(x).")
erf = _math1("erf", "math.erf", doc="Elementwise error function.")
floor = _math1("floor", "math.floor")
ceil = _math1("ceil", "math.ceil")


@builtin
def sqrt_rn(x, _semantic=None):
    """Square root rounded to nearest (IEEE)."""
    _check("sqrt_rn", (x, ), ("fp32", ))
    return _semantic.precise("precise_sqrt", _unwrap(x))


@builtin
def div_rn(x, y, _semantic=None):
    """x / y rounded to nearest (IEEE)."""
    _check("div_rn", (x, y), ("fp32", ))
    return _semantic.precise("precise_divf", _unwrap(x), _unwrap(y))


@builtin
def fdiv(x, y, ieee_rounding=False, _semantic=None):
    """Floating-point division; with ieee_rounding=False the target may approximate."""
    return _semantic.fdiv(_unwrap(x), _unwrap(y), bool(_unwrap(ieee_rounding)))


@builtin
def abs(x, _semantic=None):
    x = _semantic.to_tensor(_unwrap(x))
    dt = x.dtype
    if dt.is_floating():
        if dt.is_fp8() and not (dt.is_fp8e4b8() or dt.is_fp8e5b16()):
            # clear the sign bit (the NaN codes of these formats have both signs)
            from . import core
            bits = _semantic.bitcast(x, core.uint8)
            return _semantic.bitcast(_semantic.and_(bits, 0x7F), dt)
        return _semantic.unary_math("math.absf", x)
    if dt.is_int_signed():
        return _semantic.unary_math("math.absi", x, float_only=False)
    if dt.is_int():
        return x
    raise CompileTimeError(f"abs does not support {dt}")


@builtin
def fma(x, y, z, _semantic=None):
    """x * y + z with a single rounding."""
    return _semantic.fma(_unwrap(x), _unwrap(y), _unwrap(z))


@builtin
def umulhi(x, y, _semantic=None):
    """The most significant half of the double-width product of two unsigned-interpreted integers."""
    _check("umulhi", (x, y), ("int32", "int64", "uint32", "uint64"))
    return _semantic.umulhi(_unwrap(x), _unwrap(y))


@builtin
def pow(x, y, _semantic=None):
    return _semantic.pow(_unwrap(x), _unwrap(y))
