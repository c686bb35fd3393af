"""Scalar instructions for arith, math and elementwise tile ops: :mod:`tritium.llvmir.scalar`'s emitter with the
CPU's math library. The same code serves scalar values and the bodies of the loops that compute tiles, where
LLVM's loop vectorizer turns it into vector code: transcendental functions are this backend's branch-free
``tritium_*`` functions (:mod:`.mathlib`), libdevice's others :mod:`.mathlib_extra`'s, never libm calls, which
would stop the vectorizer."""
from __future__ import annotations

from typing import Optional

from tritium.llvmir import scalar as portable
from tritium.llvmir.scalar import ScalarOp

from .irtext import Function, Module

_F32_LIB = {"math.exp": "expf", "math.exp2": "exp2f", "math.log": "logf", "math.log2": "log2f", "math.sin": "sinf",
            "math.cos": "cosf", "math.erf": "erff", "math.tanh": "tanhf"}
_F64_LIB = {"math.exp": "exp", "math.exp2": "exp2", "math.log": "log", "math.log2": "log2", "math.sin": "sin",
            "math.cos": "cos", "math.erf": "erf", "math.tanh": "tanh"}
# math ops computed by mathlib_extra's libdevice functions
_MATH_EXTRA = {"math.tan": "tan", "math.sinh": "sinh", "math.cosh": "cosh", "math.asin": "asin", "math.acos": "acos",
               "math.atan": "atan", "math.asinh": "asinh", "math.acosh": "acosh", "math.atanh": "atanh",
               "math.erfc": "erfc", "math.cbrt": "cbrt", "math.log10": "log10", "math.log1p": "log1p",
               "math.expm1": "expm1", "math.atan2": "atan2"}
_LD_TYPES = {"float": "f32", "double": "f64"}
# portable ops this backend leaves alone: llvm.exp10 would become a libm call the JIT may not resolve
_NOT_HERE = {"math.exp10"}


class MathLibrary:
    """Collects which of our math functions a module uses; their definitions are added at the end."""

    def __init__(self) -> None:
        self.used: set[str] = set()

    def call(self, fn: Function, name: str, ret: str, args: list[tuple[str, str]]) -> str:
        self.used.add(name)
        return fn.inst(f"call {ret} @{name}({', '.join(f'{t} {v}' for t, v in args)})")

    def ir(self) -> str:
        if not self.used:
            return ""
        from . import mathlib, mathlib_extra
        extra = set(mathlib_extra.function_names())
        texts = []
        base = sorted(n for n in self.used if n not in extra)
        if base:
            texts.append(mathlib.library_ir(base))
        more = sorted(n for n in self.used if n in extra)
        if more:
            texts.append(mathlib_extra.library_ir(more))
        # both may declare the same C function: keep one declaration of each
        seen: set[str] = set()
        lines = []
        for line in "\n".join(texts).splitlines():
            if line.startswith("declare "):
                sym = line.split("@", 1)[1].split("(", 1)[0]
                if sym in seen:
                    continue
                seen.add(sym)
            lines.append(line)
        return "\n".join(lines)

    def externs(self) -> list[str]:
        """C library symbols the used functions call."""
        from . import mathlib_extra
        extra = set(mathlib_extra.function_names())
        return mathlib_extra.externs(n for n in self.used if n in extra)


_INT_OF = {"half": "i16", "bfloat": "i16", "float": "i32", "double": "i64"}


def num_min_max(fn: Function, is_max: bool, t: str, a: str, b: str) -> str:
    """IEEE 754-2019 maximumNumber/minimumNumber of ``a`` and ``b`` (a scalar or vector type ``t``): a NaN operand
    loses to the other one, -0 orders below +0. Written out as compares and selects, not as llvm.maximumnum:
    LLVM 22's x86 lowering of that intrinsic (AVX-512, scalar code) returns the NaN when the other operand is
    known never to be NaN (an integer converted to float), lowering it as if it were llvm.maximum. Not maxnum
    either: LLVM 22's loop vectorizer drops the last iterations of short maxnum/minnum reductions it tail-folds
    (AVX-512: tl.max over 16 rows lost 3; llvm/llvm-project#209159). Selects vectorize everywhere."""
    vec = t.startswith("<")
    elem = t.split(" x ")[1].rstrip(">") if vec else t
    if elem in ("half", "bfloat"):
        # in float, exactly (the result is one of the operands): LLVM 22's x86 lowering of these compares,
        # selects and bit operations on 16-bit float vectors hit an assertion in instruction selection
        # (SelectionDAG: "Shift operators return type must be the same as their first arg")
        wide = t.replace(elem, "float")
        wa, wb = fn.inst(f"fpext {t} {a} to {wide}"), fn.inst(f"fpext {t} {b} to {wide}")
        return fn.inst(f"fptrunc {wide} {num_min_max(fn, is_max, wide, wa, wb)} to {t}")
    it = t.replace(elem, _INT_OF[elem]) if vec else _INT_OF[t]
    ct = t.replace(elem, "i1") if vec else "i1"
    c = fn.inst(f"fcmp {'ogt' if is_max else 'olt'} {t} {a}, {b}")
    m = fn.inst(f"select {ct} {c}, {t} {a}, {t} {b}")          # b when unordered
    b_nan = fn.inst(f"fcmp uno {t} {b}, {b}")
    m = fn.inst(f"select {ct} {b_nan}, {t} {a}, {t} {m}")
    # equal operands differ only as zeros: max's sign bit is set only if both are, min's if either is
    eq = fn.inst(f"fcmp oeq {t} {a}, {b}")
    ia, ib = fn.inst(f"bitcast {t} {a} to {it}"), fn.inst(f"bitcast {t} {b} to {it}")
    bits = fn.inst(f"{'and' if is_max else 'or'} {it} {ia}, {ib}")
    return fn.inst(f"select {ct} {eq}, {t} {fn.inst(f'bitcast {it} {bits} to {t}')}, {t} {m}")


