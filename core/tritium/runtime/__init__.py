"""Runtime: @jit, launches, drivers, autotuning."""
from .driver import driver  # noqa: F401
# `jit` stays the submodule, as in Triton (`triton.runtime.jit.JITFunction`); the decorator is tritium.jit
from .jit import JITFunction, KernelParam, MockTensor, TensorWrapper, reinterpret  # noqa: F401

_LAZY = {"Autotuner": "autotuner", "Config": "autotuner", "Heuristics": "autotuner", "autotune": "autotuner",
         "heuristics": "autotuner", "OutOfResources": "errors"}


def __getattr__(name: str):
    where = _LAZY.get(name)
    if where == "autotuner":
        from . import autotuner
        return getattr(autotuner, name)
    if where == "errors":
        from ..compiler.errors import OutOfResources
        return OutOfResources
    raise AttributeError(f"module 'tritium.runtime' has no attribute {name!r}")
