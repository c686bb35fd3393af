"""Triton's launcher protocol on a CompiledKernel, for code written against Triton's ``CompiledKernel`` (torch
inductor's generated launchers, Triton's own tests): ``kernel.run(gx, gy, gz, stream, function, packed_metadata,
launch_metadata, enter_hook, exit_hook, *args)`` with every argument of the @jit function, constexprs included,
and ``kernel.launch_metadata(grid, stream, *args)``. tritium's driver launcher, ``launch(grid, args)`` over the
run-time arguments, stays ``kernel.launcher``."""
from __future__ import annotations

from typing import Any, Callable

from .. import knobs
from .compiled_launch import run_compiled


class LazyDict:
    """Launch metadata whose expensive parts (the kernel's ``launch_metadata`` function) are computed only when a
    hook asks for them with ``get()``, as Triton's: most hooks look at a launch only sometimes."""

    def __init__(self, data: dict) -> None:
        self.data = data
        self.extras: list[tuple[Callable, tuple]] = []

    def get(self) -> dict:
        for func, args in self.extras:
            self.data = self.data | (func(*args) or {})
        self.extras.clear()
        return self.data

    def add(self, func: Callable, args: tuple) -> None:
        self.extras.append((func, args))


class TritonRun:
    """``kernel.run``: Triton's driver launcher signature over tritium's launch of a compiled kernel."""
    __slots__ = ("kernel",)

    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel

    def __call__(self, gx: int, gy: int, gz: int, stream: Any, function: Any, packed_metadata: Any,
                 launch_metadata: Any, enter_hook: Any, exit_hook: Any, *args: Any) -> None:
        # Triton's launchers hand the hooks the metadata the caller built (None when no enter hook is set)
        if enter_hook is not None:
            enter_hook(launch_metadata)
        run_compiled(self.kernel, (gx, gy, gz), args)
        if exit_hook is not None:
            exit_hook(launch_metadata)


def launch_metadata(kernel: Any, grid: tuple, stream: Any, *args: Any) -> Any:
    """Triton's ``CompiledKernel.launch_metadata``: None unless a launch enter hook is set (building it costs
    time on every launch), else the kernel's name, function and stream plus, lazily, what the @jit function's
    ``launch_metadata`` callback computes from the grid, the metadata and the arguments by name."""
    if knobs.runtime.launch_enter_hook is None:
        return None
    kernel._init_handles()
    ret = LazyDict({"name": kernel.name, "function": kernel.function, "stream": stream})
    fn = getattr(kernel.src, "fn", None)
    if getattr(fn, "launch_metadata", None) is None:
        return ret
    ret.add(fn.launch_metadata, (grid, kernel.metadata, dict(zip(fn.arg_names, args))))
    return ret
