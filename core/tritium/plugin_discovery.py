"""Finding plugins: entry points of group ``tritium.plugins`` and ``TRITIUM_PLUGIN_PATHS``.

Nothing else is imported. A plugin that is switched off (``TRITIUM_PLUGINS_ENABLE``/``_DISABLE``) is not
imported at all, so a broken plugin can be switched off by name.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from importlib.metadata import entry_points
from typing import Any, Iterable

from . import hookspecs as hs
from . import knobs
from .plugin_registry import PluginError, PluginRegistry

ENTRY_POINT_GROUP = "tritium.plugins"
_NATIVE = (".so", ".dylib", ".dll", ".pyd")


def wanted(name: str) -> bool:
    """Whether the enable/disable settings let plugin ``name`` load (``core`` loads unless disabled)."""
    enable, disable = knobs.plugins.enable, knobs.plugins.disable
    if name in disable:
        return False
    return not enable or name in enable or name == "core"


def _entry_points() -> Iterable[Any]:
    return entry_points(group=ENTRY_POINT_GROUP)


def entry_point_plugins() -> tuple[list[tuple[hs.PluginInfo, Any]], set[str]]:
    """The enabled plugins of installed distributions, and the names of all that were found."""
    items: list[tuple[hs.PluginInfo, Any]] = []
    seen: dict[str, str] = {}
    for ep in _entry_points():
        dist = getattr(ep, "dist", None)
        dist_name = dist.metadata["Name"] if dist is not None else "(unknown distribution)"
        version = dist.version if dist is not None else "0"
        if ep.name in seen:
            if seen[ep.name] != dist_name:
                raise PluginError(f"two distributions provide a plugin named {ep.name!r}: {seen[ep.name]} and "
                                  f"{dist_name}; uninstall one or disable it (TRITIUM_PLUGINS_DISABLE)")
            continue  # the same distribution found twice on sys.path
        seen[ep.name] = dist_name
        if not wanted(ep.name):
            continue
        try:
            obj = ep.load()
        except Exception as exc:
            raise PluginError(f"plugin {ep.name!r} (distribution {dist_name} {version}) failed while loading "
                              f"entry point {ep.value!r} during plugin discovery: {type(exc).__name__}: {exc}; "
                              f"fix or uninstall it, or set TRITIUM_PLUGINS_DISABLE={ep.name}") from exc
        items.append((hs.PluginInfo(name=ep.name, distribution=dist_name, version=version,
                                    source="entry point"), obj))
    return items, set(seen)


def _candidates(path: str) -> list[tuple[str, str]]:
    """(plugin name, file to import) for one entry of TRITIUM_PLUGIN_PATHS."""
    if path.endswith(_NATIVE):
        raise PluginError(f"TRITIUM_PLUGIN_PATHS names {path}, a native library: Triton loads C++ pass plugins "
                          "that way, tritium loads Python plugins (a .py file or a folder); see the README section "
                          "'Write an out-of-tree pass in 30 lines'")
    if os.path.isfile(path):
        return [(os.path.splitext(os.path.basename(path))[0], path)]
    if not os.path.isdir(path):
        raise PluginError(f"TRITIUM_PLUGIN_PATHS names {path}, which does not exist")
    init = os.path.join(path, "__init__.py")
    if os.path.isfile(init):
        return [(os.path.basename(path.rstrip(os.sep)), init)]
    out = []
    for entry in sorted(os.listdir(path)):
        full = os.path.join(path, entry)
        if entry.startswith(("_", ".")):
            continue
        if entry.endswith(".py") and os.path.isfile(full):
            out.append((entry[:-3], full))
        elif os.path.isfile(os.path.join(full, "__init__.py")):
            out.append((entry, os.path.join(full, "__init__.py")))
    return out


def _import_file(name: str, file: str) -> Any:
    # imported under its own name, so that dotted paths in it ("my_backend:MyCompiler", lazy("my_pass:run"))
    # resolve; a name some other module already has is refused rather than shadowed
    modname = name
    other = sys.modules.get(modname)
    if other is not None and os.path.realpath(getattr(other, "__file__", "") or "") != os.path.realpath(file):
        raise PluginError(f"plugin {name!r} from {file} (TRITIUM_PLUGIN_PATHS) has the name of module {name!r} "
                          f"already imported from {getattr(other, '__file__', None) or 'a built-in'}; rename "
                          f"the file or folder")
    package = os.path.basename(file) == "__init__.py"
    spec = importlib.util.spec_from_file_location(
        modname, file, submodule_search_locations=[os.path.dirname(file)] if package else None)
    if spec is None or spec.loader is None:
        raise PluginError(f"plugin {name!r} from {file} cannot be imported (not a Python file)")
    module = importlib.util.module_from_spec(spec)
    sys.modules[modname] = module   # relative imports inside a plugin package need it
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(modname, None)
        raise PluginError(f"plugin {name!r} from {file} (TRITIUM_PLUGIN_PATHS) failed while loading during "
                          f"plugin discovery: {type(exc).__name__}: {exc}") from exc
    return module


def _file_digest(file: str) -> str:
    files = [file]
    if os.path.basename(file) == "__init__.py":
        root = os.path.dirname(file)
        files = sorted(os.path.join(d, n) for d, _, ns in os.walk(root) for n in ns if n.endswith(".py"))
    h = hashlib.sha256()
    for f in files:
        with open(f, "rb") as fh:
            h.update(fh.read())
    return h.hexdigest()[:16]


def path_plugins(paths: Iterable[str]) -> tuple[list[tuple[hs.PluginInfo, Any]], set[str]]:
    """The enabled plugins of TRITIUM_PLUGIN_PATHS (files, plugin packages, or folders of either)."""
    items: list[tuple[hs.PluginInfo, Any]] = []
    found: set[str] = set()
    for raw in paths:
        path = os.path.abspath(os.path.expanduser(raw))
        for name, file in _candidates(path):
            found.add(name)
            if not wanted(name):
                continue
            module = _import_file(name, file)
            shown = os.path.dirname(file) if file.endswith("__init__.py") else file
            items.append((hs.PluginInfo(name=name, distribution=f"(path) {shown}",
                                        version="file-" + _file_digest(file), source=shown), module))
    return items, found


def discover() -> PluginRegistry:
    """Load the installed plugins and those on TRITIUM_PLUGIN_PATHS, honouring enable/disable."""
    items, found = entry_point_plugins()
    more, found_paths = path_plugins(knobs.plugins.paths)
    missing = sorted(set(knobs.plugins.enable) - found - found_paths - {"core"})
    if missing:
        raise PluginError(f"TRITIUM_PLUGINS_ENABLE names {', '.join(missing)}, which no installed distribution "
                          f"or TRITIUM_PLUGIN_PATHS entry provides (found: {', '.join(sorted(found | found_paths))})")
    return PluginRegistry(items + more)
