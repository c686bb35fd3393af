"""The one extension surface of tritium.

Every way to extend tritium is a hook below. A plugin is a module (or object) holding functions marked
``@hookimpl`` with these names, found through an entry point of the group ``tritium.plugins`` (or a
file or folder named in ``TRITIUM_PLUGIN_PATHS``), and declaring the plugin API it targets::

    # my_plugin.py
    import tritium.hookspecs as hs
    TRITIUM_PLUGIN_API = hs.PLUGIN_API

    @hs.hookimpl
    def tritium_passes():
        return [hs.PassSpec("my-pass", run_my_pass, "what it does")]

Core's own passes, the CPU backend and every in-repo plugin register exactly this way.

Order
-----
Plugins are called in one documented order, the same for every hook:

1. ``core`` (tritium's own plugin, :mod:`tritium.builtin_plugin`);
2. plugins that provide backends (they implement ``tritium_backends``), by name;
3. every other plugin (entry points and ``TRITIUM_PLUGIN_PATHS`` alike), by name.

``@hookimpl(tryfirst=True)`` moves one implementation to the front, ``trylast=True`` to the end.
Hook wrappers (``hookwrapper``/``wrapper``) are refused: every hook here is a plain call.

When each hook runs:

- building the registry (discovery, or :class:`tritium.plugins.PluginRegistry`): ``tritium_backends``,
  ``tritium_passes``, ``tritium_knobs`` and ``tritium_language_extras``, once each, so that a name registered
  twice fails at once;
- ``tritium.compile``: ``tritium_cache_key`` (part of the cache key); on a cache miss the backend fills
  its stages, then every plugin's ``tritium_add_stages`` runs, then the seed's
  ``knobs.runtime.add_stages_inspection_hook`` (last); while the stages run, a stage that runs passes
  calls every plugin's ``tritium_pipeline`` for its pipeline; the cache is written only after the last
  stage; then, hit or miss, ``tritium_kernel_compiled``.

An exception raised in a hook becomes :class:`tritium.plugins.PluginError` naming the plugin, its
distribution and the hook or stage; no cache entry is written for a compilation that failed.
"""
from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

import pluggy

if TYPE_CHECKING:
    from .backends.compiler import BaseBackend
    from .compiler.stages import StageDict
    from .knobs import KnobGroup
    from .passes.pipeline import Pipeline

PROJECT = "tritium"
#: (major, minor). A plugin declares the version it targets as ``TRITIUM_PLUGIN_API``; one made for
#: another major version, or a newer minor one, is refused with an error naming its distribution.
PLUGIN_API = (1, 0)

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

_PASS_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")


@dataclass(frozen=True)
class BackendSpec:
    """A hardware target. ``compiler`` builds stages; ``driver`` finds devices and launches kernels.

    Both are classes, imported lazily through their dotted path (``"pkg.module:Class"``) so that
    listing backends costs no heavy import.
    """
    name: str
    compiler: str
    driver: str
    description: str = ""
    #: device-free capability flags any test or pass may ask about (never the backend's name)
    capabilities: frozenset[str] = frozenset()
    #: when several drivers are active, the highest priority wins (accelerators above the host CPU)
    priority: int = 0
    #: optional ``"package.module:function"``, imported only when called: a function of no arguments that
    #: returns ``{variant name: {ENVIRONMENT_VARIABLE: value}}``, the configurations of this backend (code
    #: generation levels, say) that this host can execute, each as the knob settings that select it. Tools
    #: that want every variant (test matrices, differential fuzzers) run once per entry with those
    #: variables set in a fresh process. "" (the default): the backend has one configuration.
    variants: str = ""


class LazyCallable:
    """A function named ``"package.module:function"``, imported on its first call.

    Registering passes this way keeps discovery and ``tritium plugins`` free of heavy imports (MLIR)."""

    def __init__(self, path: str) -> None:
        if ":" not in path:
            raise ValueError(f"lazy({path!r}): expected 'package.module:function'")
        self.path = path
        self._fn: Optional[Callable[..., Any]] = None

    def resolve(self) -> Callable[..., Any]:
        if self._fn is None:
            module, _, attr = self.path.partition(":")
            self._fn = getattr(importlib.import_module(module), attr)
        return self._fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.resolve()(*args, **kwargs)

    def __repr__(self) -> str:
        return f"lazy({self.path!r})"


def lazy(path: str) -> LazyCallable:
    """``lazy("my_pkg.passes:my_pass")``: a pass function imported only when it first runs."""
    return LazyCallable(path)


@dataclass(frozen=True)
class PassSpec:
    """A named pass, usable by that name in pipelines and in ``tritium-opt -p``.

    ``run`` is either a textual upstream MLIR pipeline element (``"canonicalize"``; options written in a
    pipeline, ``canonicalize{max-iterations=2}``, are appended) or a Python callable
    ``run(module, context)`` that changes the module in place (a :func:`lazy` one is imported when it first
    runs). ``context`` is a :class:`tritium.passes.pipeline.PassContext`: options, backend, kernel name,
    stage, capability, and ``pass_options`` parsed from ``my-pass{key=value ...}``."""
    name: str
    run: str | Callable[..., Any]
    doc: str = ""
    #: knobs this pass reads, as ``"group.knob"``: their values become part of every cache key
    reads: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _PASS_NAME.fullmatch(self.name):
            raise ValueError(f"pass name {self.name!r} must be a letter followed by letters, digits, '-', '_' "
                             "or '.'")
        if not (isinstance(self.run, str) or callable(self.run)):
            raise TypeError(f"pass {self.name!r}: run must be an upstream pass name or a callable, got "
                            f"{self.run!r}")

    @property
    def is_upstream(self) -> bool:
        return isinstance(self.run, str)


