"""A pytest plugin (``-p tritium_amd.compile_only_pytest`` with ``TRITIUM_AMD_COMPILE_ONLY=1`` and
``TRITIUM_AMD_ARCH=gfx90a|gfx942|gfx950``) that runs a suite of kernel tests only to compile their kernels to
checked AMD code objects (:mod:`tritium.testing.compile_only`)."""
from __future__ import annotations

from tritium.testing.compile_only import hooks

from .knobs import amd as amd_knobs

pytest_configure, pytest_runtest_makereport = hooks(
    ("tritium_amd/compiler.py", "tritium_amd/target.py", "tritium_amd/toolchain.py", "tritium_amd/codeobj.py",
     "tritium_amd/mfma.py"),
    lambda: bool(amd_knobs.compile_only),
    "-p tritium_amd.compile_only_pytest needs TRITIUM_AMD_COMPILE_ONLY=1 (and TRITIUM_AMD_ARCH to pick the chip)")
