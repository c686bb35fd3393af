"""``@autotune``, ``@heuristics`` and ``Config``, with Triton's semantics.

An :class:`Autotuner` times every (pruned) config the first time it sees a new tuning key (the values of
the ``key`` arguments and the element types of the array arguments), keeps the fastest per key, and then
launches that config directly: the JIT's own cache holds the compiled kernels, so nothing recompiles. It
always goes through ``fn.run(...)``, so it works the same when ``fn`` runs in the interpreter.
"""
from __future__ import annotations

import builtins
import hashlib
import json
import os
import threading
import time
from typing import Any, Callable, Optional, Sequence

from .. import knobs, testing
from ..cache import KernelCache, atomic_write
from ..cache_safety import UntrustedEntry, read_trusted
from ..compiler.compiler import make_backend
from ..compiler.errors import CompileTimeAssertionFailure
from ..compiler.errors import OutOfResources as OutOfResources  # Triton's code imports it from here
from ..errors import TritonError
from . import autotune_compile  # configs compiled in worker processes first (knobs.autotuning)
from .autotune_remote import fetch_timings, publish_timings, valid_timings
from .driver import driver
from .forksafe import renew_in_child
from .launchable import Heuristics as Heuristics  # Triton's triton.runtime.autotuner.Heuristics
from .launchable import _Launchable


class AutotunerError(TritonError, RuntimeError):
    pass


class Config:
    """One candidate: meta-parameters (``kwargs``) plus launch options, and an optional ``pre_hook(args)``
    called before each launch with this config."""

    def __init__(self, kwargs: dict, num_warps: int = 4, num_stages: int = 3, num_ctas: int = 1,
                 maxnreg: Optional[int] = None, pre_hook: Optional[Callable] = None,
                 ir_override: Optional[str] = None) -> None:
        self.kwargs = dict(kwargs)
        self.num_warps = num_warps
        self.num_ctas = num_ctas
        self.num_stages = num_stages
        self.maxnreg = maxnreg
        self.pre_hook = pre_hook
        self.ir_override = ir_override

    def __setstate__(self, state: dict) -> None:
        self.__init__(state.get("kwargs", {}), state.get("num_warps", 4), state.get("num_stages", 3),  # type: ignore
                      state.get("num_ctas", 1), state.get("maxnreg"), state.get("pre_hook"), state.get("ir_override"))

    def all_kwargs(self) -> dict:
        """The meta-parameters and the options that are set, as keyword arguments of a launch."""
        opts = (("num_warps", self.num_warps), ("num_ctas", self.num_ctas), ("num_stages", self.num_stages),
                ("maxnreg", self.maxnreg), ("ir_override", self.ir_override))
        return {**self.kwargs, **{k: v for k, v in opts if v is not None}}

    def _identity(self) -> tuple:
        return (*self.all_kwargs().items(), self.pre_hook)

    def __hash__(self) -> int:
        return hash(self._identity())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Config) and self._identity() == other._identity()

    def __str__(self) -> str:
        parts = [f"{k}: {v}" for k, v in self.kwargs.items()]
        parts += [f"num_warps: {self.num_warps}", f"num_ctas: {self.num_ctas}", f"num_stages: {self.num_stages}",
                  f"maxnreg: {self.maxnreg}"]
        return ", ".join(parts)

    def __repr__(self) -> str:
        return f"Config({self})"


def _zero(a: Any, name: str) -> None:
    if hasattr(a, "zero_"):
        a.zero_()
    elif hasattr(a, "fill"):
        a.fill(0)
    else:
        raise TypeError(f"reset_to_zero: argument `{name}` ({type(a).__name__}) has neither zero_() nor fill()")


def _copy(a: Any) -> Any:
    return a.clone() if hasattr(a, "clone") else a.copy()


def _restore(dst: Any, src: Any) -> None:
    if hasattr(dst, "copy_"):
        dst.copy_(src)
    else:
        dst[...] = src


