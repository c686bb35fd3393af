"""The plugin registry itself: checking plugins, ordering and calling their hooks, their knobs and cache keys.

Which registry is in effect, and discovery, are :mod:`tritium.plugins` and :mod:`tritium.plugin_discovery`;
both build on this module.
"""
from __future__ import annotations

import hashlib
import importlib
import inspect
import itertools
import os
import sys
from types import ModuleType
from typing import Any, Callable, Optional, Sequence

import pluggy

from . import hookspecs as hs
from . import knobs

ENTRY_POINT_GROUP = "tritium.plugins"


class PluginError(RuntimeError):
    """A plugin could not be loaded or misbehaved. The message names the plugin and its distribution."""


def _is_backend_provider(obj: Any) -> bool:
    return callable(getattr(obj, "tritium_backends", None))


def _order_key(info: hs.PluginInfo, obj: Any) -> tuple[int, str]:
    # the documented order (hookspecs): core, then plugins that provide backends, then the others; by name
    return (0 if info.name == "core" else 1 if _is_backend_provider(obj) else 2, info.name)


_serial = itertools.count(1)
# plugin knob groups by group name -> the plugin that declared it (across registries: knobs are global)
_knob_owners: dict[str, hs.PluginInfo] = {}


class PluginRegistry:
    """A set of active plugins and what they registered: backends, passes, knob groups, ``tl.extra`` modules.

    Building one calls ``tritium_backends``, ``tritium_passes``, ``tritium_knobs`` and ``tritium_language_extras``
    of every plugin, so a name registered twice is an error here, not at the first compilation."""

    def __init__(self, plugins: Sequence[tuple[hs.PluginInfo, Any]] = ()) -> None:
        self.serial = next(_serial)   # unique for the process's lifetime, unlike id()
        self.pm = pluggy.PluginManager(hs.PROJECT)
        self.pm.add_hookspecs(hs.TritiumHookSpecs)
        self.infos: dict[str, hs.PluginInfo] = {}
        self._identity: Optional[str] = None
        ordered = sorted(plugins, key=lambda p: _order_key(*p))
        self.order = [info.name for info, _ in ordered]
        # pluggy calls the most recently registered first: register in reverse of the documented order
        for info, obj in reversed(ordered):
            self._register(info, obj)
        self.backends = self._collect("tritium_backends", "backend", hs.BackendSpec)
        self.passes = self._collect("tritium_passes", "pass", hs.PassSpec)
        self.language_extras = self._collect("tritium_language_extras", "language extra", hs.LanguageExtra)
        self.knob_groups: dict[str, tuple[Any, hs.PluginInfo]] = {}
        self._load_knobs()

    # -- construction -----------------------------------------------------------------------------
    @classmethod
    def from_objects(cls, objects: dict[str, Any], distribution: str = "(in process)",
                     version: Optional[str] = None) -> "PluginRegistry":
        """Build a registry from plugin modules or objects given by name (tests, embedding applications).

        A value may be a module, any object with hook functions, or a module's import path."""
        items = []
        for name, obj in objects.items():
            if isinstance(obj, str):
                obj = importlib.import_module(obj)
            info = hs.PluginInfo(name=name, distribution=distribution, version=version or _object_version(obj),
                                 source="python object")
            items.append((info, obj))
        return cls(items)

    def _register(self, info: hs.PluginInfo, obj: Any) -> None:
        _check_api(info, obj)
        hooks = {n for n in dir(obj) if n.startswith("tritium_") and callable(getattr(obj, n, None))}
        unknown = sorted(hooks - set(hs.HOOK_NAMES))
        if unknown:
            raise PluginError(f"{info.describe()} defines {', '.join(unknown)}, which are not tritium hooks "
                              f"(known hooks: {', '.join(hs.HOOK_NAMES)}); check the spelling")
        if info.name in self.infos:
            other = self.infos[info.name]
            raise PluginError(f"two plugins are named {info.name!r}: distribution {other.distribution} "
                              f"({other.source}) and distribution {info.distribution} ({info.source}); "
                              f"uninstall or disable one (TRITIUM_PLUGINS_DISABLE)")
        for other in self.infos.values():
            if other.module is obj:
                raise PluginError(f"{info.describe()} and {other.describe()} are the same object "
                                  f"({getattr(obj, '__name__', obj)!s}); a plugin module registers once, "
                                  f"under one entry point")
        info.module = obj
        try:
            self.pm.register(obj, name=info.name)
        except ValueError as exc:  # pluggy: an equal object registered before
            raise PluginError(f"{info.describe()} could not be registered: {exc}") from None
        for impl in self.pm.get_hookcallers(obj) or ():
            for hi in impl.get_hookimpls():
                if hi.plugin is obj and (hi.hookwrapper or getattr(hi, "wrapper", False)):
                    self.pm.unregister(obj)
                    raise PluginError(f"{info.describe()} marks {hi.function.__name__} as a hook wrapper; "
                                      "tritium hooks are plain calls: drop hookwrapper/wrapper=True")
        self.infos[info.name] = info

    def _collect(self, hook: str, what: str, kind: type) -> dict[str, tuple[Any, hs.PluginInfo]]:
        found: dict[str, tuple[Any, hs.PluginInfo]] = {}
        for info, specs in self.call_each(hook):
            for spec in specs or ():
                if not isinstance(spec, kind):
                    raise PluginError(f"{info.describe()} returned {spec!r} from {hook}; expected "
                                      f"tritium.hookspecs.{kind.__name__}")
                if spec.name in found:
                    other = found[spec.name][1]
                    raise PluginError(f"{what} {spec.name!r} is registered by two plugins: {other.name!r} of "
                                      f"distribution {other.distribution} and {info.name!r} of distribution "
                                      f"{info.distribution}; uninstall or disable one (TRITIUM_PLUGINS_DISABLE)")
                found[spec.name] = (spec, info)
        return found

    def _load_knobs(self) -> None:
        for info, groups in self.call_each("tritium_knobs"):
            for group in groups or ():
                if not isinstance(group, knobs.KnobGroup):
                    raise PluginError(f"{info.describe()} returned {group!r} from tritium_knobs; expected a "
                                      "tritium.knobs.KnobGroup instance")
                _register_knob_group(group, info)
                self.knob_groups[group.group_name] = (group, info)

    # -- calling hooks ----------------------------------------------------------------------------
    def impls(self, hook: str) -> list[tuple[hs.PluginInfo, Callable[..., Any], tuple[str, ...]]]:
        """(plugin, function, argument names) of every implementation of ``hook``, in calling order."""
        caller = getattr(self.pm.hook, hook)
        # pluggy lists implementations last-called-first (tryfirst at the end, trylast at the start)
        return [(self.infos[i.plugin_name], i.function, tuple(i.argnames)) for i in reversed(caller.get_hookimpls())]

    def call_each(self, hook: str, before: Optional[Callable[[hs.PluginInfo], None]] = None,
                  **kwargs: Any) -> list[tuple[hs.PluginInfo, Any]]:
        """Call every implementation of ``hook`` in the documented order and return (plugin, result) pairs.

        ``before(plugin)`` runs before each call (e.g. to record who edits a pipeline). An exception becomes a
        :class:`PluginError` naming the plugin, its distribution, the hook and the stage (``kwargs["stage"]``)."""
        stage = kwargs.get("stage", "")
        results = []
        for info, fn, argnames in self.impls(hook):
            if before is not None:
                before(info)
            try:
                results.append((info, fn(**{k: kwargs[k] for k in argnames})))
            except PluginError:
                raise
            except Exception as exc:
                where = f" in stage {stage!r}" if stage else ""
                raise PluginError(f"{info.describe()} failed in hook {hook}{where}: "
                                  f"{type(exc).__name__}: {exc}") from exc
        return results

    # -- cache keys -------------------------------------------------------------------------------
    def identity(self) -> str:
        """Digest of the active plugins' names, distributions, versions, API versions and source: part of
        every cache key, so enabling, disabling, upgrading or editing a plugin never reuses a kernel."""
        if self._identity is None:
            parts = []
            for name in self.order:
                i = self.infos[name]
                parts.append(f"{i.name}={i.distribution}@{i.version}@api{i.api[0]}.{i.api[1]}"
                             f"@{_source_digest(i.module)}")
                parts += [f"{i.name}:{k}={v}" for k, v in sorted(i.extra_key.items())]
            self._identity = hashlib.sha256("\n".join(parts).encode()).hexdigest()
        return self._identity

    def cache_key(self, options: Any, backend: Any) -> str:
        """What the plugins contribute to a kernel's cache key: :meth:`identity`, each plugin's
        ``tritium_cache_key``, the values of every plugin knob group and of the knobs passes ``read``."""
        parts = [self.identity()]
        parts += [f"{info.name}={k}" for info, k in self.call_each("tritium_cache_key", options=options,
                                                                      backend=backend) if k]
        for name, (group, _) in sorted(self.knob_groups.items()):
            exempt = set(getattr(group, "not_in_cache_key", ()))
            parts += [f"knob {name}.{k}={v!r}" for k, v in sorted(group.values().items()) if k not in exempt]
        for pname, (spec, info) in sorted(self.passes.items()):
            for ref in spec.reads:
                parts.append(f"read {pname}:{ref}={_read_knob(ref, spec, info)!r}")
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _read_knob(ref: str, spec: hs.PassSpec, info: hs.PluginInfo) -> Any:
    group, _, name = ref.partition(".")
    try:
        return getattr(knobs.groups()[group], name)
    except (KeyError, AttributeError):
        raise PluginError(f"pass {spec.name!r} of {info.describe()} reads knob {ref!r}, which does not exist "
                          f"(groups: {', '.join(sorted(knobs.groups()))})") from None


