"""A pytest plugin (``-p tritium_cpu.compile_only_pytest``, with ``TRITIUM_CPU_COMPILE_ONLY=1`` and optionally
``TRITIUM_CPU_TRIPLE``) that runs a suite of kernel tests only to compile their kernels
(:mod:`tritium.testing.compile_only`)."""
from __future__ import annotations

from tritium.testing.compile_only import hooks

from .knobs import cpu as cpu_knobs

pytest_configure, pytest_runtest_makereport = hooks(
    ("tritium_cpu/compiler.py", "tritium_cpu/codegen/", "tritium_cpu/outline.py"),
    lambda: bool(cpu_knobs.compile_only),
    "-p tritium_cpu.compile_only_pytest needs TRITIUM_CPU_COMPILE_ONLY=1 (and, to cross-compile, TRITIUM_CPU_TRIPLE)")
