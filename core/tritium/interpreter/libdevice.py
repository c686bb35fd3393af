"""``tl.extra.libdevice`` in the interpreter: the math ops it becomes and its ``tt.extern_elementwise`` symbols
(``<function>_<argument types>``), on numpy arrays.

The definitions follow the compiled CPU backend's: float32 functions without a vectorized numpy equivalent are
computed in float64 and rounded once; directed-rounding arithmetic and conversions are exact (rational
arithmetic decides the direction, element by element: they are rare); the functions numpy and Python's math
module lack come from the C library (Bessel functions, through ctypes) or from the same series and Newton
iterations the backend uses.

This module holds the tables and the dispatch (:func:`extern`); the functions are in :mod:`.libdevice_special`
(special functions), :mod:`.libdevice_exact` (directed rounding, conversions, integer functions) and
:mod:`.libdevice_f64` (float64 tanh, cosh, rsqrt to CUDA's 1 ulp, shared with the math ops).
"""
from __future__ import annotations

import ctypes
import math
from typing import Any, Callable

import numpy as np

from . import libdevice_f64
from .elementwise import _f2i
from .libdevice_exact import (_brev, _byte_perm, _directed_op, _double_to_float, _ffs, _hadd, _int_to_float,
                              _mul24, _mulhi, _sad, _to_int)
from .libdevice_special import F64  # noqa: F401  (was defined here)
from .libdevice_special import (_bessel_i, _c, _cbrt, _erfcinv, _erfcx, _erfinv, _exp10, _ilogb, _logb, _norm,
                                _normcdf, _pi_reduced, _rnorm, _round_away, _vec)
from .values import SIGNED, UNSIGNED, as_type, signed, storage, unsigned

# -- float functions computed in float64 (float32 variants round once), by libdevice name -----------------
_F64: dict[str, Callable[..., np.ndarray]] = {
    "tan": np.tan, "sinh": np.sinh, "cosh": libdevice_f64.cosh, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
    "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh, "erfc": _vec(math.erfc), "erf": _vec(math.erf),
    "cbrt": _vec(lambda v: _cbrt(v, False)), "log10": np.log10, "log1p": np.log1p, "expm1": np.expm1, "exp": np.exp, "exp2": np.exp2,
    "log": np.log, "log2": np.log2, "sin": np.sin, "cos": np.cos, "tanh": libdevice_f64.tanh,
    "exp10": _vec(lambda v: _exp10(v)), "fast_exp10f": _vec(lambda v: _exp10(v)),
    "lgamma": _c("lgamma", ctypes.c_double), "tgamma": _c("tgamma", ctypes.c_double),
    "j0": _c("j0", ctypes.c_double), "j1": _c("j1", ctypes.c_double), "y0": _c("y0", ctypes.c_double),
    "y1": _c("y1", ctypes.c_double), "logb": _logb,
    "atan2": np.arctan2, "hypot": np.hypot, "fmod": np.fmod, "remainder": _vec(math.remainder), "pow": np.power,
    "rhypot": lambda a, b: _rnorm((a, b)), "rcbrt": _vec(lambda v: _cbrt(v, True)),
    "norm3d": lambda *v: _norm(v), "rnorm3d": lambda *v: _rnorm(v),
    "norm4d": lambda *v: _norm(v), "rnorm4d": lambda *v: _rnorm(v),
    "sinpi": lambda x: _pi_reduced(x, False), "cospi": lambda x: _pi_reduced(x, True),
    "normcdf": _vec(_normcdf),
    "erfinv": _vec(_erfinv), "erfcinv": _vec(_erfcinv),
    "normcdfinv": lambda p: -1.4142135623730951 * _vec(_erfcinv)(2.0 * p),
    "erfcx": _vec(_erfcx), "cyl_bessel_i0": _vec(lambda v: _bessel_i(0, v)),
    "cyl_bessel_i1": _vec(lambda v: _bessel_i(1, v)),
}
# ... computed in the argument's own type, as compiled
_NATIVE: dict[str, Callable[..., np.ndarray]] = {
    "rsqrt_rn": lambda x: np.asarray(1, x.dtype) / np.sqrt(x), "rcp_rn": lambda x: np.asarray(1, x.dtype) / x,
    "rcp64h": lambda x: np.asarray(1, x.dtype) / x, "nextafter": np.nextafter,
    "fdim": lambda a, b: np.where((a > b) | np.isnan(a) | np.isnan(b), a - b, np.zeros((), a.dtype)),
    "saturatef": lambda x: np.where(x > 0, np.where(x < 1, x, np.asarray(1, x.dtype)), np.zeros((), x.dtype)),
}

