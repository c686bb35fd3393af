"""What the kernel is being compiled for, as compile-time values (``tl.target_info``)."""
from __future__ import annotations

import contextlib
import contextvars
from typing import Any, Iterator, Optional

from .core import constexpr_function

__all__ = ["current_target", "has_capability"]


def current_target(_semantic: Any = None) -> Any:
    """The active driver's target (backend name, arch, warp size), or None without an active driver."""
    try:
        from ..runtime.driver import driver
        return driver.active.get_current_target()
    except RuntimeError:
        return None


current_target.__triton_builtin__ = True  # type: ignore[attr-defined]


# The capabilities of the backend compiling the kernel being generated, set by the frontend around code
# generation (compiler/ast_to_ir.py): a kernel compiled for another target than the active driver's (CUDA on a
# CPU host) must be answered for its target. A context variable, not a global: compiles may run in threads.
_compiling: contextvars.ContextVar[Optional[frozenset]] = contextvars.ContextVar("tritium_target_capabilities",
                                                                                default=None)


@contextlib.contextmanager
def compiling_for(capabilities: Optional[frozenset]) -> Iterator[None]:
    """``has_capability`` answers from ``capabilities`` inside this block (the frontend's code generation);
    None: unknown (make_ir called with Triton's five arguments), the active driver answers as before."""
    if capabilities is None:
        yield
        return
    token = _compiling.set(frozenset(capabilities))
    try:
        yield
    finally:
        _compiling.reset(token)


@constexpr_function
def has_capability(name: str) -> bool:
    """Whether the backend compiling the kernel declares the capability ``name`` (e.g. "fp64", "fp8",
    "float-atomics"); outside a compilation (the interpreter, host code), the active backend."""
    compiling = _compiling.get()
    if compiling is not None:
        return name in compiling
    try:
        from ..runtime.driver import driver
        driver.active
        backend = driver.backend_name
        from ..backends import backends
        spec = backends()[backend].spec
    except Exception:
        return False
    return spec is not None and name in spec.capabilities