class Autotuner(_Launchable):
    def __init__(self, fn: Any, arg_names: list[str], configs: Sequence[Config], key: Sequence[str],
                 reset_to_zero: Optional[Sequence[str]] = None, restore_value: Optional[Sequence[str]] = None,
                 pre_hook: Optional[Callable] = None, post_hook: Optional[Callable] = None,
                 prune_configs_by: Optional[dict] = None, warmup: Optional[float] = None,
                 rep: Optional[float] = None, use_cuda_graph: bool = False, do_bench: Optional[Callable] = None,
                 cache_results: bool = False) -> None:
        self.fn = fn
        self.arg_names = list(arg_names)
        self.configs = list(configs) if configs else [Config({}, num_warps=4, num_stages=3, num_ctas=1)]
        self.keys = list(key)
        for name in [*self.keys, *(reset_to_zero or ()), *(restore_value or ())]:
            if name not in self.arg_names:
                raise ValueError(f"@autotune of {getattr(fn, '__name__', fn)}: {name!r} is not a parameter "
                                 f"({', '.join(self.arg_names)})")
        self.cache: dict[tuple, Config] = {}
        self.reset_to_zero = list(reset_to_zero or ())
        self.restore_value = list(restore_value or ())
        self.user_defined_pre_hook = pre_hook is not None
        self.user_defined_post_hook = post_hook is not None
        self.pre_hook = pre_hook or self._default_pre_hook
        self.post_hook = post_hook or self._default_post_hook
        # per thread: several threads may tune and launch one kernel at once (Triton keeps these on self)
        self._local = threading.local()
        self._renew_locks()
        renew_in_child(self)
        prune = prune_configs_by or {}
        self.perf_model = prune.get("perf_model")
        self.configs_top_k = prune.get("top_k", 1.0)
        self.early_config_prune = prune.get("early_config_prune")
        self.num_warmups, self.num_reps = warmup, rep
        self.use_cuda_graph = use_cuda_graph
        self._do_bench = do_bench
        self.cache_results = cache_results
        self.best_config: Optional[Config] = None
        self.bench_time = 0.0
        self.configs_timings: dict[Config, Any] = {}
        self.__name__ = getattr(fn, "__name__", "kernel")

    # -- state of the calling thread -------------------------------------------------------------
    @property
    def nargs(self) -> Optional[dict]:
        """The positional arguments of the launch this thread is running (Triton's attribute)."""
        return getattr(self._local, "nargs", None)

    @nargs.setter
    def nargs(self, value: Optional[dict]) -> None:
        self._local.nargs = value

    @property
    def _restore_copies(self) -> dict:
        return getattr(self._local, "restore", {})

    @_restore_copies.setter
    def _restore_copies(self, value: dict) -> None:
        self._local.restore = value

    def _renew_locks(self) -> None:
        self._locks: dict[Any, threading.Lock] = {}
        self._locks_lock = threading.Lock()

    def _key_lock(self, key: Any) -> threading.Lock:
        with self._locks_lock:
            lock = self._locks.get(key)
            if lock is None:
                lock = self._locks[key] = threading.Lock()
            return lock

    # -- hooks ------------------------------------------------------------------------------------
    def _default_pre_hook(self, args: dict, reset_only: bool = False) -> None:
        for name in self.reset_to_zero:
            _zero(args[name], name)
        if not reset_only:
            self._restore_copies = {name: _copy(args[name]) for name in self.restore_value}

    def _default_post_hook(self, args: dict, exception: Optional[BaseException]) -> None:
        for name, saved in self._restore_copies.items():
            _restore(args[name], saved)
        self._restore_copies = {}

    # -- timing -----------------------------------------------------------------------------------
    def do_bench(self, fn: Callable, quantiles: Any = None) -> Any:
        if self._do_bench is not None:
            return self._do_bench(fn, quantiles=quantiles)
        if self.num_warmups is not None or self.num_reps is not None:
            return testing.do_bench(fn, warmup=25 if self.num_warmups is None else self.num_warmups,
                            rep=100 if self.num_reps is None else self.num_reps, quantiles=quantiles)
        return driver.active.get_benchmarker()(fn, quantiles=quantiles)

    def _bench(self, *args: Any, config: Config, **meta: Any) -> list[float]:
        verbose = knobs.autotuning.print
        if verbose:
            print(f"Autotuning kernel {self.base_fn.__name__} with config {config}")
        clash = meta.keys() & config.kwargs.keys()
        if clash:
            raise ValueError(f"Conflicting meta-parameters: {', '.join(sorted(clash))}. Make sure that you don't "
                             "re-define auto-tuned symbols.")
        current = dict(meta, **config.all_kwargs())
        full = {**(self.nargs or {}), **current}

        def kernel_call() -> None:
            if config.pre_hook:
                config.pre_hook(full)
            self.pre_hook(full)
            try:
                self.fn.run(*args, **current)
            except Exception as exc:
                try:
                    self.post_hook(full, exception=exc)
                finally:
                    raise
            self.post_hook(full, exception=None)

        try:
            return self.do_bench(kernel_call, quantiles=(0.5, 0.2, 0.8))
        except (OutOfResources, CompileTimeAssertionFailure) as exc:
            if verbose:
                print(f"Autotuning failed with {exc}")
            return [float("inf")] * 3

    # -- choosing ---------------------------------------------------------------------------------
    def tuning_key(self, args: tuple, kwargs: dict) -> tuple:
        named = {**dict(zip(self.arg_names, args)), **kwargs}
        named = {k: v for k, v in named.items() if k in self.arg_names}
        key = [named[k] for k in self.keys if k in named]
        key += [str(v.dtype) for v in named.values() if hasattr(v, "dtype")]
        return tuple(key)

    def prune_configs(self, kwargs: dict) -> list[Config]:
        configs = self.configs
        if self.early_config_prune:
            configs = self.early_config_prune(self.configs, self.nargs, **kwargs)
            if not configs:
                raise AutotunerError("No valid autotuner configs after pruning. `early_config_prune` should "
                                     "return at least one config.")
        if self.perf_model:
            top_k = self.configs_top_k
            if isinstance(top_k, float) and top_k <= 1.0:
                top_k = int(len(self.configs) * top_k)
            elif not isinstance(top_k, int):
                raise TypeError("prune_configs_by['top_k'] must be a float <= 1.0 or an int")
            if len(configs) > top_k:
                estimate = {c: self.perf_model(**(self.nargs or {}), **kwargs, **c.all_kwargs()) for c in configs}
                configs = sorted(configs, key=lambda c: estimate[c])[:top_k]
        return list(configs)

    def run(self, *args: Any, **kwargs: Any) -> Any:
        self.nargs = dict(zip(self.arg_names, args))
        tuned_now = False
        key: Any = None
        if len(self.configs) > 1:
            key = self.tuning_key(args, kwargs)
            config = self.cache.get(key)
            if config is None:
                # one thread times a key; the others wait for its choice instead of timing it again, which would
                # also run their kernels while this thread's timing runs reset and restore the arguments
                with self._key_lock(key):
                    config = self.cache.get(key)
                    if config is None:
                        tuned_now = True
                        configs = self.prune_configs(kwargs)
                        if not (self.cache_results or knobs.autotuning.cache) or knobs.runtime.interpret or \
                                not self._load_timings(key, configs):
                            self._benchmark(key, configs, args, kwargs)
                        config = self.cache[key]
        else:
            config = self.configs[0]
        self.best_config = config
        if tuned_now and knobs.autotuning.print:
            print(f"Triton autotuning for function {self.base_fn.__name__},\nwith key as {key},\n"
                  f"finished after {self.bench_time:.2f}s,\nbest config selected: {config};")
        full = {**self.nargs, **kwargs, **config.all_kwargs()}
        if config.pre_hook is not None:
            config.pre_hook(full)
        try:
            return self.fn.run(*args, **kwargs, **config.all_kwargs())
        finally:
            self.nargs = None

    def _benchmark(self, key: tuple, configs: list[Config], args: tuple, kwargs: dict) -> None:
        start = time.perf_counter()
        autotune_compile.precompile(self, configs, args, kwargs)
        # configs that run the same code the same way (on the CPU: they differ only in num_warps, num_stages...)
        # are timed once; the others' timings are copies (the first of them wins a tie, as when timed)
        timed: dict[str, Any] = {}
        timings = {}
        for c, code in zip(configs, autotune_compile.code_keys(self, configs, args, kwargs)):
            if code is not None and code in timed:
                timings[c] = timed[code]
                continue
            timings[c] = self._bench(*args, config=c, **kwargs)
            if code is not None:
                timed[code] = timings[c]
        self.bench_time = time.perf_counter() - start
        best = builtins.min(timings, key=lambda c: _as_list(timings[c]))
        if all(_as_list(t)[0] == float("inf") for t in timings.values()):
            raise AutotunerError(f"every config of {self.base_fn.__name__} failed (out of resources or a "
                                 f"compile-time assertion): {', '.join(map(str, configs))}")
        self.cache[key] = best
        self.configs_timings = timings
        # the timing runs wrote into the outputs: zero them again for the real launch
        self.pre_hook({**(self.nargs or {}), **kwargs, **best.all_kwargs()}, reset_only=True)
        if (self.cache_results or knobs.autotuning.cache) and not knobs.runtime.interpret:
            self._store_timings(key, configs, timings)

    # -- TRITON_CACHE_AUTOTUNING ------------------------------------------------------------------
    def _timings_path(self, key: tuple, configs: list[Config], create: bool = False) -> Optional[str]:
        if any(c.pre_hook for c in configs):
            return None  # hooks cannot be stored, so such results are never reused
        root = KernelCache().location(create)   # the same trust rule as compiled kernels; None: memory only
        if root is None:
            return None
        fn = self.base_fn
        parts = [fn.cache_key, make_backend(driver.active.get_current_target()).hash(), repr(key),
                 *[str(c) for c in configs]]
        digest = hashlib.sha256("-".join(parts).encode()).hexdigest()
        return os.path.join(root, "autotune", digest[:2], f"{digest}.json")

    def _load_timings(self, key: tuple, configs: list[Config]) -> bool:
        path = self._timings_path(key, configs)
        if path is None:
            return False
        allowed = [_config_dict(c) for c in configs]
        if not os.path.exists(path) and not fetch_timings(path, allowed):   # the fleet's result, if any
            return False
        try:
            # a file another user could have written is not used; nor one naming configs not being tuned
            raw = read_trusted(path, check=not knobs.cache.trust_shared)
            if not valid_timings(raw, allowed):
                return False
            timings = {Config(**c): t for c, t in json.loads(raw)["configs_timings"]}
        except (OSError, ValueError, KeyError, TypeError, UntrustedEntry):
            return False
        self.configs_timings = timings
        self.cache[key] = builtins.min(timings, key=lambda c: _as_list(timings[c]))
        self.bench_time = 0.0
        return True

    def _store_timings(self, key: tuple, configs: list[Config], timings: dict) -> None:
        path = self._timings_path(key, configs, create=True)
        if path is None:
            return
        data = {"key": repr(key), "configs_timings": [(_config_dict(c), t) for c, t in timings.items()]}
        atomic_write(path, json.dumps(data))
        publish_timings(path, json.dumps(data))

    def warmup(self, *args: Any, **kwargs: Any) -> list[Any]:
        """Compile every (pruned) config without launching."""
        self.nargs = dict(zip(self.arg_names, args))
        try:
            return [self.fn.warmup(*args, **kwargs, **c.all_kwargs()) for c in self.prune_configs(kwargs)]
        finally:
            self.nargs = None


