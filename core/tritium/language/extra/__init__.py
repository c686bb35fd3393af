"""Extra libraries: ``tl.extra.libdevice`` (the CUDA libdevice function set, for every backend), ``tl.extra.cpu``
(triton-cpu's), and the modules plugins provide for their targets (hookspecs' ``tritium_language_extras``, as
Triton's backends add ``triton.language.extra.<name>``), imported on first access."""
from __future__ import annotations

import importlib
from types import ModuleType
from typing import Optional

from . import libdevice  # noqa: F401

#: core's own subpackages here, imported on first access like the plugins' modules
_OWN = ("cpu", )
#: every module of core's here: a plugin's extra of one of these names is never reached
OWN_MODULES = ("libdevice", *_OWN)


def provider(name: str) -> Optional[str]:
    """The import path of the module the active plugins provide as ``tl.extra.<name>``, or None."""
    from ... import plugins    # here: `import tritium` must not load the plugin machinery (pluggy)
    found = plugins.registry().language_extras.get(name)
    return found[0].module if found is not None else None


def __getattr__(name: str) -> ModuleType:
    # reached only for names this module does not hold, so libdevice and a loaded cpu never come here
    if name in _OWN:
        return importlib.import_module(f"{__name__}.{name}")
    if name.startswith("__"):
        raise AttributeError(name)
    path = provider(name)
    if path is None:
        from ... import plugins
        offered = sorted(set(plugins.registry().language_extras) | set(OWN_MODULES))
        raise AttributeError(f"tl.extra has no module {name!r}: no active plugin provides it (tl.extra offers "
                             f"{', '.join(offered)}). A target's own module comes with its backend's distribution "
                             "(install it, or check TRITIUM_PLUGINS_DISABLE); tl.extra.libdevice serves every backend")
    # not kept as an attribute: which plugins are active may change (plugins.use), and the import is cached
    return importlib.import_module(path)