def _register_knob_group(group: Any, info: hs.PluginInfo) -> None:
    name = group.group_name
    owner = _knob_owners.get(name)
    if name in knobs.groups() and owner is None:
        raise PluginError(f"{info.describe()} declares knob group {name!r}, which is tritium's own; "
                          f"choose another group_name")
    if owner is not None and owner.name != info.name:
        raise PluginError(f"knob group {name!r} is declared by two plugins: {owner.name!r} of distribution "
                          f"{owner.distribution} and {info.name!r} of distribution {info.distribution}")
    mine = type(group).descriptors()
    for gname, other in knobs.groups().items():
        if gname == name:
            continue
        for kname, knob in type(other).descriptors().items():
            clash = set(knob.env) & {e for k in mine.values() for e in k.env}
            if clash:
                who = _knob_owners.get(gname)
                whose = f"{who.describe()}" if who else "tritium"
                raise PluginError(f"{info.describe()} declares environment variable {sorted(clash)[0]} in knob "
                                  f"group {name!r}, which knob {gname}.{kname} of {whose} already reads; use a "
                                  f"prefix of your own (TRITIUM_{name.upper()}_...)")
    try:
        knobs.register_group(group, f"plugin {info.name!r}")
    except knobs.KnobError as exc:
        raise PluginError(f"{info.describe()}: {exc}") from None
    _knob_owners[name] = info


