"""Runtime: @jit, launches, drivers, autotuning."""
from .driver import driver  # noqa: F401
from .jit import JITFunction, KernelParam, jit  # noqa: F401
from ..compiler.errors import OutOfResources  # noqa: F401


def __getattr__(name: str):
    if name in ("Autotuner", "Config", "Heuristics", "autotune", "heuristics"):
        from . import autotuner
        return getattr(autotuner, name)
    raise AttributeError(name)
