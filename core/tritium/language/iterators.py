"""``tl.range`` and ``tl.static_range``: the loop iterators kernels write in ``for`` statements."""
from __future__ import annotations

from typing import Any

from .core import CompileTimeError, _unwrap, constexpr


class range:  # noqa: A001  (tl.range mirrors Python's)
    """A loop that compiles to ``scf.for``. Keyword arguments are scheduling hints."""

    def __init__(self, arg1: Any, arg2: Any = None, step: Any = None, num_stages: Any = None,
                 loop_unroll_factor: Any = None, disallow_acc_multi_buffer: Any = False, flatten: Any = False,
                 warp_specialize: Any = False, disable_licm: Any = False) -> None:
        if step is None:
            self.step = constexpr(1)
        else:
            self.step = step
        if arg2 is None:
            self.start = constexpr(0)
            self.end = arg1
        else:
            self.start = arg1
            self.end = arg2
        self.num_stages = num_stages
        self.loop_unroll_factor = loop_unroll_factor
        self.disallow_acc_multi_buffer = disallow_acc_multi_buffer
        self.flatten = flatten
        self.warp_specialize = warp_specialize
        self.disable_licm = disable_licm

    def __iter__(self):
        raise RuntimeError("tl.range can only be used in a for loop inside a @jit function")


class static_range:
    """A loop unrolled at compile time; its bounds must be compile-time constants."""

    def __init__(self, arg1: Any, arg2: Any = None, step: Any = None) -> None:
        for a in (arg1, arg2, step):
            if a is not None and not isinstance(_unwrap(a), int):
                raise CompileTimeError("static_range bounds must be compile-time integers (tl.constexpr)")
        if arg2 is None:
            self.start, self.end = constexpr(0), constexpr(arg1)
        else:
            self.start, self.end = constexpr(arg1), constexpr(arg2)
        self.step = constexpr(1 if step is None else step)

    def __iter__(self):
        raise RuntimeError("static_range can only be used in a for loop inside a @jit function")
