"""``kernel[grid](...)`` for wrappers of @jit functions (the autotuner, ``@heuristics``).

Below both the autotuner and its compile workers (``autotune_compile``), which unwrap these wrappers.
"""
from __future__ import annotations

from typing import Any, Callable


class _Launchable:
    """``kernel[grid](...)`` for wrappers of JIT functions."""
    fn: Any
    run: Callable[..., Any]   # each wrapper's own

    def __getitem__(self, grid: Any) -> Callable[..., Any]:
        run = self.run
        return lambda *args, **kwargs: run(*args, grid=grid, warmup=False, **kwargs)

    @property
    def base_fn(self) -> Any:
        fn = self.fn
        while isinstance(fn, _Launchable):
            fn = fn.fn
        return fn

    def __getattr__(self, name: str) -> Any:
        # cache_key, src, arg_names, device_caches...: what the wrapped @jit function knows
        if name.startswith("__") or name == "fn":
            raise AttributeError(name)
        return getattr(self.fn, name)


class Heuristics(_Launchable):
    """Computes meta-parameters from the other arguments on every launch."""

    def __init__(self, fn: Any, arg_names: list[str], values: dict[str, Callable[[dict], Any]]) -> None:
        self.fn = fn
        self.values = values
        self.arg_names = list(arg_names)
        self.__name__ = getattr(fn, "__name__", "kernel")

    def run(self, *args: Any, **kwargs: Any) -> Any:
        for name, heur in self.values.items():
            kwargs[name] = heur({**dict(zip(self.arg_names, args)), **kwargs})
        return self.fn.run(*args, **kwargs)

    def warmup(self, *args: Any, **kwargs: Any) -> Any:
        for name, heur in self.values.items():
            kwargs[name] = heur({**dict(zip(self.arg_names, args)), **kwargs})
        return self.fn.warmup(*args, **kwargs)