class ScalarEmitter(portable.ScalarEmitter):
    """Emits one elementwise operation on scalar SSA values."""
    who = "the CPU backend"
    # tl.max/tl.min/tl.maximum/tl.clamp ignore a NaN operand (arith.maxnumf/minnumf): see num_min_max
    # x86 traps on division by zero and on INT_MIN / -1; GPUs return garbage. Divide by 1 instead so that
    # masked-off lanes (and bad inputs) never kill the process.
    safe_int_div = True
    # exact; and with AVX512-FP16, LLVM 22 converts a NaN half vector to INT16_MIN, not 0
    widen_half_to_int = True

    def __init__(self, module: Module, math: MathLibrary) -> None:
        super().__init__(module)
        self.math = math

    def special(self, o: ScalarOp) -> Optional[str]:
        name = o.name
        if name in ("arith.maxnumf", "arith.minnumf"):
            return num_min_max(o.fn, name == "arith.maxnumf", o.t, o.args[0], o.args[1])
        if name == "tt.clampf" and not o.attrs.get("propagate_nan"):
            lo = num_min_max(o.fn, True, o.t, o.args[0], o.args[1])
            return num_min_max(o.fn, False, o.t, lo, o.args[2])
        if name in _F32_LIB:
            return self._libm(o.fn, name, o.args[0], o.t)
        if name in _MATH_EXTRA or name == "tt.extern_elementwise":
            return self._extra(o.fn, name, o.args, o.types, o.ret, o.attrs)
        if name == "math.powf":
            return self.call(o.fn, "pow", o.t, o.args)
        return None

    def fpowi(self, o: ScalarOp) -> str:
        # llvm.powi would become a call of compiler-rt's __powisf2, which the JIT does not have
        e = o.fn.inst(f"sitofp {o.types[1]} {o.args[1]} to {o.t}")
        return self.call(o.fn, "pow", o.t, [o.args[0], e])

    def _extra(self, fn: Function, name: str, args: list[str], arg_types: list[str], ret: str, attrs: dict) -> str:
        from .mathlib_extra import libdevice_function
        if name == "tt.extern_elementwise":
            if attrs.get("libname") != "libdevice":
                raise NotImplementedError(f"the CPU backend has no library {attrs.get('libname')!r} for "
                                          f"{attrs.get('symbol')}; use tl.extra.libdevice, whose functions every "
                                          "backend provides")
            sym = attrs["symbol"]
            parts = sym.split("_")
            k = len(arg_types)
            func, types = "_".join(parts[:-k]), parts[-k:]
        else:
            func, types = _MATH_EXTRA[name], [_LD_TYPES[t] for t in arg_types]
        try:
            callee = libdevice_function(func, types)
        except KeyError:
            raise NotImplementedError(f"the CPU backend has no function {attrs.get('symbol', func)!r} in library "
                                      f"{attrs.get('libname', 'libdevice')!r}; use tl.extra.libdevice, whose "
                                      "functions every backend provides") from None
        return self.math.call(fn, callee, ret, list(zip(arg_types, args)))

    def _libm(self, fn: Function, name: str, x: str, t: str) -> str:
        if t in ("half", "bfloat"):
            x32 = fn.inst(f"fpext {t} {x} to float")
            r = self._libm(fn, name, x32, "float")
            return fn.inst(f"fptrunc float {r} to {t}")
        if t == "float":
            return self.math.call(fn, "tritium_" + _F32_LIB[name], "float", [("float", x)])
        return self.math.call(fn, "tritium_" + _F64_LIB[name], "double", [("double", x)])


def is_elementwise(name: str) -> bool:
    return (portable.is_scalar_op(name) and name not in _NOT_HERE) or name == "tt.extern_elementwise"


def expensive(name: str) -> bool:
    """Worth materializing rather than recomputing when a value has several uses."""
    return name in _F32_LIB or name in ("math.powf", "arith.divf", "arith.remf", "math.sqrt", "math.rsqrt",
                                        "arith.divsi", "arith.divui", "arith.remsi", "arith.remui")
