"""``kernel[grid](*args)``: bind and specialize the arguments, find or compile the kernel, launch it.

This is the full path: the binder (generated per kernel by :mod:`.binder`) turns the arguments
into a key and the run-time values in one call, and the kernel cache maps the key (with the options, debug
mode and the settings that change compiled code) to a ready launcher. Everything else (checking devices,
compiling, hooks that see the compiled kernel) happens once per specialization. Once a kernel is found here,
later launches with the same key take the generated frame of :mod:`.dispatch`, which comes back here for
whatever it cannot answer.
"""
from __future__ import annotations

import operator
from dataclasses import fields, is_dataclass
from typing import Any, Callable, Optional

from .. import knobs, plugins
from ..compiler import ASTSource, compile
from ..compiler.compiler import make_backend
from ..compiler.stages import inspection_hook_key
from ..errors import ArgumentDeviceError
from ..backends.driver import PINNED_HOST, tells_pinned_apart
from .dispatch import launch_metadata as _launch_metadata
from .dispatch import remember
from .driver import driver as _driver
from .forksafe import compile_lock
from .grid import grid3
from .safety import make_guard
from .signature import array_locations, compile_inputs
from .specialize import make_binder
from .structured import bind_error, path_selector


class KernelState:
    """One JITFunction on one driver: its binder, its backend, and its compiled kernels by key."""
    __slots__ = ("driver", "target", "binder", "kernels", "backend", "generation", "settings", "enter_hook",
                 "exit_hook", "max_grid", "max_x")

    def __init__(self, fn: Any, drv: Any) -> None:
        self.driver = drv
        self.target = drv.get_current_target()
        self.binder = make_binder(fn, getattr(drv, "device_type", None), tells_pinned_apart(drv))
        self.kernels: dict[Any, Entry] = {}
        self.backend: Any = None
        self.generation = -1
        self.settings: Any = None
        self.enter_hook: Optional[Callable] = None
        self.exit_hook: Optional[Callable] = None
        self.max_grid = tuple(drv.max_grid())
        self.max_x = self.max_grid[0]

    def refresh_settings(self) -> None:
        """The knob values set from Python that change compiled code (plugins' and core's compilation and
        language groups, the stage inspection hook); recomputed only when a knob was set."""
        self.generation = knobs.generation
        rt = knobs.runtime
        hook = rt.add_stages_inspection_hook
        self.settings = (plugins.jit_key(), tuple(sorted(knobs.compilation.__dict__.items())),
                         tuple(sorted(knobs.language.__dict__.items())), None if hook is None else _hook_key(hook))
        # hooks are set from Python only, so they too change only with the generation
        self.enter_hook, self.exit_hook = rt.launch_enter_hook, rt.launch_exit_hook


class Entry:
    """A compiled kernel and what launching it needs."""
    __slots__ = ("kernel", "launcher", "select", "with_arguments", "guard", "inline")

    def __init__(self, kernel: Any, launcher: Callable, select: Optional[Callable],
                 guard: Optional[Callable] = None, keep: Optional[tuple] = None, n_runtime: int = 0) -> None:
        self.kernel = kernel
        # a launcher object may offer the same call as a plain function (``hot_call``): calling an object costs a
        # lookup of its type's __call__ and a bound method per launch
        self.launcher = getattr(launcher, "hot_call", launcher)
        self.select = select
        self.guard = guard  # refuses arrays the kernel cannot address safely (see safety.py)
        #: a launcher that also wants the bound arguments themselves (a bounds-checked one, for their buffers)
        self.with_arguments = bool(getattr(launcher, "needs_arguments", False))
        #: what the driver's launch written into the cached-launch frame reads (inline_launch.py): for an entry
        #: without a guard whose launcher takes run-time values as bound, or some of them (``keep``: their
        #: indices, None for all; ints compiled in are left out)
        offer = getattr(launcher, "inline_constants", None)
        self.inline = None
        if offer is not None and guard is None and not self.with_arguments:
            if select is None:
                self.inline = offer(None, n_runtime)
            elif keep is not None and all(type(i) is int for i in keep):
                self.inline = offer(tuple(keep), n_runtime)

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        if name == "launcher":
            # a launcher replaced after the fact (a test's recorder, a benchmark's no-op) is the one that runs
            object.__setattr__(self, "inline", None)


_hook_keys: dict[int, str] = {}


def _hook_key(hook: Any) -> str:
    k = _hook_keys.get(id(hook))
    if k is None:
        k = _hook_keys[id(hook)] = inspection_hook_key(hook)
    return k


def _selector(keep: tuple, n: int) -> Optional[Callable]:
    """Picks the run-time values a specialization takes (ints equal to 1 and None are compiled in), and
    flattens tuple and descriptor arguments (their entries of ``keep`` are paths)."""
    if any(type(i) is not int for i in keep):
        return path_selector(keep)
    if keep == tuple(range(n)):
        return None
    if not keep:
        return lambda r: ()
    if len(keep) == 1:
        i = keep[0]
        return lambda r: (r[i], )
    return operator.itemgetter(*keep)


