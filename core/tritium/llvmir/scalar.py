"""arith/math ops on scalar SSA values, as LLVM instructions and intrinsics.

One emitter for every backend: the CPU code generator calls it in the bodies of the loops that compute tiles
(LLVM's loop vectorizer turns them into vector code), the GPU lowering once per register of a tile. What
differs between targets is a method to override, never a copy of the table:

- :meth:`ScalarEmitter.special`: the target's own code for an op (fast approximations, a math library), asked
  first for every op;
- :meth:`ScalarEmitter.libm_call`: how a C math function (``erff``, ``pow``) is called;
- :meth:`ScalarEmitter.fpowi`: ``x ** n`` for an integer ``n``;
- ``MINMAX``: the intrinsic of each min/max op; ``safe_int_div``: integer division by 0 (and INT_MIN / -1)
  divides by 1 instead (hosts trap there, GPUs do not); ``widen_half_to_int``: halves pass through float on
  the way to integers.
"""
from __future__ import annotations

from typing import Optional

from ..op_registry import OpTable
from .text import Function, Module
from .types import SUFFIX, bits, const

INT_BIN = {"arith.addi": "add", "arith.subi": "sub", "arith.muli": "mul", "arith.andi": "and", "arith.ori": "or",
           "arith.xori": "xor", "arith.shli": "shl", "arith.shrsi": "ashr", "arith.shrui": "lshr"}
FLT_BIN = {"arith.addf": "fadd", "arith.subf": "fsub", "arith.mulf": "fmul", "arith.divf": "fdiv",
           "arith.remf": "frem", "tt.precise_divf": "fdiv"}
INT_DIV = {"arith.divsi": "sdiv", "arith.divui": "udiv", "arith.remsi": "srem", "arith.remui": "urem",
           "arith.floordivsi": "sdiv", "arith.ceildivsi": "sdiv"}
SIGNED_DIV = ("arith.divsi", "arith.remsi", "arith.floordivsi", "arith.ceildivsi")
MINMAX = {"arith.maxnumf": "maxnum", "arith.minnumf": "minnum", "arith.maximumf": "maximum",
          "arith.minimumf": "minimum", "arith.maxsi": "smax", "arith.minsi": "smin", "arith.maxui": "umax",
          "arith.minui": "umin"}
CASTS = {"arith.extf": "fpext", "arith.truncf": "fptrunc", "arith.extsi": "sext", "arith.extui": "zext",
         "arith.trunci": "trunc", "arith.sitofp": "sitofp", "arith.uitofp": "uitofp",
         "arith.index_cast": "sext", "arith.index_castui": "zext"}
ICMP = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
FCMP = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult", "ule", "une",
        "uno", "true"]
#: ops that are one instruction of a fixed form (``a``: the operands, ``t``: the first one's type)
ONE_INSTRUCTION = {"arith.negf": "fneg {t} {a[0]}", "math.isnan": "fcmp uno {t} {a[0]}, {a[0]}",
                   "tt.int_to_ptr": "inttoptr {t} {a[0]} to {ret}", "tt.ptr_to_int": "ptrtoint {t} {a[0]} to {ret}"}
#: one-operand LLVM intrinsics of the operand's type (llvm.sqrt.f32)
INTRIN1 = {"math.sqrt": "sqrt", "tt.precise_sqrt": "sqrt", "math.absf": "fabs", "math.floor": "floor",
           "math.ceil": "ceil", "math.round": "round", "math.roundeven": "roundeven", "math.trunc": "trunc",
           "math.exp": "exp", "math.exp2": "exp2", "math.log": "log", "math.log2": "log2", "math.sin": "sin",
           "math.cos": "cos", "math.tan": "tan", "math.log10": "log10", "math.exp10": "exp10"}
#: C math functions (erff for float, erf for double): LLVM has no intrinsic for them
LIBM = {"math.erf": "erf", "math.tanh": "tanh", "math.atan": "atan", "math.asin": "asin", "math.acos": "acos",
        "math.sinh": "sinh", "math.cosh": "cosh", "math.log1p": "log1p", "math.expm1": "expm1",
        "math.cbrt": "cbrt", "math.asinh": "asinh", "math.acosh": "acosh", "math.atanh": "atanh",
        "math.erfc": "erfc", "math.powf": "pow", "math.atan2": "atan2"}
#: intrinsics of the operands' type (llvm.fma.f32 takes three)
INTRIN_N = {"math.fma": ("fma", 3), "math.copysign": ("copysign", 2), "math.ctpop": ("ctpop", 1)}
#: intrinsics with an ``i1 false`` flag after the operand (is_zero_poison, is_int_min_poison)
INTRIN_FLAG = {"math.absi": "abs", "math.ctlz": "ctlz", "math.cttz": "cttz"}