def _as_list(t: Any) -> list:
    return list(t) if isinstance(t, (list, tuple)) else [t]


def _config_dict(c: Config) -> dict:
    return {"kwargs": c.kwargs, "num_warps": c.num_warps, "num_stages": c.num_stages, "num_ctas": c.num_ctas,
            "maxnreg": c.maxnreg, "ir_override": c.ir_override}


def autotune(configs: Sequence[Config], key: Sequence[str], prune_configs_by: Optional[dict] = None,
             reset_to_zero: Optional[Sequence[str]] = None, restore_value: Optional[Sequence[str]] = None,
             pre_hook: Optional[Callable] = None, post_hook: Optional[Callable] = None,
             warmup: Optional[float] = None, rep: Optional[float] = None, use_cuda_graph: bool = False,
             do_bench: Optional[Callable] = None, cache_results: bool = False) -> Callable[[Any], Autotuner]:
    """Try each config the first time the ``key`` arguments (and the argument dtypes) take new values; keep
    the fastest. ``reset_to_zero``/``restore_value`` name arrays the timing runs must not leave changed.
    ``TRITON_PRINT_AUTOTUNING=1`` prints the chosen config and the time tuning took."""

    def decorator(fn: Any) -> Autotuner:
        return Autotuner(fn, fn.arg_names, configs, key, reset_to_zero, restore_value, pre_hook=pre_hook,
                         post_hook=post_hook, prune_configs_by=prune_configs_by, warmup=warmup, rep=rep,
                         use_cuda_graph=use_cuda_graph, do_bench=do_bench, cache_results=cache_results)

    return decorator


def heuristics(values: dict[str, Callable[[dict], Any]]) -> Callable[[Any], Heuristics]:
    """``@heuristics({"BLOCK": lambda args: next_power_of_2(args["n"])})``: meta-parameters computed from the
    arguments of each launch."""

    def decorator(fn: Any) -> Heuristics:
        return Heuristics(fn, fn.arg_names, values)

    return decorator
