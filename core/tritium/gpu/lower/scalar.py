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


class ScalarEmitter(portable.ScalarEmitter):
    who = "the GPU lowering"

    def __init__(self, module: Module, target: Any, fp_fusion: bool = True) -> None:
        super().__init__(module, fp_fusion)
        self.target = target
        self.safe_int_div = target.safe_int_div
        mx, mn = target.num_minmax
        self.MINMAX = {**self.MINMAX, "arith.maxnumf": mx, "arith.minnumf": mn}

    def special(self, o: ScalarOp) -> Optional[str]:
        return self.target.math(o.fn, self.module, o.name, o.args, o.t)

    def libm_call(self, fn: Function, base: str, args: list[str], t: str) -> str:
        got = self.target.math(fn, self.module, f"libm.{base}", args, t)
        return got if got is not None else super().libm_call(fn, base, args, t)
