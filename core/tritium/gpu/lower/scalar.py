"""One elementwise operation on scalar SSA values (used per register of a tile, and for scalars):
:mod:`tritium.llvmir.scalar`'s portable LLVM IR, except where the target supplies its own code for a math op
(fast approximations, vendor math libraries): :meth:`TargetHooks.math` is asked first."""
from __future__ import annotations

from typing import Any, Optional

from ...llvmir import scalar as portable
from ...llvmir.scalar import ScalarOp, is_scalar_op
from ...llvmir.text import Function, Module

__all__ = ["EXPENSIVE", "ScalarEmitter", "is_scalar_op"]

#: ops worth keeping rather than recomputing (when a value is needed in another layout)
EXPENSIVE = set(portable.LIBM) | set(portable.INTRIN1) | {"arith.divf", "arith.remf", "math.rsqrt",
                                                          "tt.precise_divf", "tt.extern_elementwise"}


_INT_OF = {"half": "i16", "bfloat": "i16", "float": "i32", "double": "i64"}


class ScalarEmitter(portable.ScalarEmitter):
    who = "the GPU lowering"

    def __init__(self, module: Module, target: Any, fp_fusion: bool = True) -> None:
        super().__init__(module, fp_fusion)
        self.target = target
        self.safe_int_div = target.safe_int_div

    def special(self, o: ScalarOp) -> Optional[str]:
        if self.target.minmax_zero_sign_open and o.t in _INT_OF and (
                o.name in ("arith.maxnumf", "arith.minnumf") or (o.name == "tt.clampf"
                                                                 and not o.attrs.get("propagate_nan"))):
            return self.ordered_min_max(o)
        return self.target.math(o.fn, self.module, o.name, o.args, o.t)

    def ordered_min_max(self, o: ScalarOp) -> str:
        """NaN-ignoring max/min (maxnum/minnum) whose equal inputs give the larger/smaller bits: max(-0.0, +0.0) is
        +0.0 and min is -0.0. (Not llvm.maximumnum: LLVM 22's x86 lowering of it returns the NaN when the other
        operand is known not to be one, e.g. converted from an integer.)"""
        fn, t = o.fn, o.t

        def one(name: str, a: str, b: str) -> str:
            m = self.call(fn, self.MINMAX[name], t, [a, b])
            eq = fn.inst(f"fcmp oeq {t} {a}, {b}")
            ia, ib = fn.inst(f"bitcast {t} {a} to {_INT_OF[t]}"), fn.inst(f"bitcast {t} {b} to {_INT_OF[t]}")
            bits = fn.inst(f"{'and' if name == 'arith.maxnumf' else 'or'} {_INT_OF[t]} {ia}, {ib}")
            return fn.inst(f"select i1 {eq}, {t} {fn.inst(f'bitcast {_INT_OF[t]} {bits} to {t}')}, {t} {m}")

        if o.name == "tt.clampf":
            return one("arith.minnumf", one("arith.maxnumf", o.args[0], o.args[1]), o.args[2])
        return one(o.name, o.args[0], o.args[1])

    def libm_call(self, fn: Function, base: str, args: list[str], t: str) -> str:
        got = self.target.math(fn, self.module, f"libm.{base}", args, t)
        return got if got is not None else super().libm_call(fn, base, args, t)
