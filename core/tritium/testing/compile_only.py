"""Pytest hooks for running a suite of kernel tests only to compile its kernels (a backend's compile-only mode):
a test passes when every kernel it launched compiled, whatever its checks then say about outputs that were never
computed; an exception raised while compiling still fails it. A backend's plugin module calls :func:`hooks` with
the source paths of its compiler and binds the two results to pytest's hook names."""
from __future__ import annotations

from typing import Any, Callable

import pytest

#: core's compiling code, for every backend
CORE_COMPILING = ("tritium/compiler/", "tritium/gpu/", "tritium/passes/", "llvmlite/")


def _unused_repr(excinfo: Any) -> str:
    return "a check of results a compile-only run never computed"


def hooks(compiling: tuple[str, ...], enabled: Callable[[], bool], usage: str) -> tuple[Callable, Callable]:
    """``(pytest_configure, pytest_runtest_makereport)`` for a compile-only run: ``compiling`` are path parts of
    the backend's compiling code (added to :data:`CORE_COMPILING`), ``enabled()`` says whether the backend's
    compile-only knob is on, ``usage`` is the error shown when it is not."""
    parts = CORE_COMPILING + compiling

    def raised_while_compiling(excinfo: Any) -> bool:
        return any(any(part in str(entry.path).replace("\\", "/") for part in parts) for entry in excinfo.traceback)

    def pytest_configure(config: Any) -> None:
        if not enabled():
            raise pytest.UsageError(usage)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(item: Any, call: Any) -> Any:
        unchecked = call.when == "call" and call.excinfo is not None and not raised_while_compiling(call.excinfo)
        if unchecked:
            # its failure report is thrown away below: do not format one (pytest's long traceback reads and
            # parses every frame's source; most tests of a compile-only run fail their checks, and this was ~11%
            # of an aarch64 conformance shard's CPU time)
            item.repr_failure = _unused_repr
        try:
            report = yield
        finally:
            if unchecked:
                del item.repr_failure   # the instance attribute: the class's method is back
        if unchecked and report.failed:
            # the kernels compiled; what failed is a check of results that were never computed
            report.outcome, report.longrepr = "passed", None
        return report

    return pytest_configure, pytest_runtest_makereport
