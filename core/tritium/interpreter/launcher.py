"""An interpreted launch from a call: the arguments bound and classified, the grid, the launch hooks, and user
errors inside the kernel reported as the compiler reports them. The launch itself (its programs, run in
batches) is programs.py.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import knobs
from ..language.core import CompileTimeError
from ..runtime.safety import UnsafeArgumentError
from .args import classify, host_copies
from .errors import DeviceAssertionError, OutOfBoundsError, location_in_traceback
from .programs import BATCH_ELEMENTS, FIRST_BATCH, Launch, kernel_state  # noqa: F401  (their old import path)


def _grid(fn: Any, grid: Any, values: list[Any], options: dict) -> tuple[int, int, int]:
    if callable(grid):
        meta = dict(zip(fn.arg_names, values))
        meta.update(options)
        grid = grid(meta)
    # the compiled path's check and limits, so that both modes take the same grids
    from ..runtime.grid import grid3
    return grid3(fn.__name__, grid)


_CONVERTED = (CompileTimeError, TypeError, ValueError, NameError, IndexError, KeyError, ZeroDivisionError,
              AttributeError, NotImplementedError)


def run_interpreted(fn: Any, args: tuple, kwargs: dict, grid: Any, warmup: bool) -> Any:
    """Run ``fn[grid](*args, **kwargs)`` as Python on numpy arrays (see the package docstring)."""
    values, options = kernel_state(fn).binder(*args, **kwargs)
    for hook in fn.pre_run_hooks:
        hook(*args, **kwargs)
    if warmup:
        return None
    g = _grid(fn, grid, values, options)
    if g[0] * g[1] * g[2] == 0:
        return None
    rt = knobs.runtime
    enter, exit_hook = rt.launch_enter_hook, rt.launch_exit_hook
    meta = {"name": fn.__name__, "function": fn, "grid": g, "kernel": None, "args": dict(zip(fn.arg_names, values))}
    if enter is not None:
        enter(meta)
    with host_copies(values) as host_values:
        classified = _classify_all(fn, host_values)
        key = tuple(_key(t, v) for t, v in classified)
        launch = Launch(fn, g, key, options)
        kargs = launch.kernel_args(classified)
        with np.errstate(all="ignore"):
            try:
                launch.run(kargs)
            except _CONVERTED as exc:
                from ..compiler.errors import CompilationError
                if isinstance(exc, (OutOfBoundsError, DeviceAssertionError, CompilationError, UnsafeArgumentError)):
                    raise
                raise _compilation_error(fn, exc) from exc
    if exit_hook is not None:
        exit_hook(meta)
    return None


def _classify_all(fn: Any, values: list[Any]) -> list[tuple[str, Any]]:
    out = []
    for p, v in zip(fn.params, values):
        try:
            out.append(classify(p, v))
        except (TypeError, ValueError, OverflowError) as exc:
            what = "a tuple" if isinstance(v, tuple) else type(v).__name__
            raise type(exc)(f"argument `{p.name}` ({what}) of kernel `{fn.__name__}`: {exc}") from None
    return out


def _key(t: str, v: Any) -> Any:
    """The specialization an argument selects (the largest tile and divergence are remembered by it)."""
    if t == "C":
        return ("C", _hashable(v))
    if t == "()":
        return ("()", tuple(_key(*x) for x in v[0]), v[1] and tuple(v[1]))
    if t == "TD":
        return ("TD", v[0], v[4], v[5])
    return t


def _hashable(v: Any) -> Any:
    try:
        hash(v)
        return (type(v).__name__, v)
    except TypeError:
        return (type(v).__name__, repr(v))


def _compilation_error(fn: Any, exc: BaseException) -> BaseException:
    """User errors inside a kernel, reported like the compiler reports them (kernel, line, caret)."""
    from .errors import InterpretedKernelError
    where = location_in_traceback(exc.__traceback__)
    msg = exc.described() if isinstance(exc, CompileTimeError) else f"{type(exc).__name__}: {exc}"
    if where is None:
        return InterpretedKernelError(fn.__name__, None, None, msg)
    target = where.fn
    return InterpretedKernelError(target.__name__, target.src, where.ast_node(), msg, target.filename,
                                  target.first_line)
