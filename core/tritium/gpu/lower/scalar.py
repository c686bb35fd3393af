"""One elementwise operation on scalar SSA values (used per register of a tile, and for scalars).

Portable LLVM IR, except where the target supplies its own code for a math op (fast approximations,
vendor math libraries): :meth:`TargetHooks.math` is asked first.
"""
from __future__ import annotations

from typing import Any, Optional

from ..irtext import Function, Module, const

INT_BIN = {"arith.addi": "add", "arith.subi": "sub", "arith.muli": "mul", "arith.andi": "and", "arith.ori": "or",
           "arith.xori": "xor", "arith.shli": "shl", "arith.shrsi": "ashr", "arith.shrui": "lshr"}
FLT_BIN = {"arith.addf": "fadd", "arith.subf": "fsub", "arith.mulf": "fmul", "arith.divf": "fdiv",
           "arith.remf": "frem", "tt.precise_divf": "fdiv"}
MINMAX = {"arith.maxnumf": "maxnum", "arith.minnumf": "minnum", "arith.maximumf": "maximum",
          "arith.minimumf": "minimum", "arith.maxsi": "smax", "arith.minsi": "smin", "arith.maxui": "umax",
          "arith.minui": "umin"}
CASTS = {"arith.extf": "fpext", "arith.truncf": "fptrunc", "arith.extsi": "sext", "arith.extui": "zext",
         "arith.trunci": "trunc", "arith.sitofp": "sitofp", "arith.uitofp": "uitofp",
         "arith.index_cast": "sext", "arith.index_castui": "zext"}
ICMP = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
FCMP = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult", "ule", "une",
        "uno", "true"]
INTRIN1 = {"math.sqrt": "sqrt", "tt.precise_sqrt": "sqrt", "math.absf": "fabs", "math.floor": "floor",
           "math.ceil": "ceil", "math.round": "round", "math.roundeven": "roundeven", "math.trunc": "trunc",
           "math.exp": "exp", "math.exp2": "exp2", "math.log": "log", "math.log2": "log2", "math.sin": "sin",
           "math.cos": "cos", "math.tan": "tan", "math.log10": "log10", "math.exp10": "exp10"}
LIBM1 = {"math.erf": "erf", "math.tanh": "tanh", "math.atan": "atan", "math.asin": "asin", "math.acos": "acos",
         "math.sinh": "sinh", "math.cosh": "cosh", "math.log1p": "log1p", "math.expm1": "expm1",
         "math.cbrt": "cbrt", "math.asinh": "asinh", "math.acosh": "acosh", "math.atanh": "atanh",
         "math.erfc": "erfc"}
OTHER = {"arith.divsi", "arith.divui", "arith.remsi", "arith.remui", "arith.floordivsi", "arith.ceildivsi",
         "arith.negf", "arith.cmpi", "arith.cmpf", "arith.select", "arith.fptosi", "arith.fptoui", "arith.bitcast",
         "tt.bitcast", "tt.int_to_ptr", "tt.ptr_to_int", "math.rsqrt", "math.absi", "math.fma", "math.powf",
         "tt.mulhiui", "tt.clampf", "math.copysign", "math.atan2", "math.ctlz", "math.cttz", "math.ctpop",
         "math.ipowi", "math.fpowi", "math.isnan", "math.isinf", "math.isfinite"}
SUFFIX = {"half": "f16", "bfloat": "bf16", "float": "f32", "double": "f64", "i1": "i1", "i8": "i8", "i16": "i16",
          "i32": "i32", "i64": "i64"}


def is_scalar_op(name: str) -> bool:
    return (name in FLT_BIN or name in INT_BIN or name in MINMAX or name in CASTS or name in INTRIN1
            or name in LIBM1 or name in OTHER)


#: ops worth keeping rather than recomputing (when a value is needed in another layout)
EXPENSIVE = set(LIBM1) | set(INTRIN1) | {"math.powf", "arith.divf", "arith.remf", "math.rsqrt", "tt.precise_divf",
                                         "math.atan2", "tt.extern_elementwise"}