def _check_api(info: hs.PluginInfo, obj: Any) -> None:
    api = getattr(obj, "TRITIUM_PLUGIN_API", None)
    where = getattr(obj, "__name__", type(obj).__name__)
    if api is None:
        raise PluginError(f"{info.describe()} does not declare the plugin API it targets; add "
                          f"`TRITIUM_PLUGIN_API = {hs.PLUGIN_API}` to {where}")
    try:
        major, minor = (int(v) for v in api)
    except (TypeError, ValueError):
        raise PluginError(f"{info.describe()} declares TRITIUM_PLUGIN_API = {api!r}; expected a (major, minor) "
                          f"pair such as {hs.PLUGIN_API}") from None
    if major != hs.PLUGIN_API[0] or minor > hs.PLUGIN_API[1]:
        raise PluginError(f"{info.describe()} targets plugin API {major}.{minor}, but this tritium provides "
                          f"{hs.PLUGIN_API[0]}.{hs.PLUGIN_API[1]}; install a version of {info.distribution} made "
                          f"for plugin API {hs.PLUGIN_API[0]}.x, or a tritium that provides {major}.{minor}")
    info.api = (major, minor)


def _object_version(obj: Any) -> str:
    # in-process plugins have no distribution version; their source digest (in the identity) tracks edits
    return "0+local"


_digests: dict[tuple[str, float], str] = {}


def _source_digest(obj: Any) -> str:
    """A digest of a plugin's code: every .py file of the top-level package of its module (a plugin edited
    in an editable install changes the cache key), or the source of its hook functions."""
    files: list[str] = []
    if isinstance(obj, ModuleType) and getattr(obj, "__file__", None):
        top = sys.modules.get(obj.__name__.split(".")[0])
        path = getattr(top, "__file__", None) or obj.__file__
        if os.path.basename(path) == "__init__.py":
            root = os.path.dirname(path)
            for d, subdirs, names in os.walk(root):
                subdirs[:] = sorted(s for s in subdirs if not s.startswith((".", "__pycache__")))
                files += [os.path.join(d, n) for n in sorted(names) if n.endswith(".py")]
        else:
            files = [obj.__file__]
    h = hashlib.sha256()
    if files:
        base = os.path.dirname(files[0])
        for f in files:
            try:
                st = os.stat(f)
            except OSError:
                continue
            key = (f, st.st_mtime)
            d = _digests.get(key)
            if d is None:
                with open(f, "rb") as fh:
                    d = _digests[key] = hashlib.sha256(fh.read()).hexdigest()
            h.update(f"{os.path.relpath(f, base)}:{d}\n".encode())
        return h.hexdigest()[:16]
    for n in sorted(hs.HOOK_NAMES):
        fn = getattr(obj, n, None)
        if fn is not None:
            try:
                h.update(inspect.getsource(fn).encode())
            except (OSError, TypeError):
                h.update(repr(getattr(fn, "__code__", fn)).encode())
    return h.hexdigest()[:16]