_EXTRA_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class LanguageExtra:
    """A module that kernels reach as ``tl.extra.<name>``, as Triton's backends add ``triton.language.extra.<name>``:
    a target's own functions, which portable code does not call (special registers, the launch's warps). ``module``
    is its import path (``"package.module"``), imported on the first ``tl.extra.<name>``, so listing plugins imports
    nothing.

    Its functions are ``@builtin``/``@extern`` functions as ``tl``'s own are; one that means nothing on the target a
    kernel is compiled for (or in the interpreter) raises :class:`tritium.language.core.CompileTimeError` saying so.
    Core's own modules there (``libdevice``, ``cpu``) are found first: an extra of one of those names is never
    reached."""
    name: str
    module: str
    description: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _EXTRA_NAME.fullmatch(self.name):
            raise ValueError(f"language extra name {self.name!r} must be a Python identifier (tl.extra.<name>)")
        if not isinstance(self.module, str) or not self.module or ":" in self.module:
            raise ValueError(f"language extra {self.name!r}: module must be an import path such as "
                             f"'my_backend.language', got {self.module!r}")


@dataclass
class PluginInfo:
    """What a loaded plugin is, for listings, errors and the cache key."""
    name: str
    distribution: str
    version: str
    source: str                       # "entry point", "python object", or the path it was loaded from
    api: tuple[int, int] = PLUGIN_API
    module: Any = None
    #: extra strings that join this plugin's part of the cache key (e.g. a digest of its source)
    extra_key: dict[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        return f"plugin {self.name!r} (distribution {self.distribution} {self.version})"


class TritiumHookSpecs:
    """Hook specifications. Each hook is documented where it is declared; the order is in the module doc."""

    @hookspec
    def tritium_backends(self) -> Optional[Sequence[BackendSpec]]:
        """Return the backends this plugin provides (:class:`BackendSpec`). Called once when the registry is
        built. A backend name offered by two plugins is an error naming both distributions."""

    @hookspec
    def tritium_passes(self) -> Optional[Sequence[PassSpec]]:
        """Return the passes this plugin provides (:class:`PassSpec`), usable by name in pipelines and in
        ``tritium-opt -p``. Called once when the registry is built; register Python passes with
        :func:`lazy` so that this costs no import. A pass name offered by two plugins is an error naming
        both distributions."""

    @hookspec
    def tritium_knobs(self) -> Optional[Sequence["KnobGroup"]]:
        """Return knob groups (subclasses of :class:`tritium.knobs.KnobGroup` with a ``group_name``); each
        becomes ``tritium.knobs.<group_name>``, read from its own environment names (use a prefix of your
        own, ``TRITIUM_<GROUP>_``). A group name or environment name that another owner declares is an
        error naming both. Every knob value of a plugin's groups is part of the cache key, except the knobs
        a group names in its class attribute ``not_in_cache_key`` (settings that never change generated
        code, such as printing a report)."""

    @hookspec
    def tritium_language_extras(self) -> Optional[Sequence[LanguageExtra]]:
        """Return the modules this plugin provides under ``tl.extra`` (:class:`LanguageExtra`), e.g. a GPU
        backend's special registers. Called once when the registry is built; nothing is imported until a kernel
        (or host code) first reads ``tl.extra.<name>``. A name offered by two plugins is an error naming both
        distributions."""

    @hookspec
    def tritium_pipeline(self, stage: str, pipeline: "Pipeline", options: Any, backend: "BaseBackend") -> None:
        """Edit the pass pipeline of ``stage`` in place, by pass name: ``pipeline.insert_after("canonicalize",
        "my-pass")``, ``insert_before``, ``append``, ``prepend``, ``remove``, ``replace``. Called once per
        compilation for every stage whose backend runs passes (through
        :func:`tritium.passes.pipeline.run_stage_passes`), before the passes run."""

    @hookspec
    def tritium_add_stages(self, stages: "StageDict", options: Any, language: Any, capability: Any,
                           backend: "BaseBackend") -> None:
        """Add, replace, wrap, reorder or remove stages, after the backend has added its own and before the
        seed's ``knobs.runtime.add_stages_inspection_hook``. ``stages`` maps each stage's name (its file
        extension) to ``fn(src, metadata) -> artifact``; ``stages[name] = fn`` adds or replaces, and it has
        ``insert_after``, ``insert_before``, ``wrap(name, fn(original, src, metadata))`` and ``remove``.
        Called once per compilation that misses the cache."""

    @hookspec
    def tritium_cache_key(self, options: Any, backend: "BaseBackend") -> Optional[str]:
        """Return a string that changes whenever this plugin would compile something differently (data
        files, settings outside its knob groups). It joins the kernel's cache key, as do the plugin's name,
        distribution, version, source digest and knob values, which need no help from this hook."""

    @hookspec
    def tritium_kernel_compiled(self, kernel: Any) -> None:
        """Called with the :class:`tritium.compiler.kernel.CompiledKernel` after every compilation, whether it
        compiled or came from the cache (read ``kernel.asm``, ``kernel.metadata``). It must not change the
        kernel; it may record or report."""


HOOK_NAMES = tuple(n for n in vars(TritiumHookSpecs) if n.startswith("tritium_"))
