"""A pytest plugin (``-p tritium_amd.compile_only_pytest`` with ``TRITIUM_AMD_COMPILE_ONLY=1`` and
``TRITIUM_AMD_ARCH=gfx90a|gfx942|gfx950``) that runs a suite of kernel tests only to compile their kernels for an
AMD GPU: a test passes when every kernel it launched compiled to a checked code object, whatever its checks then
say about outputs that were never computed; an exception raised while compiling still fails it."""
from __future__ import annotations

from typing import Any

import pytest

from .knobs import amd as amd_knobs

_COMPILING = ("tritium/compiler/", "tritium/gpu/", "tritium/passes/", "tritium_amd/compiler.py",
              "tritium_amd/target.py", "tritium_amd/toolchain.py", "tritium_amd/codeobj.py", "tritium_amd/mfma.py",
              "llvmlite/")


def _raised_while_compiling(excinfo: Any) -> bool:
    return any(any(part in str(entry.path).replace("\\", "/") for part in _COMPILING)
               for entry in excinfo.traceback)


def pytest_configure(config: Any) -> None:
    if not amd_knobs.compile_only:
        raise pytest.UsageError("-p tritium_amd.compile_only_pytest needs TRITIUM_AMD_COMPILE_ONLY=1 (and "
                                "TRITIUM_AMD_ARCH to pick the chip)")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Any:
    report = yield
    if report.when == "call" and report.failed and call.excinfo is not None \
            and not _raised_while_compiling(call.excinfo):
        report.outcome, report.longrepr = "passed", None
    return report
