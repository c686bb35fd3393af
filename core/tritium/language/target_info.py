"""What the kernel is being compiled for, as compile-time values (``tl.target_info``)."""
from __future__ import annotations

from typing import Any

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


@constexpr_function
def has_capability(name: str) -> bool:
    """Whether the active backend declares the capability ``name`` (e.g. "fp64", "fp8", "float-atomics")."""
    try:
        from ..runtime.driver import driver
        driver.active
        backend = driver.backend_name
        from ..backends import backends
        spec = backends()[backend].spec
    except Exception:
        return False
    return spec is not None and name in spec.capabilities