#: the ops :class:`ScalarEmitter` lowers, by handler
SCALAR_OPS = OpTable("the scalar LLVM IR emitter")


def is_scalar_op(name: str) -> bool:
    return name in SCALAR_OPS.entries


class ScalarOp:
    """One op to emit: its operands (SSA names) and their LLVM types, the result type, its attributes
    (``predicate``, ``propagate_nan``, ``symbol``, ``libname``); ``t`` is the first operand's type."""
    __slots__ = ("fn", "name", "args", "types", "ret", "attrs", "address", "t")

    def __init__(self, fn: Function, name: str, args: list[str], types: list[str], ret: str, attrs: dict,
                 address: bool) -> None:
        self.fn, self.name, self.args, self.types, self.ret, self.attrs, self.address = \
            fn, name, args, types, ret, attrs, address
        self.t = types[0] if types else ret


class ScalarEmitter:
    #: who lowers, for error messages
    who = "this backend"
    MINMAX = MINMAX
    safe_int_div = False
    widen_half_to_int = False

    def __init__(self, module: Module, fp_fusion: bool = False) -> None:
        self.module = module
        # `contract` lets LLVM fuse a*b+c into one rounding (fma); without it every op rounds
        self.contract = "contract " if fp_fusion else ""
        self._rules = SCALAR_OPS.bind(self)

    def emit(self, fn: Function, name: str, args: list[str], arg_types: list[str], ret: str,
             attrs: Optional[dict] = None, address_mode: bool = False) -> str:
        """The SSA value of op ``name`` on ``args``. ``address_mode``: integer arithmetic of addresses, which
        cannot overflow (``nsw``)."""
        o = ScalarOp(fn, name, args, arg_types, ret, attrs or {}, address_mode)
        got = self.special(o)
        if got is not None:
            return got
        rule = self._rules.get(name)
        if rule is None:
            raise NotImplementedError(f"{self.who} cannot lower {name} on {o.t}")
        return rule(o)

    # -- hooks -----------------------------------------------------------------------------------------------
    def special(self, o: ScalarOp) -> Optional[str]:
        """The target's own code for ``o``, or None for the portable lowering below."""
        return None

    def libm_call(self, fn: Function, base: str, args: list[str], t: str) -> str:
        """Call C's ``base`` (``t`` is float or double: ``erff`` / ``erf``)."""
        name = base + ("f" if t == "float" else "")
        f = self.module.declare(name, f"declare {t} @{name}({', '.join([t] * len(args))})")
        return fn.inst(f"call {t} {f}({', '.join(f'{t} {a}' for a in args)})")

    @SCALAR_OPS.lowers("math.fpowi")
    def fpowi(self, o: ScalarOp) -> str:
        t, it = o.t, o.types[1]
        f = self.module.intrinsic(f"llvm.powi.{SUFFIX[t]}.{SUFFIX[it]}", t, [t, it])
        return o.fn.inst(f"call {t} {f}({t} {o.args[0]}, {it} {o.args[1]})")

    # -- helpers ---------------------------------------------------------------------------------------------
    def call(self, fn: Function, intrinsic: str, t: str, args: list[str], extra: str = "") -> str:
        """``llvm.<intrinsic>.<t>`` on ``args`` of type ``t`` (``extra``: trailing operands, typed)."""
        arg_types = [t] * len(args) + ([extra.split()[0]] if extra else [])
        f = self.module.intrinsic(f"llvm.{intrinsic}.{SUFFIX[t]}", t, arg_types)
        ops = ", ".join([f"{t} {a}" for a in args] + ([extra] if extra else []))
        return fn.inst(f"call {t} {f}({ops})")

    def libm(self, fn: Function, base: str, args: list[str], t: str) -> str:
        if t in ("half", "bfloat"):
            wide = [fn.inst(f"fpext {t} {a} to float") for a in args]
            return fn.inst(f"fptrunc float {self.libm(fn, base, wide, 'float')} to {t}")
        return self.libm_call(fn, base, args, t)

    # -- arithmetic ------------------------------------------------------------------------------------------
    @SCALAR_OPS.lowers(*FLT_BIN)
    def float_binary(self, o: ScalarOp) -> str:
        # libdevice's *_rn ops and IEEE division round alone: never contracted into an fma
        flags = "" if o.name == "tt.precise_divf" or o.attrs.get("rounded_alone") else self.contract
        return o.fn.inst(f"{FLT_BIN[o.name]} {flags}{o.t} {o.args[0]}, {o.args[1]}")

    @SCALAR_OPS.lowers(*ONE_INSTRUCTION)
    def one_instruction(self, o: ScalarOp) -> str:
        return o.fn.inst(ONE_INSTRUCTION[o.name].format(t=o.t, ret=o.ret, a=o.args))

    @SCALAR_OPS.lowers(*INT_BIN)
    def int_binary(self, o: ScalarOp) -> str:
        op = INT_BIN[o.name]
        flags = " nsw" if o.address and op in ("add", "sub", "mul") else ""
        return o.fn.inst(f"{op}{flags} {o.t} {o.args[0]}, {o.args[1]}")

    @SCALAR_OPS.lowers(*INT_DIV)
    def int_div(self, o: ScalarOp) -> str:
        fn, t, name = o.fn, o.t, o.name
        a, b = o.args
        if self.safe_int_div:
            bad = fn.inst(f"icmp eq {t} {b}, 0")
            if name in SIGNED_DIV:
                a_min = fn.inst(f"icmp eq {t} {a}, {-(1 << (bits(t) - 1))}")
                b_m1 = fn.inst(f"icmp eq {t} {b}, -1")
                ovf = fn.inst(f"and i1 {a_min}, {b_m1}")
                bad = fn.inst(f"or i1 {bad}, {ovf}")
            b = fn.inst(f"select i1 {bad}, {t} 1, {t} {b}")
        q = fn.inst(f"{INT_DIV[name]} {t} {a}, {b}")
        if name not in ("arith.floordivsi", "arith.ceildivsi"):
            return q
        # round the truncated quotient down (floor) or up (ceil) when there is a remainder and the signs differ
        # (floor) or agree (ceil)
        r = fn.inst(f"srem {t} {a}, {b}")
        nz = fn.inst(f"icmp ne {t} {r}, 0")
        x = fn.inst(f"xor {t} {a}, {b}")
        floor = name == "arith.floordivsi"
        sign = fn.inst(f"icmp {'slt' if floor else 'sge'} {t} {x}, 0")
        adj = fn.inst(f"and i1 {nz}, {sign}")
        d = fn.inst(f"zext i1 {adj} to {t}")
        return fn.inst(f"{'sub' if floor else 'add'} {t} {q}, {d}")

    @SCALAR_OPS.lowers(*MINMAX)
    def min_max(self, o: ScalarOp) -> str:
        return self.call(o.fn, self.MINMAX[o.name], o.t, o.args)

    @SCALAR_OPS.lowers("tt.clampf")
    def clampf(self, o: ScalarOp) -> str:
        if o.attrs.get("propagate_nan"):
            lo, hi = "maximum", "minimum"
        else:
            lo, hi = self.MINMAX["arith.maxnumf"], self.MINMAX["arith.minnumf"]
        m = self.call(o.fn, lo, o.t, o.args[:2])
        return self.call(o.fn, hi, o.t, [m, o.args[2]])

    @SCALAR_OPS.lowers("tt.mulhiui")
    def mulhiui(self, o: ScalarOp) -> str:
        fn, t = o.fn, o.t
        wide, n = ("i64", 32) if t == "i32" else ("i128", 64)
        a = fn.inst(f"zext {t} {o.args[0]} to {wide}")
        b = fn.inst(f"zext {t} {o.args[1]} to {wide}")
        p = fn.inst(f"mul {wide} {a}, {b}")
        h = fn.inst(f"lshr {wide} {p}, {n}")
        return fn.inst(f"trunc {wide} {h} to {t}")

    # -- comparisons and selection ---------------------------------------------------------------------------
    @SCALAR_OPS.lowers("arith.cmpi")
    def cmpi(self, o: ScalarOp) -> str:
        return o.fn.inst(f"icmp {ICMP[o.attrs['predicate']]} {o.t} {o.args[0]}, {o.args[1]}")

    @SCALAR_OPS.lowers("arith.cmpf")
    def cmpf(self, o: ScalarOp) -> str:
        return o.fn.inst(f"fcmp {FCMP[o.attrs['predicate']]} {o.t} {o.args[0]}, {o.args[1]}")

    @SCALAR_OPS.lowers("arith.select")
    def select(self, o: ScalarOp) -> str:
        vt = o.types[1]
        return o.fn.inst(f"select i1 {o.args[0]}, {vt} {o.args[1]}, {vt} {o.args[2]}")

    @SCALAR_OPS.lowers("math.isinf", "math.isfinite")
    def isinf(self, o: ScalarOp) -> str:
        a = self.call(o.fn, "fabs", o.t, o.args[:1])
        pred = "oeq" if o.name == "math.isinf" else "one"
        return o.fn.inst(f"fcmp {pred} {o.t} {a}, {const(o.t, float('inf'))}")

    # -- conversions -----------------------------------------------------------------------------------------
    @SCALAR_OPS.lowers(*CASTS)
    def cast(self, o: ScalarOp) -> str:
        t, ret = o.t, o.ret
        if t == ret:
            return o.args[0]
        op = CASTS[o.name]
        if op in ("sext", "zext") and bits(t) > bits(ret):    # index casts also narrow
            op = "trunc"
        return o.fn.inst(f"{op} {t} {o.args[0]} to {ret}")

    @SCALAR_OPS.lowers("arith.fptosi", "arith.fptoui")
    def fp_to_int(self, o: ScalarOp) -> str:
        kind = "fptosi" if o.name == "arith.fptosi" else "fptoui"
        src, t = o.args[0], o.t
        if self.widen_half_to_int and t in ("half", "bfloat"):
            src, t = o.fn.inst(f"fpext {t} {src} to float"), "float"
        # saturating, like the GPU's cvt.rzi: no poison for out-of-range values or NaN
        f = self.module.intrinsic(f"llvm.{kind}.sat.{SUFFIX[o.ret]}.{SUFFIX[t]}", o.ret, [t])
        return o.fn.inst(f"call {o.ret} {f}({t} {src})")

    @SCALAR_OPS.lowers("arith.bitcast", "tt.bitcast")
    def bitcast(self, o: ScalarOp) -> str:
        t, ret = o.t, o.ret
        if t == ret:
            return o.args[0]
        if t.startswith("ptr") and ret.startswith("ptr"):
            return o.fn.inst(f"addrspacecast {t} {o.args[0]} to {ret}")
        return o.fn.inst(f"bitcast {t} {o.args[0]} to {ret}")

    # -- math ------------------------------------------------------------------------------------------------
    @SCALAR_OPS.lowers(*INTRIN1)
    def intrinsic1(self, o: ScalarOp) -> str:
        return self.call(o.fn, INTRIN1[o.name], o.t, o.args[:1])

    @SCALAR_OPS.lowers(*INTRIN_N)
    def intrinsic_n(self, o: ScalarOp) -> str:
        base, n = INTRIN_N[o.name]
        return self.call(o.fn, base, o.t, o.args[:n])

    @SCALAR_OPS.lowers(*INTRIN_FLAG)
    def intrinsic_flag(self, o: ScalarOp) -> str:
        return self.call(o.fn, INTRIN_FLAG[o.name], o.t, o.args[:1], "i1 false")

    @SCALAR_OPS.lowers("math.rsqrt")
    def rsqrt(self, o: ScalarOp) -> str:
        fn, x = o.fn, o.args[0]
        s = self.call(fn, "sqrt", o.t, [x])
        y = fn.inst(f"fdiv {o.t} {const(o.t, 1.0)}, {s}")
        if o.t != "double":
            return y        # float32: two roundings stay within the 2 ulp documented for rsqrtf
        # In double, 1 / sqrt(x) rounds twice (up to 1.4 ulp; CUDA documents 1): one Newton step on the residual
        # 1 - x y^2, computed exactly enough with fmas (x y first, so that nothing overflows for subnormal x),
        # leaves ~0.5 ulp. Zeros, infinities, negative numbers and NaN keep 1 / sqrt(x)'s answer.
        def fma(a: str, b: str, c: str) -> str:
            return self.call(fn, "fma", "double", [a, b, c])
        t = fn.inst(f"fmul double {x}, {y}")
        t_err = fma(x, y, fn.inst(f"fneg double {t}"))
        e = fma(fn.inst(f"fneg double {t}"), y, const("double", 1.0))
        e = fma(fn.inst(f"fneg double {t_err}"), y, e)
        r = fma(fn.inst(f"fmul double {y}, {const('double', 0.5)}"), e, y)
        pos = fn.inst(f"fcmp ogt double {x}, {const('double', 0.0)}")
        fin = fn.inst(f"fcmp olt double {x}, {const('double', float('inf'))}")
        ok = fn.inst(f"and i1 {pos}, {fin}")
        return fn.inst(f"select i1 {ok}, double {r}, double {y}")

    @SCALAR_OPS.lowers(*LIBM)
    def libm_op(self, o: ScalarOp) -> str:
        return self.libm(o.fn, LIBM[o.name], o.args, o.t)

