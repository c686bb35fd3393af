"""``kernel[grid](*args)`` of a kernel compiled with ``tritium.compile`` (a CompiledKernel), and Triton's launcher
protocol over it (:mod:`.triton_run`).

Apart from :mod:`.launch`, which compiles: the compiler's CompiledKernel launches through this module, and the
launch path that compiles imports the compiler, so the two stay apart to keep the compiler and the runtime from
importing each other.
"""
from __future__ import annotations

from typing import Any

from ..errors import ArgumentDeviceError
from .driver import driver
from .grid import grid3
from .safety import check_array
from .specialize import specialize_arg
from .structured import flatten_for_signature


def run_compiled(kernel: Any, grid: Any, args: tuple) -> None:
    """Launch a CompiledKernel directly: ``args`` are all the kernel's arguments (constexprs and arguments
    specialized to 1 are dropped), or only its run-time ones."""
    sig = getattr(kernel.src, "signature", None) or {}
    name = kernel.name
    if len(args) == len(sig):
        args = tuple(a for a, ty in zip(args, sig.values()) if ty != "constexpr")
    runtime_names = [n for n, ty in sig.items() if ty != "constexpr"]
    if sig and len(args) != len(runtime_names):
        raise TypeError(f"kernel `{name}` takes {len(sig)} arguments ({', '.join(sig)}), or only its "
                        f"{len(runtime_names)} run-time ones ({', '.join(runtime_names)}); got {len(args)}")
    values = []
    recorded = kernel.metadata_dict.get("written_args") if hasattr(kernel, "metadata_dict") else None
    for arg_name, a in zip(runtime_names or [f"#{i}" for i in range(len(args))], args):
        if type(a) in (int, float, bool):
            values.append(a)
            continue
        k, v = specialize_arg(a)
        if k[0] == "*":
            if not driver.active.accepts_device(k[2]):
                raise ArgumentDeviceError(f"argument `{arg_name}` of kernel `{name}` lives on device '{k[2]}', which "
                                          "the active driver cannot reach")
            at = kernel.metadata_dict.get("written_at") or {}
            check_array(name, arg_name, a, recorded is None or len(values) in recorded, at.get(str(len(values))))
        if k[0] in ("()", "TD"):
            values.extend(flatten_for_signature(sig.get(arg_name), v))
            continue
        values.append(v)
    if callable(grid):
        raise TypeError(f"kernel `{name}`: a compiled kernel is launched on a fixed grid, not a callable")
    kernel.launcher(grid3(name, grid, tuple(driver.active.max_grid())), tuple(values))
