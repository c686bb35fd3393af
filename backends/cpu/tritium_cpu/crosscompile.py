"""Compiling without running: code for another architecture (``TRITIUM_CPU_TRIPLE``), or every launch
compiled and skipped (``TRITIUM_CPU_COMPILE_ONLY=1``), so that a whole test suite's kernels can be checked
to compile for a target this host cannot execute.

``tritium_cpu.compile_only_pytest`` runs a pytest suite that way.
"""
from __future__ import annotations

from typing import Any, Optional

from .knobs import cpu as cpu_knobs

#: kernels a no-run launcher was made for in this process (name, triple)
compiled: list[tuple[str, str]] = []


class NoRunLauncher:
    """Accepts launches and runs nothing (the kernel was compiled and cached when this was made)."""

    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel

    def __call__(self, grid: tuple, args: tuple) -> None:
        return None


def no_run_launcher(kernel: Any) -> Optional[NoRunLauncher]:
    """A launcher that runs nothing when launches are compile-only; None when the kernel can run here."""
    from .compiler import is_cross
    triple = kernel.metadata_dict.get("cpu_triple", "")
    if cpu_knobs.compile_only:
        compiled.append((kernel.name, triple))
        return NoRunLauncher(kernel)
    if triple and is_cross(triple):
        raise RuntimeError(f"kernel `{kernel.name}` was compiled for {triple} (TRITIUM_CPU_TRIPLE), which this host "
                           "cannot execute: set TRITIUM_CPU_COMPILE_ONLY=1 to compile without running, or unset "
                           "TRITIUM_CPU_TRIPLE to compile for this host")
    return None
