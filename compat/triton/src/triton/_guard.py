"""Refuse to stand in for Triton where a real Triton is installed: two packages named ``triton`` in one
environment would make which one runs depend on install order."""
from __future__ import annotations

from importlib import metadata

#: distributions that install the real ``triton`` package (PyPI, PyTorch's index, vendors' builds)
REAL_TRITON_DISTRIBUTIONS = ("triton", "pytorch-triton", "pytorch-triton-rocm", "pytorch-triton-xpu",
                             "triton-nightly", "triton-xpu")


def real_triton() -> "metadata.Distribution | None":
    for name in REAL_TRITON_DISTRIBUTIONS:
        try:
            return metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
    return None


def refuse_beside_real_triton() -> None:
    dist = real_triton()
    if dist is not None:
        where = dist.locate_file("")
        raise ImportError(
            f"tritium-triton-compat provides `import triton` for tritium, but {dist.metadata['Name']} "
            f"{dist.version} (the real Triton) is installed too, in {where}. Uninstall one of them: "
            "`pip uninstall tritium-triton-compat` to use Triton, or uninstall Triton to run its code on tritium "
            "(`import tritium as triton` works without this package).")
