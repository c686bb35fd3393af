"""The repository's examples/ scripts as modules for the PTX tests, each loaded once per process (the tests
compile their kernels with tritium.compile, so a shared module carries no state between them)."""
from __future__ import annotations

import importlib.util
import os
from types import ModuleType

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_loaded: dict[str, ModuleType] = {}


def example(filename: str) -> ModuleType:
    """examples/``filename`` (e.g. "07-fused-attention.py") as a module."""
    if filename not in _loaded:
        spec = importlib.util.spec_from_file_location("example_" + filename[:2], os.path.join(ROOT, "examples",
                                                                                             filename))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        _loaded[filename] = mod
    return _loaded[filename]
