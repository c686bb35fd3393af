"""float64 functions for :mod:`.mathlib`."""
from __future__ import annotations

from .mathlib_ir import _Builder, _define, _V

# ----------------------------------------------------------------------------------------------------
# float64: libm. LLVM intrinsics where they exist (LLVM lowers them to the libm call and the text needs no
# declaration); erf has none.
# ----------------------------------------------------------------------------------------------------

def _libm64(name: str, intrinsic: str = "", symbol: str = "") -> None:
    # written exactly as mathlib_extra writes its declarations, so that a module combining both libraries
    # can drop duplicate lines (LLVM rejects a function declared twice)
    externs = (f"declare double @{symbol}(double) nounwind",) if symbol else ()

    @_define(f"tritium_{name}", "double", ("double",), externs=externs)
    def body(b: _Builder, x: _V) -> _V:
        if intrinsic:
            return b.intrinsic(intrinsic, x)
        return b.call_extern(symbol, "double", x)


for _n in ("exp", "exp2", "log", "log2", "sin", "cos", "tanh"):
    _libm64(_n, intrinsic=_n)
_libm64("erf", symbol="erf")

# The C functions the library's code may end up calling, for whoever loads the object
C_SYMBOLS = frozenset({"exp", "exp2", "log", "log2", "sin", "cos", "tanh", "erf"})

