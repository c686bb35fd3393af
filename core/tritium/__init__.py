"""tritium: the Triton programming model as a plugin-oriented, multi-backend compiler in Python.

``import tritium as triton`` gives a Triton user what they expect: ``jit``, ``autotune``, ``Config``,
``heuristics``, ``cdiv``, ``next_power_of_2``, ``compile``, ``knobs``, ``testing``. Importing this package is
cheap: MLIR, llvmlite, CUDA and torch load only when a kernel is compiled or launched.
"""
from __future__ import annotations

import importlib
from typing import Any

from ._version import __version__  # noqa: E402,F401

from . import knobs  # noqa: E402
from .runtime.jit import JITFunction, KernelInterface, jit, MockTensor, TensorWrapper, reinterpret  # noqa: E402,F401
from .language.core import constexpr_function, must_use_result  # noqa: E402,F401


def cdiv(x: int, y: int) -> int:
    """Ceiling division of two integers."""
    return (x + y - 1) // y


def next_power_of_2(n: int) -> int:
    """The smallest power of 2 that is >= n (1 for n <= 1)."""
    n = int(n)
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


cdiv.__triton_constexpr_function__ = True  # type: ignore[attr-defined]
next_power_of_2.__triton_constexpr_function__ = True  # type: ignore[attr-defined]

_LAZY = {
    "compile": ("tritium.compiler", "compile"),
    "CompilationError": ("tritium.compiler.errors", "CompilationError"),
    "TritonError": ("tritium.errors", "TritonError"),
    "OutOfResources": ("tritium.compiler.errors", "OutOfResources"),
    "UnsafeArgumentError": ("tritium.runtime.safety", "UnsafeArgumentError"),
    "autotune": ("tritium.runtime.autotuner", "autotune"),
    "heuristics": ("tritium.runtime.autotuner", "heuristics"),
    "Config": ("tritium.runtime.autotuner", "Config"),
    "set_allocator": ("tritium.runtime.allocation", "set_allocator"),
    "load_compiled": ("tritium.runtime.aot", "load_compiled"),
    "language": ("tritium.language", None),
    "testing": ("tritium.testing", None),
    "compiler": ("tritium.compiler", None),
    "runtime": ("tritium.runtime", None),
    "backends": ("tritium.backends", None),
    "plugins": ("tritium.plugins", None),
    "tools": ("tritium.tools", None),
}

__all__ = ["jit", "JITFunction", "KernelInterface", "knobs", "cdiv", "next_power_of_2", "constexpr_function",
           "must_use_result", *_LAZY]


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'tritium' has no attribute {name!r}")
    module = importlib.import_module(target[0])
    value = module if target[1] is None else getattr(module, target[1])
    globals()[name] = value
    return value
