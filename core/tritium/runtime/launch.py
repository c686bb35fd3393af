"""``kernel[grid](*args)``: bind arguments, find or compile the specialization, launch."""
from __future__ import annotations

from typing import Any

from .. import knobs

_hook_keys: dict[int, str] = {}


class _DriverState:
    """Per-driver caches of one JITFunction: target, compiled kernels by specialization."""
    __slots__ = ("target", "kernels")

    def __init__(self, target: Any) -> None:
        self.target = target
        self.kernels: dict[Any, Any] = {}


def _hook_key() -> Any:
    hook = knobs.runtime.add_stages_inspection_hook
    if hook is None:
        return None
    k = _hook_keys.get(id(hook))
    if k is None:
        from ..compiler.stages import inspection_hook_key
        k = _hook_keys[id(hook)] = inspection_hook_key(hook)
    return k


def bind(fn: Any, args: tuple, kwargs: dict) -> tuple[list[Any], dict[str, Any]]:
    params = fn.params
    n = len(params)
    if len(args) > n:
        raise TypeError(f"{fn.__name__}() takes {n} arguments ({', '.join(fn.arg_names)}) but {len(args)} were "
                        "given")
    values: list[Any] = list(args) + [_MISSING] * (n - len(args))
    options: dict[str, Any] = {}
    for k, v in kwargs.items():
        idx = fn._arg_index.get(k) if hasattr(fn, "_arg_index") else None
        if idx is None:
            try:
                idx = fn.arg_names.index(k)
            except ValueError:
                options[k] = v
                continue
        if values[idx] is not _MISSING:
            raise TypeError(f"{fn.__name__}() got multiple values for argument '{k}'")
        values[idx] = v
    for i, v in enumerate(values):
        if v is _MISSING:
            p = params[i]
            if not p.has_default:
                missing = [params[j].name for j, x in enumerate(values) if x is _MISSING and not params[j].has_default]
                raise TypeError(f"{fn.__name__}() is missing {len(missing)} required argument(s): "
                                f"{', '.join(missing)}")
            values[i] = p.default
    return values, options


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


_MISSING = _Missing()


def _grid3(fn: Any, grid: Any, values: list[Any], options: dict) -> tuple[int, int, int]:
    if callable(grid):
        meta = dict(zip(fn.arg_names, values))
        meta.update(options)
        grid = grid(meta)
    if isinstance(grid, int):
        grid = (grid, )
    try:
        g = tuple(int(x) for x in grid)
    except TypeError:
        raise TypeError(f"the grid of {fn.__name__} must be a tuple of 1 to 3 integers or a callable returning "
                        f"one, got {grid!r}") from None
    if not 1 <= len(g) <= 3:
        raise ValueError(f"the grid of {fn.__name__} must have 1 to 3 dimensions, got {g}")
    if any(x < 0 for x in g):
        raise ValueError(f"the grid of {fn.__name__} has a negative size: {g}")
    return g + (1, ) * (3 - len(g))  # type: ignore[return-value]


def launch(fn: Any, args: tuple, kwargs: dict, grid: Any, warmup: bool) -> Any:
    from .driver import driver
    drv = driver.active
    state = fn.device_caches.get(id(drv))
    if state is None:
        state = fn.device_caches[id(drv)] = _DriverState(drv.get_current_target())
    values, options = bind(fn, args, kwargs)
    for hook in fn.pre_run_hooks:
        hook(*args, **kwargs)
    key, runtime = fn._specializer.specialize(values)
    debug = fn.debug or knobs.runtime.debug
    full_key = (key, tuple(sorted(options.items())) if options else (), debug, _hook_key())
    kernel = state.kernels.get(full_key)
    if kernel is None:
        kernel = _compile(fn, state, key, values, options, debug)
        state.kernels[full_key] = kernel
    if warmup:
        return kernel
    g = _grid3(fn, grid, values, options)
    if g[0] * g[1] * g[2] == 0:
        return kernel
    enter = knobs.runtime.launch_enter_hook
    if enter is not None:
        enter({"name": kernel.name, "grid": g, "kernel": kernel, "args": dict(zip(fn.arg_names, values))})
    kernel.run(g, runtime)
    exit_hook = knobs.runtime.launch_exit_hook
    if exit_hook is not None:
        exit_hook({"name": kernel.name, "grid": g, "kernel": kernel})
    return kernel


def _compile(fn: Any, state: _DriverState, key: tuple, values: list[Any], options: dict, debug: bool) -> Any:
    from ..compiler import ASTSource, compile
    signature, constexprs, attrs = fn._specializer.compile_inputs(key, values)
    opts = dict(options)
    if debug:
        opts["debug"] = True
    hook = knobs.runtime.jit_cache_hook
    if hook is not None and hook(key=key, repr=repr(fn), fn=fn, compile={"signature": signature}, is_manual_warmup=False,
                                 already_compiled=False) is False:
        return None
    src = ASTSource(fn, signature, constexprs, attrs)
    kernel = compile(src, target=state.target, options=opts)
    post = knobs.runtime.jit_post_compile_hook
    if post is not None:
        post(key=key, repr=repr(fn), fn=fn, compile={"signature": signature}, is_manual_warmup=False,
             already_compiled=False)
    return kernel
