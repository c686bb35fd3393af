"""``triton.language.extra.cpu.libdevice``: the libdevice module of Triton's CPU backend (triton-cpu).

Code written for a CPU Triton (FlagGems' CPU vendor, for one) imports this module rather than
``tl.extra.libdevice``. It differs from the CUDA set in one way that such code relies on: triton-cpu builds its
elementary functions (erf, exp, tanh...) as typed math ops for any float type, and its lowering computes a
16-bit float one in fp32 and rounds the result back (``ConvertUnsupportedOps``, promoteLibMathToFp32). Those
functions follow that rule here; everything else is tritium's libdevice set unchanged (triton-cpu's extern
functions, ceil/pow/fmod, take fp32/fp64 only, as in the CUDA set), so this module is a superset of triton-cpu's.
"""
from __future__ import annotations

from ... import core
from ...core import _unwrap, builtin
from .. import libdevice as _libdevice
from ..libdevice import *  # noqa: F401,F403

# triton-cpu's libdevice functions that are math ops on any float type
PROMOTED = ("acos", "acosh", "asin", "asinh", "atan", "atanh", "cbrt", "cos", "cosh", "erf", "exp", "exp2",
            "expm1", "floor", "log", "log2", "log10", "log1p", "sin", "rsqrt", "sqrt", "sinh", "tan", "tanh",
            "trunc")
# ... and its float tests, which answer for any float type (widening keeps NaN and infinity)
TESTS = ("isnan", "isinf")
_NARROW = (core.float16, core.bfloat16)


def _make(name: str, rounds_back: bool):
    def fn(x, _semantic=None):
        x = _semantic.to_tensor(_unwrap(x))
        narrow = x.dtype in _NARROW
        y = _libdevice._dispatch(name, (_semantic.cast(x, core.float32) if narrow else x, ), _semantic)
        return _semantic.cast(y, x.dtype) if narrow and rounds_back else y
    fn.__name__ = name
    fn.__doc__ = (f"libdevice {name} on any float type; fp16/bf16 "
                  + ("computed in fp32 and rounded back (as triton-cpu)." if rounds_back else "widened to fp32."))
    return builtin(fn)


for _name in PROMOTED + TESTS:
    globals()[_name] = _make(_name, _name in PROMOTED)
del _name

__all__ = sorted(_libdevice.__all__)
