"""``JITFunction.device_caches``: tritium's per-driver kernel state, readable the way Triton 3.6 lays it out.

tritium keys the dictionary by driver (the launch path's :class:`~.launch.KernelState`). Code written for
Triton indexes it by device (``fn.device_caches[torch.cuda.current_device()]``) and unpacks Triton's tuple
``(kernel_cache, kernel_key_cache, target, backend, binder)``; a device key (anything that is not a driver)
gives that tuple for the active driver, whose state it creates when no launch did yet, as Triton's
``defaultdict`` does. ``kernel_cache`` maps each compiled specialization to its ``CompiledKernel`` and its
``clear()`` makes the next launch compile again (the hook is called again), which is what Triton's tests and
libraries use it for.
"""
from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any, Iterator

from .driver import driver


class DeviceCaches(dict):
    """driver -> KernelState; a device key reads the active driver's state as Triton's 5-tuple."""

    def __init__(self, fn: Any = None) -> None:
        super().__init__()
        self._fn = fn

    def __missing__(self, device: Any) -> tuple:
        from ..backends.driver import DriverBase
        if isinstance(device, DriverBase):
            raise KeyError(device)
        return triton_view(self._fn)


def _state(fn: Any) -> Any:
    from .launch import KernelState
    drv = driver._active or driver.default
    state = fn.device_caches.get(drv)
    if state is None:
        state = fn.device_caches.setdefault(drv, KernelState(fn, drv))
    return state


def triton_view(fn: Any) -> tuple:
    """``(kernel_cache, kernel_key_cache, target, backend, binder)`` of ``fn`` on the active driver."""
    state = _state(fn)
    if state.backend is None:
        from ..compiler.compiler import make_backend
        state.backend = make_backend(state.target)
    return (KernelCache(fn, state), {}, state.target, state.backend, TritonBinder(fn, state))


class KernelCache(MutableMapping):
    """The compiled kernels of one KernelState, as Triton's ``kernel_cache`` (key -> CompiledKernel)."""

    def __init__(self, fn: Any, state: Any) -> None:
        self._fn, self._state = fn, state

    def __getitem__(self, key: Any) -> Any:
        kernels = self._state.kernels
        try:
            return kernels[key].kernel
        except (KeyError, TypeError):
            pass
        # a hook's compile["key"] (the specialization key without the launch options, debug mode and settings):
        # the kernel last compiled for it
        for full in reversed(list(kernels)):
            if type(full) is tuple and full and full[0] == key:
                return kernels[full].kernel
        raise KeyError(key)

    def __contains__(self, key: Any) -> bool:
        try:
            self[key]
        except KeyError:
            return False
        return True

    def __setitem__(self, key: Any, value: Any) -> None:
        raise TypeError(f"{self._fn.__name__}.device_caches[...][0] holds tritium's launch entries: compiled kernels "
                        "are added by launching, warming up or preloading the kernel, not by assignment")

    def __delitem__(self, key: Any) -> None:
        del self._state.kernels[key]
        self._forget_hot()

    def __iter__(self) -> Iterator[Any]:
        return iter(list(self._state.kernels))

    def __len__(self) -> int:
        return len(self._state.kernels)

    def clear(self) -> None:
        self._state.kernels.clear()
        self._forget_hot()

    def _forget_hot(self) -> None:
        # the generated launch keeps its own table of the kernels it may launch (dispatch.py): a snapshot that
        # never matches sends the next launch through the full path, which compiles what is missing
        hp = getattr(self._fn, "_hot_path", None)
        if hp is not None:
            from .dispatch import Hot
            hp.ns["_hot"] = Hot(-1, None)


class TritonBinder:
    """Triton's ``binder(*args, **kwargs) -> (bound_args, specialization, options)`` over tritium's binder:
    ``bound_args`` {name: value}, ``specialization`` [(type, "D" or None)...] (``("constexpr", value)`` for
    compile-time values; tuples give tuples of both), ``options`` the launch options given."""

    def __init__(self, fn: Any, state: Any) -> None:
        self._fn, self._state = fn, state

    def __call__(self, *args: Any, **kwargs: Any) -> tuple:
        key, _, bound, options = self._state.binder(*args, **kwargs)
        spec = [_spec(p, k, True) for p, k in zip(self._fn.params, key)]
        return dict(zip(self._fn.arg_names, bound)), spec, options


def _spec(p: Any, k: tuple, top: bool) -> tuple:
    from .specialize import dtype_name
    from .structured import descriptor_signature
    tag = k[0]
    if tag == "C":
        return ("constexpr", k[2])
    if tag == "*":
        return (("*k" if p.is_const and top else "*") + dtype_name(k[1]), "D" if k[3] else None)
    if tag == "()":
        inner = [_spec(p, sk, False) for sk in k[1]]
        return (tuple(t for t, _ in inner), tuple(s for _, s in inner))
    if tag == "TD":
        return (descriptor_signature(k[1], k[3], k[4]), None)
    return (tag, "D" if k[1] == "D" else None)