# -- dispatch ----------------------------------------------------------------------------------------------

def extern(symbol: str, args: list[np.ndarray], arg_types: list[Any], ret: Any) -> np.ndarray:
    """The result (in ``ret``'s storage dtype) of libdevice variant ``symbol`` on ``args``."""
    codes = symbol.split("_")
    n = len(args)
    name = "_".join(codes[:-n])
    kinds = codes[-n:]
    out_dt = storage(ret)
    a0 = args[0]
    signed_op = kinds[0] in ("i32", "i64")
    if name in _F64:
        wide = [x.astype(np.float64) if x.dtype.kind == "f" else x for x in args]
        return np.asarray(_F64[name](*wide)).astype(out_dt)
    if name in _NATIVE:
        return np.asarray(_NATIVE[name](*args)).astype(out_dt)
    if name in ("jn", "yn"):
        fn = _c(name, ctypes.c_int, ctypes.c_double)
        return fn(signed(args[0]).astype(np.int64), args[1].astype(np.float64)).astype(out_dt)
    if name in ("ldexp", "scalbn"):
        return np.ldexp(a0.astype(np.float64), signed(args[1]).astype(np.int64)).astype(out_dt)
    head, _, mode = name.rpartition("_")
    if mode in ("rz", "rd", "ru") and head in ("add", "sub", "mul", "div", "rcp", "sqrt", "fma"):
        return _directed_op(head, mode, list(args), out_dt)
    if mode in ("rn", "rz", "rd", "ru") and "2" in head:
        src, dst = head.split("2")
        if src in ("float", "double"):
            if dst == "float":
                return _double_to_float(a0.astype(np.float64), mode)
            target = {"int": SIGNED[4], "uint": UNSIGNED[4], "ll": SIGNED[8], "ull": UNSIGNED[8]}[dst]
            return as_type(_to_int(a0.astype(np.float64), mode, target), out_dt)
        value = signed(a0) if src in ("int", "ll") else unsigned(a0)
        return _int_to_float(value, mode, out_dt)
    if name in ("float_as_int", "float_as_uint", "int_as_float", "uint_as_float", "double_as_longlong",
                "longlong_as_double"):
        return a0.view(out_dt) if a0.dtype.itemsize == out_dt.itemsize else a0.astype(out_dt)
    if name == "double2hiint":
        return (a0.astype(np.float64).view(np.uint64) >> np.uint64(32)).astype(np.uint32).view(np.int32)
    if name == "double2loint":
        return a0.astype(np.float64).view(np.uint64).astype(np.uint32).view(np.int32)
    if name == "hiloint2double":
        bits = (unsigned(args[0]).astype(np.uint64) << np.uint64(32)) | unsigned(args[1]).astype(np.uint64)
        return bits.view(np.float64)
    if name in ("llrint", "llround"):
        rounded = np.rint(a0) if name == "llrint" else _round_away(a0)
        return _f2i(rounded, SIGNED[8])
    if name == "signbit":
        return np.signbit(a0).astype(np.int32)
    if name == "ilogb":
        return _ilogb(a0.astype(np.float64))
    if name == "ffs":
        return _ffs(a0)
    if name in ("clz", "popc"):
        bits = a0.dtype.itemsize * 8
        u = unsigned(a0).astype(np.uint64)
        if name == "popc":
            return np.array([bin(int(v)).count("1") for v in u.reshape(-1)], np.int32).reshape(u.shape)
        return np.array([bits - int(v).bit_length() for v in u.reshape(-1)], np.int32).reshape(u.shape)
    if name == "brev":
        return _brev(a0)
    if name == "mulhi":
        return _mulhi(args[0], args[1], signed_op)
    if name == "mul24":
        return _mul24(args[0], args[1], signed_op)
    if name in ("hadd", "rhadd"):
        return _hadd(args[0], args[1], signed_op, 1 if name == "rhadd" else 0)
    if name == "sad":
        return _sad(args[0], args[1], args[2], signed_op)
    if name == "byte_perm":
        return _byte_perm(args[0], args[1], args[2])
    raise NotImplementedError(f"the interpreter has no implementation of libdevice's {symbol}; it is needed by "
                              "this kernel")
