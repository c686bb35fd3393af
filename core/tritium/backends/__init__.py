"""Backend base types (``GPUTarget``, ``BaseBackend``, ``DriverBase``) and access to installed backends."""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any


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


def backends() -> dict[str, Backend]:
    """Backends registered by the active plugins (their classes are imported here)."""
    from ..plugins import registry
    out = {}
    for name, (spec, info) in registry().backends.items():
        out[name] = Backend(name, _load(spec.compiler), _load(spec.driver), spec, info)
    return out
