"""Helpers of the interpreter tests: run a kernel interpreted, compiled, or both."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest


def _copy(a: Any) -> Any:
    if isinstance(a, np.ndarray):
        return a.copy()
    if type(a).__name__ == "TensorWrapper":
        import tritium
        return tritium.reinterpret(a.base.copy(), a.dtype)
    if hasattr(a, "clone"):
        return a.clone()
    return a


def _arrays(args: list) -> list:
    out = []
    for a in args:
        base = a.base if type(a).__name__ == "TensorWrapper" else a
        if isinstance(base, np.ndarray) or hasattr(base, "clone"):
            out.append(np.asarray(base))
    return out


def run(kernel: Any, grid: Any, *args: Any, interpret: bool = True, **kwargs: Any) -> list:
    """Launch on copies of the array arguments; returns those copies (numpy views) after the launch."""
    from tritium import knobs
    copies = [_copy(a) for a in args]
    with knobs.runtime.scope():
        knobs.runtime.interpret = False
        kernel.interpret = interpret
        try:
            kernel[grid](*copies, **kwargs)
        finally:
            kernel.interpret = False
    return _arrays(copies)


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind == "f":
        return bool(np.array_equal(a.view(f"u{a.itemsize}"), b.view(f"u{b.itemsize}")))
    return bool(np.array_equal(a, b))


def assert_same_as_compiled(kernel: Any, grid: Any, *args: Any, **kwargs: Any) -> list:
    """The interpreter's results equal the compiled CPU backend's, bit for bit."""
    compiled = run(kernel, grid, *args, interpret=False, **kwargs)
    interpreted = run(kernel, grid, *args, interpret=True, **kwargs)
    for i, (c, t) in enumerate(zip(compiled, interpreted)):
        if not same_bits(c, t):
            bad = np.flatnonzero(np.ascontiguousarray(c).view(np.uint8) != np.ascontiguousarray(t).view(np.uint8))
            raise AssertionError(f"array argument {i} differs from the compiled backend's in "
                                 f"{bad.size} bytes; compiled {c.ravel()[:8]}, interpreted {t.ravel()[:8]}")
    return interpreted


@pytest.fixture
def kit():
    """The helpers above (test modules cannot import conftest in importlib mode)."""
    import types
    return types.SimpleNamespace(run=run, same_bits=same_bits, assert_same_as_compiled=assert_same_as_compiled)


@pytest.fixture
def interpret():
    """Every launch in the test runs in the interpreter (as with TRITON_INTERPRET=1)."""
    from tritium import knobs
    with knobs.runtime.scope(), knobs.interpreter.scope():
        knobs.runtime.interpret = True
        yield
