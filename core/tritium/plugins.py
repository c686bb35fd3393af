"""The registry of plugins (backends and pass packages alike): checking, ordering, calling, cache keys.

Discovery (:mod:`tritium.plugin_discovery`) is explicit: the installed distributions' entry points of group
``tritium.plugins``, plus the files and folders named in ``TRITIUM_PLUGIN_PATHS``/``TRITON_PLUGIN_PATHS``.
``TRITIUM_PLUGINS_ENABLE``/``TRITIUM_PLUGINS_DISABLE`` (or :func:`configure` from Python) switch plugins per
process. Tests build their own :class:`PluginRegistry` and install it with :func:`use`, so they never
depend on what happens to be installed. The order in which plugins are called is documented in
:mod:`tritium.hookspecs`.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator, Optional, Sequence

from . import knobs
from .plugin_discovery import discover as _discover
from .plugin_registry import ENTRY_POINT_GROUP as ENTRY_POINT_GROUP
from .plugin_registry import PluginError as PluginError
from .plugin_registry import PluginRegistry as PluginRegistry

# --------------------------------------------------------------------------------------------------
# the registry in effect

_lock = threading.RLock()
_active: Optional[PluginRegistry] = None
_override: list[PluginRegistry] = []


def registry() -> PluginRegistry:
    """The registry in effect: the one installed by :func:`use`, else the discovered one (loaded once; call
    :func:`reload` or :func:`configure` after changing plugin knobs from Python)."""
    if _override:
        return _override[-1]
    global _active
    if _active is None:
        with _lock:
            if _active is None:
                _active = _discover()
    return _active


def jit_key() -> tuple:
    """A cheap key (about a microsecond) of the plugin state compiled kernels depend on: the registry in effect
    and the plugin knob values set from Python. An in-memory kernel cache that includes it never hands out a
    kernel compiled under other plugins or other plugin settings (the on-disk cache key covers all of that,
    environment included)."""
    reg = registry()
    return (reg.serial, *(tuple(g.__dict__.items()) for g, _ in reg.knob_groups.values()))


def reload() -> PluginRegistry:
    """Discover again (after changing enable/disable knobs or TRITIUM_PLUGIN_PATHS)."""
    global _active
    with _lock:
        _active = _discover()
    knobs.settings_changed()  # kernels cached in memory were keyed on the registry that was in effect
    return _active


def configure(enable: Optional[Sequence[str]] = None, disable: Optional[Sequence[str]] = None,
              paths: Optional[Sequence[str]] = None) -> PluginRegistry:
    """Switch plugins for this process from Python, then discover again::

        tritium.plugins.configure(disable=["nanfinder"])

    ``enable`` lists the only plugins that load (``core`` always does), ``disable`` those that do not,
    ``paths`` files or folders of plugins to load without installing. ``None`` leaves a setting as it is."""
    if enable is not None:
        knobs.plugins.enable = tuple(enable)
    if disable is not None:
        knobs.plugins.disable = tuple(disable)
    if paths is not None:
        knobs.plugins.paths = tuple(paths)
    return reload()


@contextmanager
def use(reg: PluginRegistry) -> Iterator[PluginRegistry]:
    """Make ``reg`` the registry of this process inside the block (tests, embedding applications)."""
    with _lock:
        _override.append(reg)
    knobs.settings_changed()  # kernels cached in memory were keyed on the registry that was in effect
    try:
        yield reg
    finally:
        with _lock:
            # the innermost use of reg ends (the same registry may be installed in nested blocks)
            del _override[len(_override) - 1 - _override[::-1].index(reg)]
        knobs.settings_changed()


def discover() -> PluginRegistry:
    """Load the installed plugins and those on TRITIUM_PLUGIN_PATHS, honouring enable/disable."""
    return _discover()
