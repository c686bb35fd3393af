"""Core's own plugin: the target-independent passes, registered through the same hooks as any third party."""
from __future__ import annotations

from .hookspecs import PLUGIN_API, hookimpl
from .passes import core_passes

TRITIUM_PLUGIN_API = PLUGIN_API


@hookimpl
def tritium_passes():
    return core_passes()
