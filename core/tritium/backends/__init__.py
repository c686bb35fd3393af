"""Backend base types (``GPUTarget``, ``BaseBackend``, ``DriverBase``) and access to installed backends."""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from collections.abc import Iterator, Mapping
from typing import Any

from .compiler import BaseBackend, GPUTarget, Language  # noqa: F401  (Triton: triton.backends.BaseBackend)


@dataclass
class Backend:
    """An installed backend, as Triton's ``triton.backends.backends[name]`` exposes it."""
    name: str
    compiler: Any
    driver: Any
    spec: Any = None
    plugin: Any = None


def _load(path: str) -> Any:
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(module), attr)


def _installed_backends() -> dict[str, Backend]:
    from ..plugins import registry
    out = {}
    for name, (spec, info) in registry().backends.items():
        out[name] = Backend(name, _load(spec.compiler), _load(spec.driver), spec, info)
    return out


class _Backends(Mapping):
    """Backends registered by the active plugins (their classes are imported on use). Read like Triton's
    ``triton.backends.backends`` dict (``"cpu" in backends``, ``backends["cpu"].compiler``) or called,
    ``backends()``, for a dict; either way it reflects the registry active at that moment."""

    def __call__(self) -> dict[str, Backend]:
        return _installed_backends()

    def __getitem__(self, name: str) -> Backend:
        return _installed_backends()[name]

    def __iter__(self) -> Iterator[str]:
        from ..plugins import registry
        return iter(list(registry().backends))

    def __len__(self) -> int:
        from ..plugins import registry
        return len(registry().backends)

    def __contains__(self, name: object) -> bool:
        from ..plugins import registry
        return name in registry().backends

    def __repr__(self) -> str:
        return f"backends({list(self)})"


backends = _Backends()
