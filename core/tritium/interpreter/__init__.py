"""The interpreter: run ``@jit`` kernels as Python on numpy arrays, with no MLIR or LLVM involved.

Switched on by ``TRITON_INTERPRET=1`` (or ``TRITIUM_INTERPRET=1``, or ``tritium.knobs.runtime.interpret =
True``), or for one kernel by ``kernel.interpret = True``. The kernel's own Python function runs (lightly
rewritten, see :mod:`.rewrite`), so ``breakpoint()`` stops inside it; ``tl.*`` builtins go through the
same type checking as the compiler (:mod:`.semantic`) to a numpy "builder" (:mod:`.builder`), rounding
like the compiled CPU backend does (:mod:`.floats`). Programs of the grid run as batches (:mod:`.programs`);
every load and store is checked against the memory of the argument its pointer came from, or of the live
array a real host address points into (:mod:`.memory`, ``TRITIUM_INTERPRET_BOUNDS_CHECK``).

In a debugger, a kernel tensor's values are ``x.handle.value`` (a numpy array; with a leading axis of
programs when several run as one batch) or ``tritium.interpreter.numpy(x)``.
"""
from __future__ import annotations

from .errors import DeviceAssertionError, OutOfBoundsError  # noqa: F401
from .launcher import run_interpreted  # noqa: F401
from .values import tensor_value as numpy  # noqa: F401

__all__ = ["run_interpreted", "OutOfBoundsError", "DeviceAssertionError", "numpy"]