def launch(fn: Any, args: tuple, kwargs: dict, grid: Any, warmup: bool) -> Any:
    if fn.used_globals:
        fn.check_globals()  # before the cache lookup: a changed global empties the cache
    drv = _driver._active or _driver.default
    state = fn.device_caches.get(drv)
    if state is None:
        state = fn.device_caches.setdefault(drv, KernelState(fn, drv))  # one state even when threads race
    try:
        key, runtime, bound, options = state.binder(*args, **kwargs)
    except (TypeError, ValueError, OverflowError) as exc:
        named = bind_error(fn, args, kwargs, exc)
        if named is None:
            raise
        raise named from None
    if fn.pre_run_hooks:
        for hook in fn.pre_run_hooks:
            hook(*args, **kwargs)
    debug = fn.debug or knobs.runtime.debug
    if state.generation != knobs.generation:
        state.refresh_settings()
    gen = state.generation
    full = (key, tuple(sorted(options.items())) if options else None, debug, state.settings)
    try:
        entry = state.kernels.get(full)
    except TypeError:  # an unhashable compile-time value
        full = repr(full)
        entry = state.kernels.get(full)
    if entry is None:
        entry = _compile_once(fn, state, full, key, bound, options, debug, warmup)
        if entry is None:
            return None
    if debug is False and type(full) is tuple:
        remember(fn, state, gen, key, options, entry)
    if warmup:
        return entry.kernel
    if callable(grid):
        meta = dict(zip(fn.arg_names, bound))
        meta.update(options)
        grid = grid(meta)
    # the common grid, (int,), is checked inline; anything else takes the full check (grid.py)
    if type(grid) is tuple and len(grid) == 1 and type(grid[0]) is int and 0 <= grid[0] <= state.max_x:
        g = (grid[0], 1, 1)
    else:
        g = grid3(fn.__name__, grid, state.max_grid)
    if entry.guard is not None:
        entry.guard(bound)
    if entry.select is not None:
        runtime = entry.select(runtime)
    enter, exit_hook = state.enter_hook, state.exit_hook
    if enter is not None:
        enter(_launch_metadata(fn, entry.kernel, g, bound))
    if entry.with_arguments:
        entry.launcher(g, runtime, bound)
    else:
        entry.launcher(g, runtime)
    if exit_hook is not None:
        exit_hook(_launch_metadata(fn, entry.kernel, g, bound))
    return entry.kernel


def _compile_once(fn: Any, state: KernelState, full: Any, key: tuple, bound: tuple, options: dict, debug: bool,
                  warmup: bool) -> Optional[Entry]:
    """Compile one key (and store it in the kernel cache) unless another thread did so meanwhile: threads
    launching the same new specialization wait for the first one's compilation (see forksafe.py)."""
    with compile_lock:
        entry = state.kernels.get(full)
        if entry is None:
            entry = _compile(fn, state, key, bound, options, debug, warmup)
            if entry is not None:
                state.kernels[full] = entry
    return entry


def _compile(fn: Any, state: KernelState, key: tuple, bound: tuple, options: dict, debug: bool,
             warmup: bool) -> Optional[Entry]:
    drv = state.driver
    for name, location in array_locations(fn, key, bound):
        if not drv.accepts_device(location):
            raise ArgumentDeviceError(
                f"argument `{name}` of kernel `{fn.__name__}` lives on device '{location}', which the active driver "
                f"({type(drv).__name__}) cannot reach: move it (e.g. x.to(device)){_pinned_hint(drv, location)} or "
                "select a backend for that device")
    signature, constexprs, attrs, keep = compile_inputs(fn, key, bound)
    opts = dict(options)
    if debug:
        opts["debug"] = True
    backend = state.backend
    if backend is None:
        backend = state.backend = make_backend(state.target)
    try:
        parsed = backend.parse_options(dict(opts))
    except TypeError as exc:
        raise _option_error(fn, backend, options, exc) from None
    info = {"key": key, "signature": signature, "constants": constexprs, "attrs": attrs, "options": parsed,
            "num_warps": getattr(parsed, "num_warps", None), "num_stages": getattr(parsed, "num_stages", None),
            "device": drv.get_current_device(), "is_warmup": warmup}
    hook, post = knobs.runtime.jit_cache_hook, knobs.runtime.jit_post_compile_hook
    if hook is not None or post is not None:
        from ..compiler.specialization import hook_fields  # Triton 3.6's entries, specialization_data among them
        from .hook_info import hook_kwargs
        info.update(hook_fields(fn, signature, constexprs, attrs, parsed, key, options))
        call = hook_kwargs(fn, key, info, warmup)
    # as in Triton: a cache hook that returns a true value takes the compilation over, and nothing runs
    if hook is not None and hook(**call):
        return None
    src = ASTSource(fn, signature, constexprs, attrs)
    kernel = compile(src, target=state.target, options=opts)
    launcher = drv.make_launcher(kernel)
    kernel._launcher = launcher
    if post is not None:
        post(**call)
    n_runtime = sum(1 for p in fn.params if not p.is_constexpr)
    return Entry(kernel, launcher, _selector(keep, n_runtime), make_guard(fn, key, kernel), keep, n_runtime)


def _pinned_hint(drv: Any, location: str) -> str:
    return ", pin it (x.pin_memory())" if location == "cpu" and drv.accepts_device(PINNED_HOST) else ""


def _option_error(fn: Any, backend: Any, options: dict, exc: Exception) -> TypeError:
    try:
        defaults = backend.parse_options({})
        known = {f.name for f in fields(defaults)} if is_dataclass(defaults) else set(vars(defaults))
    except Exception:
        return TypeError(f"{fn.__name__}[grid](...): {exc}")
    unknown = sorted(set(options) - known)
    if not unknown:
        return TypeError(f"{fn.__name__}[grid](...): {exc}")
    return TypeError(f"{fn.__name__}() got unexpected keyword argument(s) {', '.join(map(repr, unknown))}: neither "
                     f"a parameter ({', '.join(fn.arg_names)}) nor a launch option of this backend "
                     f"({', '.join(sorted(known))})")
