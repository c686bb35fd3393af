"""Finding, checking and registering plugins (backends and pass packages alike).

Discovery is explicit: the installed distributions' entry points of group ``tritium.plugins``, plus the
files and folders named in ``TRITIUM_PLUGIN_PATHS``/``TRITON_PLUGIN_PATHS``. Nothing else is imported.
``TRITIUM_PLUGINS_ENABLE``/``TRITIUM_PLUGINS_DISABLE`` (or ``knobs.plugins.enable/disable``) switch
plugins per process. Tests build their own :class:`PluginRegistry` and install it with :func:`use`, so
they never depend on what happens to be installed.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
import threading
from contextlib import contextmanager
from types import ModuleType
from typing import Any, Iterable, Iterator, Optional, Sequence

import pluggy

from . import hookspecs as hs
from . import knobs

ENTRY_POINT_GROUP = "tritium.plugins"


class PluginError(RuntimeError):
    """A plugin could not be loaded or misbehaved. The message names the plugin and its distribution."""


def _sort_key(info: hs.PluginInfo) -> tuple[int, str]:
    # core first, then everything else by name: a documented, stable order
    return (0 if info.name == "core" else 1, info.name)


class PluginRegistry:
    """The set of active plugins and what they registered (backends, passes, knob groups)."""

    def __init__(self, plugins: Sequence[tuple[hs.PluginInfo, Any]] = ()) -> None:
        self.pm = pluggy.PluginManager(hs.PROJECT)
        self.pm.add_hookspecs(hs.TritiumHookSpecs)
        self.infos: dict[str, hs.PluginInfo] = {}
        self._backends: Optional[dict[str, tuple[hs.BackendSpec, hs.PluginInfo]]] = None
        self._passes: Optional[dict[str, tuple[hs.PassSpec, hs.PluginInfo]]] = None
        self._key: Optional[str] = None
        # pluggy calls the most recently registered first; register in reverse of the documented order
        for info, obj in sorted(plugins, key=lambda p: _sort_key(p[0]), reverse=True):
            self._register(info, obj)
        self._load_knobs()

    # -- construction -----------------------------------------------------------------------------
    @classmethod
    def from_objects(cls, objects: dict[str, Any], distribution: str = "(in process)") -> "PluginRegistry":
        """Build a registry from plugin modules/objects given by name (for tests and embedding)."""
        items = []
        for name, obj in objects.items():
            if isinstance(obj, str):
                obj = importlib.import_module(obj)
            items.append((_info_for(name, obj, distribution, "python object"), obj))
        return cls(items)

    def _register(self, info: hs.PluginInfo, obj: Any) -> None:
        _check_api(info, obj)
        unknown = [n for n in dir(obj) if n.startswith("tritium_") and callable(getattr(obj, n, None))
                   and n not in hs.HOOK_NAMES]
        if unknown:
            raise PluginError(f"{info.describe()} defines {', '.join(unknown)}, which are not tritium hooks "
                              f"(known hooks: {', '.join(hs.HOOK_NAMES)})")
        if info.name in self.infos:
            other = self.infos[info.name]
            raise PluginError(f"two plugins are named {info.name!r}: distribution {other.distribution} "
                              f"and distribution {info.distribution}")
        self.infos[info.name] = info
        info.module = obj
        try:
            self.pm.register(obj, name=info.name)
        except ValueError as exc:  # pluggy: the same object registered twice
            raise PluginError(f"{info.describe()} could not be registered: {exc}") from None

    def _load_knobs(self) -> None:
        for info, groups in self.call_each("tritium_knobs"):
            for group in groups or ():
                try:
                    knobs.register_group(group, f"{info.name} ({info.distribution})")
                except knobs.KnobError as exc:
                    raise PluginError(str(exc)) from None

    # -- calling hooks ----------------------------------------------------------------------------
    def plugin_of(self, impl: pluggy.HookImpl) -> hs.PluginInfo:
        return self.infos[impl.plugin_name]

    def call_each(self, hook: str, stage: str = "", **kwargs: Any) -> list[tuple[hs.PluginInfo, Any]]:
        """Call every implementation of ``hook`` in the documented order; a failure names the plugin."""
        caller = getattr(self.pm.hook, hook)
        results = []
        for impl in reversed(caller.get_hookimpls()):  # pluggy's list is last-called-first
            info = self.infos[impl.plugin_name]
            try:
                results.append((info, impl.function(**{k: kwargs[k] for k in impl.argnames})))
            except PluginError:
                raise
            except Exception as exc:
                where = f" in stage {stage!r}" if stage else ""
                raise PluginError(f"{info.describe()} failed in hook {hook}{where}: "
                                  f"{type(exc).__name__}: {exc}") from exc
        return results

    # -- what plugins registered ------------------------------------------------------------------
    @property
    def backends(self) -> dict[str, tuple[hs.BackendSpec, hs.PluginInfo]]:
        if self._backends is None:
            found: dict[str, tuple[hs.BackendSpec, hs.PluginInfo]] = {}
            for info, specs in self.call_each("tritium_backends"):
                for spec in specs or ():
                    if spec.name in found:
                        other = found[spec.name][1]
                        raise PluginError(f"backend {spec.name!r} is provided by two distributions: "
                                          f"{other.distribution} (plugin {other.name!r}) and "
                                          f"{info.distribution} (plugin {info.name!r}); uninstall or "
                                          f"disable one (TRITIUM_PLUGINS_DISABLE)")
                    found[spec.name] = (spec, info)
            self._backends = found
        return self._backends

    @property
    def passes(self) -> dict[str, tuple[hs.PassSpec, hs.PluginInfo]]:
        if self._passes is None:
            found: dict[str, tuple[hs.PassSpec, hs.PluginInfo]] = {}
            for info, specs in self.call_each("tritium_passes"):
                for spec in specs or ():
                    if spec.name in found:
                        other = found[spec.name][1]
                        raise PluginError(f"pass {spec.name!r} is registered by two distributions: "
                                          f"{other.distribution} (plugin {other.name!r}) and "
                                          f"{info.distribution} (plugin {info.name!r})")
                    found[spec.name] = (spec, info)
            self._passes = found
        return self._passes

    def identity(self) -> str:
        """Names, distributions and versions of the active plugins: part of every cache key."""
        if self._key is None:
            parts = [f"{i.name}={i.distribution}@{i.version}@api{i.api[0]}.{i.api[1]}"
                     for i in sorted(self.infos.values(), key=_sort_key)]
            for i in sorted(self.infos.values(), key=_sort_key):
                parts += [f"{i.name}:{k}={v}" for k, v in sorted(i.extra_key.items())]
            self._key = hashlib.sha256("\n".join(parts).encode()).hexdigest()
        return self._key


def _check_api(info: hs.PluginInfo, obj: Any) -> None:
    api = getattr(obj, "TRITIUM_PLUGIN_API", None)
    if api is None:
        raise PluginError(f"{info.describe()} does not declare TRITIUM_PLUGIN_API; add "
                          f"`TRITIUM_PLUGIN_API = {hs.PLUGIN_API}` to {getattr(obj, '__name__', obj)!s}")
    api = tuple(api)
    if len(api) != 2 or api[0] != hs.PLUGIN_API[0] or api[1] > hs.PLUGIN_API[1]:
        raise PluginError(f"{info.describe()} targets plugin API {api[0]}.{api[1] if len(api) > 1 else 0}, "
                          f"but this tritium provides {hs.PLUGIN_API[0]}.{hs.PLUGIN_API[1]}; "
                          f"install a version of {info.distribution} made for it")
    info.api = (int(api[0]), int(api[1]))


def _info_for(name: str, obj: Any, distribution: str, source: str, version: str = "0") -> hs.PluginInfo:
    if isinstance(obj, ModuleType) and getattr(obj, "__file__", None) and source == "python object":
        # in-process plugins have no version: hash their source so that an edit changes the cache key
        try:
            with open(obj.__file__, "rb") as f:
                version = "src-" + hashlib.sha256(f.read()).hexdigest()[:16]
        except OSError:
            pass
    return hs.PluginInfo(name=name, distribution=distribution, version=version, source=source)


# --------------------------------------------------------------------------------------------------
# discovery

def _wanted(name: str) -> bool:
    enable, disable = knobs.plugins.enable, knobs.plugins.disable
    if name in disable:
        return False
    # core and the backends it needs to run at all can only be turned off by name
    return not enable or name in enable or name == "core"


def _entry_points() -> Iterable[Any]:
    from importlib.metadata import entry_points
    return entry_points(group=ENTRY_POINT_GROUP)


def _load_path_plugins(paths: Iterable[str]) -> list[tuple[hs.PluginInfo, Any]]:
    out = []
    for path in paths:
        path = os.path.abspath(os.path.expanduser(path))
        files = []
        if os.path.isdir(path):
            files = sorted(os.path.join(path, f) for f in os.listdir(path)
                           if f.endswith(".py") and not f.startswith("_"))
        elif os.path.isfile(path):
            files = [path]
        else:
            raise PluginError(f"TRITIUM_PLUGIN_PATHS names {path}, which does not exist")
        for file in files:
            name = os.path.splitext(os.path.basename(file))[0]
            if not _wanted(name):
                continue
            modname = f"tritium_path_plugin_{name}"
            spec = importlib.util.spec_from_file_location(modname, file)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            try:
                sys.modules[modname] = module
                spec.loader.exec_module(module)
            except Exception as exc:
                sys.modules.pop(modname, None)
                raise PluginError(f"plugin {name!r} from {file} failed to import: "
                                  f"{type(exc).__name__}: {exc}") from exc
            with open(file, "rb") as f:
                version = "file-" + hashlib.sha256(f.read()).hexdigest()[:16]
            out.append((hs.PluginInfo(name=name, distribution=f"(path) {file}", version=version,
                                      source=file), module))
    return out


def discover() -> PluginRegistry:
    """Load the installed plugins and those on TRITIUM_PLUGIN_PATHS, honouring enable/disable."""
    items: list[tuple[hs.PluginInfo, Any]] = []
    seen: dict[str, str] = {}
    for ep in _entry_points():
        if not _wanted(ep.name):
            continue
        dist = getattr(ep, "dist", None)
        dist_name = dist.metadata["Name"] if dist is not None else "(unknown distribution)"
        version = dist.version if dist is not None else "0"
        if ep.name in seen and seen[ep.name] != dist_name:
            raise PluginError(f"two distributions provide a plugin named {ep.name!r}: {seen[ep.name]} and "
                              f"{dist_name}; uninstall one or disable it (TRITIUM_PLUGINS_DISABLE)")
        if ep.name in seen:
            continue  # the same distribution seen twice on sys.path
        seen[ep.name] = dist_name
        try:
            obj = ep.load()
        except Exception as exc:
            raise PluginError(f"plugin {ep.name!r} (distribution {dist_name} {version}) failed to load "
                              f"from entry point {ep.value!r}: {type(exc).__name__}: {exc}") from exc
        items.append((hs.PluginInfo(name=ep.name, distribution=dist_name, version=version,
                                    source="entry point"), obj))
    items += _load_path_plugins(knobs.plugins.paths)
    return PluginRegistry(items)


_lock = threading.Lock()
_active: Optional[PluginRegistry] = None
_override: list[PluginRegistry] = []


def registry() -> PluginRegistry:
    """The registry in effect: the one installed by :func:`use`, else the discovered one (loaded once)."""
    if _override:
        return _override[-1]
    global _active
    if _active is None:
        with _lock:
            if _active is None:
                _active = discover()
    return _active


def reload() -> PluginRegistry:
    """Discover again (after changing enable/disable knobs or TRITIUM_PLUGIN_PATHS)."""
    global _active
    with _lock:
        _active = discover()
    return _active


@contextmanager
def use(reg: PluginRegistry) -> Iterator[PluginRegistry]:
    """Make ``reg`` the registry of this process inside the block (tests, embedding applications)."""
    _override.append(reg)
    try:
        yield reg
    finally:
        _override.pop()