class ScalarEmitter:
    def __init__(self, module: Module, target: Any, fp_fusion: bool = True) -> None:
        self.module = module
        self.target = target
        # `contract` lets LLVM fuse a*b+c into one rounding (fma); enable_fp_fusion=False promises two roundings
        self.contract = "contract " if fp_fusion else ""

    def emit(self, fn: Function, name: str, args: list[str], arg_types: list[str], ret: str,
             attrs: Optional[dict] = None) -> str:
        attrs = attrs or {}
        t = arg_types[0] if arg_types else ret
        special = self.target.math(fn, self.module, name, args, t)
        if special is not None:
            return special
        m = self.module
        if name in FLT_BIN:
            flags = self.contract if name != "tt.precise_divf" else ""
            return fn.inst(f"{FLT_BIN[name]} {flags}{t} {args[0]}, {args[1]}")
        if name in INT_BIN:
            return fn.inst(f"{INT_BIN[name]} {t} {args[0]}, {args[1]}")
        if name in ("arith.divsi", "arith.divui", "arith.remsi", "arith.remui", "arith.floordivsi",
                    "arith.ceildivsi"):
            return self._int_div(fn, name, args, t)
        if name == "arith.negf":
            return fn.inst(f"fneg {t} {args[0]}")
        if name in MINMAX:
            f = m.intrinsic(f"llvm.{MINMAX[name]}.{SUFFIX[t]}", t, [t, t])
            return fn.inst(f"call {t} {f}({t} {args[0]}, {t} {args[1]})")
        if name == "arith.cmpi":
            return fn.inst(f"icmp {ICMP[attrs['predicate']]} {t} {args[0]}, {args[1]}")
        if name == "arith.cmpf":
            return fn.inst(f"fcmp {FCMP[attrs['predicate']]} {t} {args[0]}, {args[1]}")
        if name == "arith.select":
            return fn.inst(f"select i1 {args[0]}, {arg_types[1]} {args[1]}, {arg_types[1]} {args[2]}")
        if name in CASTS:
            if t == ret:
                return args[0]
            op = CASTS[name]
            if op in ("sext", "zext") and _bits(t) > _bits(ret):
                op = "trunc"
            return fn.inst(f"{op} {t} {args[0]} to {ret}")
        if name in ("arith.fptosi", "arith.fptoui"):
            kind = "fptosi" if name == "arith.fptosi" else "fptoui"
            f = m.intrinsic(f"llvm.{kind}.sat.{SUFFIX[ret]}.{SUFFIX[t]}", ret, [t])
            return fn.inst(f"call {ret} {f}({t} {args[0]})")
        if name in ("arith.bitcast", "tt.bitcast"):
            if t == ret:
                return args[0]
            if t.startswith("ptr") and ret.startswith("ptr"):
                return fn.inst(f"addrspacecast {t} {args[0]} to {ret}")
            return fn.inst(f"bitcast {t} {args[0]} to {ret}")
        if name == "tt.int_to_ptr":
            return fn.inst(f"inttoptr {t} {args[0]} to {ret}")
        if name == "tt.ptr_to_int":
            return fn.inst(f"ptrtoint {t} {args[0]} to {ret}")
        if name in INTRIN1:
            f = m.intrinsic(f"llvm.{INTRIN1[name]}.{SUFFIX[t]}", t, [t])
            return fn.inst(f"call {t} {f}({t} {args[0]})")
        if name in LIBM1:
            return self._libm(fn, LIBM1[name], args, t)
        if name == "math.rsqrt":
            f = m.intrinsic(f"llvm.sqrt.{SUFFIX[t]}", t, [t])
            s = fn.inst(f"call {t} {f}({t} {args[0]})")
            return fn.inst(f"fdiv {t} {const(t, 1.0)}, {s}")
        if name == "math.absi":
            f = m.intrinsic(f"llvm.abs.{SUFFIX[t]}", t, [t, "i1"])
            return fn.inst(f"call {t} {f}({t} {args[0]}, i1 false)")
        if name in ("math.ctlz", "math.cttz"):
            f = m.intrinsic(f"llvm.{name[5:]}.{SUFFIX[t]}", t, [t, "i1"])
            return fn.inst(f"call {t} {f}({t} {args[0]}, i1 false)")
        if name == "math.ctpop":
            f = m.intrinsic(f"llvm.ctpop.{SUFFIX[t]}", t, [t])
            return fn.inst(f"call {t} {f}({t} {args[0]})")
        if name == "math.fma":
            f = m.intrinsic(f"llvm.fma.{SUFFIX[t]}", t, [t, t, t])
            return fn.inst(f"call {t} {f}({t} {args[0]}, {t} {args[1]}, {t} {args[2]})")
        if name == "math.copysign":
            f = m.intrinsic(f"llvm.copysign.{SUFFIX[t]}", t, [t, t])
            return fn.inst(f"call {t} {f}({t} {args[0]}, {t} {args[1]})")
        if name in ("math.powf", "math.atan2"):
            return self._libm(fn, "pow" if name == "math.powf" else "atan2", args, t)
        if name == "math.fpowi":
            special = self.target.math(fn, m, "math.fpowi", args, t)
            if special is not None:
                return special
            it = arg_types[1]
            f = m.intrinsic(f"llvm.powi.{SUFFIX[t]}.{SUFFIX[it]}", t, [t, it])
            return fn.inst(f"call {t} {f}({t} {args[0]}, {it} {args[1]})")
        if name == "math.isnan":
            return fn.inst(f"fcmp uno {t} {args[0]}, {args[0]}")
        if name in ("math.isinf", "math.isfinite"):
            f = m.intrinsic(f"llvm.fabs.{SUFFIX[t]}", t, [t])
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
            nan = attrs.get("propagate_nan", 0)
            lo_n, hi_n = ("maximum", "minimum") if nan else ("maxnum", "minnum")
            lo = m.intrinsic(f"llvm.{lo_n}.{SUFFIX[t]}", t, [t, t])
            hi = m.intrinsic(f"llvm.{hi_n}.{SUFFIX[t]}", t, [t, t])
            x = fn.inst(f"call {t} {lo}({t} {args[0]}, {t} {args[1]})")
            return fn.inst(f"call {t} {hi}({t} {x}, {t} {args[2]})")
        raise NotImplementedError(f"no GPU lowering for {name} on {t}")

    def _libm(self, fn: Function, base: str, args: list[str], t: str) -> str:
        if t in ("half", "bfloat"):
            wide = [fn.inst(f"fpext {t} {a} to float") for a in args]
            r = self._libm(fn, base, wide, "float")
            return fn.inst(f"fptrunc float {r} to {t}")
        special = self.target.math(fn, self.module, f"libm.{base}", args, t)
        if special is not None:
            return special
        name = base + ("f" if t == "float" else "")
        f = self.module.declare(name, f"declare {t} @{name}({', '.join([t] * len(args))})")
        return fn.inst(f"call {t} {f}({', '.join(f'{t} {a}' for a in args)})")

    def _int_div(self, fn: Function, name: str, args: list[str], t: str) -> str:
        a, b = args
        if self.target.safe_int_div:
            zero = fn.inst(f"icmp eq {t} {b}, 0")
            b = fn.inst(f"select i1 {zero}, {t} 1, {t} {b}")
            if name in ("arith.divsi", "arith.remsi", "arith.floordivsi", "arith.ceildivsi"):
                mn = -(1 << (_bits(t) - 1))
                amin = fn.inst(f"icmp eq {t} {a}, {mn}")
                bm1 = fn.inst(f"icmp eq {t} {b}, -1")
                ovf = fn.inst(f"and i1 {amin}, {bm1}")
                b = fn.inst(f"select i1 {ovf}, {t} 1, {t} {b}")
        if name == "arith.floordivsi":
            q = fn.inst(f"sdiv {t} {a}, {b}")
            r = fn.inst(f"srem {t} {a}, {b}")
            nz = fn.inst(f"icmp ne {t} {r}, 0")
            x = fn.inst(f"xor {t} {a}, {b}")
            neg = fn.inst(f"icmp slt {t} {x}, 0")
            adj = fn.inst(f"and i1 {nz}, {neg}")
            d = fn.inst(f"zext i1 {adj} to {t}")
            return fn.inst(f"sub {t} {q}, {d}")
        if name == "arith.ceildivsi":
            q = fn.inst(f"sdiv {t} {a}, {b}")
            r = fn.inst(f"srem {t} {a}, {b}")
            nz = fn.inst(f"icmp ne {t} {r}, 0")
            x = fn.inst(f"xor {t} {a}, {b}")
            pos = fn.inst(f"icmp sge {t} {x}, 0")
            adj = fn.inst(f"and i1 {nz}, {pos}")
            d = fn.inst(f"zext i1 {adj} to {t}")
            return fn.inst(f"add {t} {q}, {d}")
        op = {"arith.divsi": "sdiv", "arith.divui": "udiv", "arith.remsi": "srem", "arith.remui": "urem"}[name]
        return fn.inst(f"{op} {t} {a}, {b}")


def _bits(t: str) -> int:
    if t.startswith("i"):
        return int(t[1:])
    return {"half": 16, "bfloat": 16, "float": 32, "double": 64}.get(t, 64)
