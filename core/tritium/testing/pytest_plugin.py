"""pytest integration: ``--backend=NAME`` selects the backend under test; the ``gpu`` and ``ir`` markers."""
from __future__ import annotations

from typing import Any


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("tritium")
    group.addoption("--backend", action="store", default=None,
                    help="tritium backend to run kernels on (default: the active one)")


def pytest_configure(config: Any) -> None:
    config.addinivalue_line("markers", "gpu: needs a GPU of the backend under test (skips without one)")
    config.addinivalue_line("markers", "ir: needs the MLIR Python bindings")
    config.addinivalue_line("markers", "slow: takes more than a few seconds")
    name = config.getoption("--backend", default=None)
    if name:
        from tritium import knobs
        knobs.runtime.default_backend = name
