"""Scalar instructions for arith, math and elementwise tile ops. The same code serves scalar values and
the bodies of the loops that compute tiles, where LLVM's loop vectorizer turns it into vector code."""
from __future__ import annotations

from .irtext import Function, Module, const, intrinsic

_INT_BIN = {"arith.addi": "add", "arith.subi": "sub", "arith.muli": "mul", "arith.andi": "and", "arith.ori": "or",
            "arith.xori": "xor", "arith.shli": "shl", "arith.shrsi": "ashr", "arith.shrui": "lshr"}
_FLT_BIN = {"arith.addf": "fadd", "arith.subf": "fsub", "arith.mulf": "fmul", "arith.divf": "fdiv",
            "arith.remf": "frem", "tt.precise_divf": "fdiv"}
# tl.max/tl.min/tl.maximum ignore a NaN operand (arith.maxnumf). LLVM's maximumnum/minimumnum do that too
# (and order -0 below +0, which maxnum leaves open). Not maxnum: LLVM 22's loop vectorizer drops the last
# iterations of a maxnum/minnum reduction (without fast-math flags) whose short constant trip count it folds
# into masked vector iterations (AVX-512: tl.max over 16 rows lost 3; llvm/llvm-project#209159). A
# maximumnum reduction needs no NaN exit and vectorizes correctly at every width.
_MINMAX = {"arith.maxnumf": "maximumnum", "arith.minnumf": "minimumnum", "arith.maximumf": "maximum",
           "arith.minimumf": "minimum", "arith.maxsi": "smax", "arith.minsi": "smin", "arith.maxui": "umax",
           "arith.minui": "umin"}
_CASTS = {"arith.extf": "fpext", "arith.truncf": "fptrunc", "arith.extsi": "sext", "arith.extui": "zext",
          "arith.trunci": "trunc", "arith.sitofp": "sitofp", "arith.uitofp": "uitofp"}
_ICMP = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
_FCMP = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult", "ule", "une",
         "uno", "true"]
_F32_LIB = {"math.exp": "expf", "math.exp2": "exp2f", "math.log": "logf", "math.log2": "log2f", "math.sin": "sinf",
            "math.cos": "cosf", "math.erf": "erff", "math.tanh": "tanhf"}
_F64_LIB = {"math.exp": "exp", "math.exp2": "exp2", "math.log": "log", "math.log2": "log2", "math.sin": "sin",
            "math.cos": "cos", "math.erf": "erf", "math.tanh": "tanh"}
_INTRIN1 = {"math.sqrt": "sqrt", "tt.precise_sqrt": "sqrt", "math.absf": "fabs", "math.floor": "floor",
            "math.ceil": "ceil", "math.round": "round", "math.roundeven": "roundeven", "math.trunc": "trunc"}

# math ops computed by mathlib_extra's libdevice functions
_MATH_EXTRA = {"math.tan": "tan", "math.sinh": "sinh", "math.cosh": "cosh", "math.asin": "asin", "math.acos": "acos",
               "math.atan": "atan", "math.asinh": "asinh", "math.acosh": "acosh", "math.atanh": "atanh",
               "math.erfc": "erfc", "math.cbrt": "cbrt", "math.log10": "log10", "math.log1p": "log1p",
               "math.expm1": "expm1", "math.atan2": "atan2"}
_LD_TYPES = {"float": "f32", "double": "f64"}

_SUFFIX = {"half": "f16", "bfloat": "bf16", "float": "f32", "double": "f64", "i1": "i1", "i8": "i8", "i16": "i16",
           "i32": "i32", "i64": "i64"}


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


def suffix(t: str) -> str:
    return _SUFFIX[t]


