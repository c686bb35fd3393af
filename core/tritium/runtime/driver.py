"""The active driver: ``tritium.runtime.driver.active`` (Triton's spelling)."""
from __future__ import annotations

import threading
from typing import Any, Optional

from .. import knobs

_plugins: Any = None  # tritium.plugins (pluggy) loads on the first launch, not on import


class NoActiveDriver(RuntimeError):
    pass


def _select_backend() -> tuple[str, Any]:
    from ..backends import backends
    found = backends()
    wanted = knobs.runtime.default_backend
    if wanted:
        if wanted not in found:
            raise NoActiveDriver(f"TRITON_DEFAULT_BACKEND={wanted!r}, but the installed backends are "
                                 f"{', '.join(sorted(found)) or 'none'}; install tritium-{wanted} or change the "
                                 "setting")
        return wanted, found[wanted]
    active = []
    for name, b in found.items():
        try:
            ok = b.driver.is_active()
        except Exception:
            ok = False
        if ok:
            active.append((-(b.spec.priority if b.spec else 0), name, b))
    if not active:
        raise NoActiveDriver("no tritium backend can run on this machine; installed backends: "
                             f"{', '.join(sorted(found)) or 'none'} (install tritium-cpu, which runs anywhere)")
    active.sort(key=lambda t: (t[0], t[1]))
    _, name, b = active[0]
    return name, b


class DriverConfig:
    """Holds the active driver; ``set_active`` overrides it, ``reset_active`` returns to discovery.

    The default driver is chosen again when the plugin registry in effect changes or when
    ``knobs.runtime.default_backend`` is set from Python. ``active`` is read on every launch, so (as in
    Triton) the environment variable ``TRITON_DEFAULT_BACKEND`` is read when the driver is chosen, not on
    every launch: after changing it, call ``reset_active()``.
    """

    def __init__(self) -> None:
        self._default: Optional[Any] = None
        self._key: Any = None
        self._active: Optional[Any] = None
        self._renew_locks()
        self.backend_name: Optional[str] = None
        from .forksafe import renew_in_child
        renew_in_child(self)

    def _renew_locks(self) -> None:
        self._lock = threading.Lock()

    @property
    def default(self) -> Any:
        global _plugins
        if _plugins is None:
            from .. import plugins
            _plugins = plugins
        reg = _plugins._override[-1] if _plugins._override else _plugins.registry()
        key = (reg, knobs.runtime.__dict__.get("default_backend"))
        default = self._default
        if default is None or self._key != key:
            with self._lock:
                if self._default is None or self._key != key:
                    name, b = _select_backend()
                    self._default = b.driver()
                    self.backend_name = name
                    self._key = key
                default = self._default
        return default

    @property
    def active(self) -> Any:
        a = self._active
        return a if a is not None else self.default

    def set_active(self, driver: Any) -> None:
        self._active = driver
        knobs.settings_changed()  # launches cache the driver they resolved while no setting changes

    def reset_active(self) -> None:
        self._active = None
        self._default = None
        knobs.settings_changed()


driver = DriverConfig()