class ScalarEmitter:
    """Emits one elementwise operation on scalar SSA values."""

    def __init__(self, module: Module, math: MathLibrary) -> None:
        self.module = module
        self.math = math

    def emit(self, fn: Function, name: str, args: list[str], arg_types: list[str], ret: str, attrs: dict,
             address_mode: bool = False) -> str:
        t = arg_types[0] if arg_types else ret
        if name in _FLT_BIN:
            return fn.inst(f"{_FLT_BIN[name]} {t} {args[0]}, {args[1]}")
        if name in _INT_BIN:
            op = _INT_BIN[name]
            flags = " nsw" if address_mode and op in ("add", "sub", "mul") else ""
            return fn.inst(f"{op}{flags} {t} {args[0]}, {args[1]}")
        if name in ("arith.divsi", "arith.divui", "arith.remsi", "arith.remui", "arith.floordivsi",
                    "arith.ceildivsi"):
            return self._int_div(fn, name, args, t)
        if name == "arith.negf":
            return fn.inst(f"fneg {t} {args[0]}")
        if name in _MINMAX:
            f = intrinsic(self.module, f"llvm.{_MINMAX[name]}.{suffix(t)}", t, [t, t])
            return fn.inst(f"call {t} {f}({t} {args[0]}, {t} {args[1]})")
        if name == "arith.cmpi":
            return fn.inst(f"icmp {_ICMP[attrs['predicate']]} {t} {args[0]}, {args[1]}")
        if name == "arith.cmpf":
            return fn.inst(f"fcmp {_FCMP[attrs['predicate']]} {t} {args[0]}, {args[1]}")
        if name == "arith.select":
            return fn.inst(f"select i1 {args[0]}, {arg_types[1]} {args[1]}, {arg_types[1]} {args[2]}")
        if name in _CASTS:
            if t == ret:
                return args[0]
            return fn.inst(f"{_CASTS[name]} {t} {args[0]} to {ret}")
        if name in ("arith.fptosi", "arith.fptoui"):
            kind = "fptosi" if name == "arith.fptosi" else "fptoui"
            src = args[0]
            if t in ("half", "bfloat"):
                # exact; and with AVX512-FP16, LLVM 22 converts a NaN half vector to INT16_MIN, not 0
                src, t = fn.inst(f"fpext {t} {src} to float"), "float"
            # saturating, like the GPU's cvt.rzi: no poison for out-of-range values or NaN
            f = intrinsic(self.module, f"llvm.{kind}.sat.{suffix(ret)}.{suffix(t)}", ret, [t])
            return fn.inst(f"call {ret} {f}({t} {src})")
        if name == "arith.bitcast" or name == "tt.bitcast":
            if t == ret:
                return args[0]
            return fn.inst(f"bitcast {t} {args[0]} to {ret}")
        if name == "tt.int_to_ptr":
            return fn.inst(f"inttoptr {t} {args[0]} to ptr")
        if name == "tt.ptr_to_int":
            return fn.inst(f"ptrtoint ptr {args[0]} to {ret}")
        if name in _INTRIN1:
            f = intrinsic(self.module, f"llvm.{_INTRIN1[name]}.{suffix(t)}", t, [t])
            return fn.inst(f"call {t} {f}({t} {args[0]})")
        if name == "math.rsqrt":
            f = intrinsic(self.module, f"llvm.sqrt.{suffix(t)}", t, [t])
            s = fn.inst(f"call {t} {f}({t} {args[0]})")
            return fn.inst(f"fdiv {t} {const(t, 1.0)}, {s}")
        if name == "math.absi":
            f = intrinsic(self.module, f"llvm.abs.{suffix(t)}", t, [t, "i1"])
            return fn.inst(f"call {t} {f}({t} {args[0]}, i1 false)")
        if name == "math.fma":
            f = intrinsic(self.module, f"llvm.fma.{suffix(t)}", t, [t, t, t])
            return fn.inst(f"call {t} {f}({t} {args[0]}, {t} {args[1]}, {t} {args[2]})")
        if name == "math.powf":
            f = intrinsic(self.module, f"llvm.pow.{suffix(t)}", t, [t, t])
            return fn.inst(f"call {t} {f}({t} {args[0]}, {t} {args[1]})")
        if name in _F32_LIB:
            return self._libm(fn, name, args[0], t)
        if name in _MATH_EXTRA or name == "tt.extern_elementwise":
            return self._extra(fn, name, args, arg_types, ret, attrs)
        if name == "math.copysign":
            f = intrinsic(self.module, f"llvm.copysign.{suffix(t)}", t, [t, t])
            return fn.inst(f"call {t} {f}({t} {args[0]}, {t} {args[1]})")
        if name == "math.fpowi":
            # llvm.powi would become a call of compiler-rt's __powisf2, which the JIT does not have
            e = fn.inst(f"sitofp {arg_types[1]} {args[1]} to {t}")
            f = intrinsic(self.module, f"llvm.pow.{suffix(t)}", t, [t, t])
            return fn.inst(f"call {t} {f}({t} {args[0]}, {t} {e})")
        if name in ("math.ctlz", "math.cttz"):
            f = intrinsic(self.module, f"llvm.{name[5:]}.{suffix(t)}", t, [t, "i1"])
            return fn.inst(f"call {t} {f}({t} {args[0]}, i1 false)")
        if name == "math.ctpop":
            f = intrinsic(self.module, f"llvm.ctpop.{suffix(t)}", t, [t])
            return fn.inst(f"call {t} {f}({t} {args[0]})")
        if name == "math.isnan":
            return fn.inst(f"fcmp uno {t} {args[0]}, {args[0]}")
        if name in ("math.isinf", "math.isfinite"):
            f = intrinsic(self.module, f"llvm.fabs.{suffix(t)}", t, [t])
            a = fn.inst(f"call {t} {f}({t} {args[0]})")
            pred = "oeq" if name == "math.isinf" else "one"
            return fn.inst(f"fcmp {pred} {t} {a}, {const(t, float('inf'))}")
        if name == "tt.mulhiui":
            wide = "i64" if t == "i32" else "i128"
            bits = 32 if t == "i32" else 64
            a = fn.inst(f"zext {t} {args[0]} to {wide}")
            b = fn.inst(f"zext {t} {args[1]} to {wide}")
            p = fn.inst(f"mul {wide} {a}, {b}")
            h = fn.inst(f"lshr {wide} {p}, {bits}")
            return fn.inst(f"trunc {wide} {h} to {t}")
        if name == "tt.clampf":
            lo = intrinsic(self.module, f"llvm.maximumnum.{suffix(t)}", t, [t, t])   # as tl.maximum (above)
            hi = intrinsic(self.module, f"llvm.minimumnum.{suffix(t)}", t, [t, t])
            if attrs.get("propagate_nan"):
                lo = intrinsic(self.module, f"llvm.maximum.{suffix(t)}", t, [t, t])
                hi = intrinsic(self.module, f"llvm.minimum.{suffix(t)}", t, [t, t])
            m = fn.inst(f"call {t} {lo}({t} {args[0]}, {t} {args[1]})")
            return fn.inst(f"call {t} {hi}({t} {m}, {t} {args[2]})")
        raise NotImplementedError(f"the CPU backend cannot lower {name} on {t}")

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

    def _int_div(self, fn: Function, name: str, args: list[str], t: str) -> str:
        a, b = args
        # x86 traps on division by zero and on INT_MIN / -1; GPUs return garbage. Divide by 1 instead
        # so that masked-off lanes (and bad inputs) never kill the process.
        zero = fn.inst(f"icmp eq {t} {b}, 0")
        bad = zero
        if name in ("arith.divsi", "arith.remsi", "arith.floordivsi", "arith.ceildivsi"):
            bits = int(t[1:])
            mn = -(1 << (bits - 1))
            a_min = fn.inst(f"icmp eq {t} {a}, {mn}")
            b_m1 = fn.inst(f"icmp eq {t} {b}, -1")
            ovf = fn.inst(f"and i1 {a_min}, {b_m1}")
            bad = fn.inst(f"or i1 {zero}, {ovf}")
        safe = fn.inst(f"select i1 {bad}, {t} 1, {t} {b}")
        op = {"arith.divsi": "sdiv", "arith.divui": "udiv", "arith.remsi": "srem", "arith.remui": "urem",
              "arith.floordivsi": "sdiv", "arith.ceildivsi": "sdiv"}[name]
        return fn.inst(f"{op} {t} {a}, {safe}")


def is_elementwise(name: str) -> bool:
    return (name in _FLT_BIN or name in _INT_BIN or name in _MINMAX or name in _CASTS or name in _INTRIN1
            or name in _F32_LIB or name in ("arith.divsi", "arith.divui", "arith.remsi", "arith.remui",
                                            "arith.negf", "arith.cmpi", "arith.cmpf", "arith.select",
                                            "arith.fptosi", "arith.fptoui", "arith.bitcast", "tt.bitcast",
                                            "tt.int_to_ptr", "tt.ptr_to_int", "math.rsqrt", "math.absi",
                                            "math.fma", "math.powf", "tt.mulhiui", "tt.clampf",
                                            "tt.extern_elementwise", "math.copysign", "math.fpowi", "math.ctlz",
                                            "math.cttz", "math.ctpop", "math.isnan", "math.isinf",
                                            "math.isfinite")) or name in _MATH_EXTRA


def expensive(name: str) -> bool:
    """Worth materializing rather than recomputing when a value has several uses."""
    return name in _F32_LIB or name in ("math.powf", "arith.divf", "arith.remf", "math.sqrt", "math.rsqrt",
                                        "arith.divsi", "arith.divui", "arith.remsi", "arith.remui")

