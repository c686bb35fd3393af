"""The one extension surface of tritium.

Every way to extend tritium is a hook below. A plugin is a module (or object) holding functions marked
``@hookimpl`` with these names, found through an entry point of the group ``tritium.plugins`` (or a
file named in ``TRITIUM_PLUGIN_PATHS``), and declaring the plugin API it targets::

    # my_plugin.py
    import tritium.hookspecs as hs
    TRITIUM_PLUGIN_API = hs.PLUGIN_API

    @hs.hookimpl
    def tritium_passes():
        return [hs.PassSpec("my-pass", run_my_pass, "what it does")]

Core's own passes, the CPU backend and every in-repo plugin register exactly this way.

Order: plugins are called in the order of their names (``core`` first, then backends, then others
alphabetically) unless a hookimpl asks for ``tryfirst``/``trylast``. For stages, the backend builds
its pipeline, then every plugin's ``tritium_add_stages`` runs in that order, then the seed's
``knobs.runtime.add_stages_inspection_hook`` runs last.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

import pluggy

if TYPE_CHECKING:
    from .backends.compiler import BaseBackend
    from .knobs import KnobGroup
    from .passes.pipeline import Pipeline
    from .compiler.stages import StageDict

PROJECT = "tritium"
#: (major, minor). A plugin built for another major version is refused with an error naming it.
PLUGIN_API = (1, 0)

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


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


@dataclass(frozen=True)
class PassSpec:
    """A named pass. ``run`` is either a textual upstream MLIR pipeline element (``"canonicalize"``) or a
    Python callable ``run(module, context)`` that changes the module in place; ``context`` is a
    :class:`tritium.passes.pipeline.PassContext` (options, backend, kernel name, capability)."""
    name: str
    run: str | Callable[..., Any]
    doc: str = ""
    #: knob or option names this pass reads; they become part of the cache key
    reads: tuple[str, ...] = ()


@dataclass
class PluginInfo:
    """What a loaded plugin is, for listings, errors and the cache key."""
    name: str
    distribution: str
    version: str
    source: str                       # "entry point" or the path it was loaded from
    api: tuple[int, int] = PLUGIN_API
    module: Any = None
    extra_key: dict[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        return f"plugin {self.name!r} (distribution {self.distribution} {self.version})"


class TritiumHookSpecs:
    """Hook specifications. Each hook is documented where it is declared."""

    @hookspec
    def tritium_backends(self) -> Optional[Sequence[BackendSpec]]:
        """Return the backends this plugin provides. A backend name offered by two plugins is an error
        naming both distributions."""

    @hookspec
    def tritium_passes(self) -> Optional[Sequence[PassSpec]]:
        """Return the passes this plugin provides, usable by name in pipelines and in ``tritium-opt``.
        A pass name offered by two plugins is an error naming both."""

    @hookspec
    def tritium_knobs(self) -> Optional[Sequence["KnobGroup"]]:
        """Return knob groups; each becomes ``tritium.knobs.<group_name>`` with its own environment names."""

    @hookspec
    def tritium_pipeline(self, stage: str, pipeline: "Pipeline", options: Any, backend: "BaseBackend") -> None:
        """Edit the pass pipeline of a stage in place: ``pipeline.insert_after("canonicalize", "my-pass")``,
        ``insert_before``, ``append``, ``remove``, ``replace``. Called once per compilation and stage."""

    @hookspec
    def tritium_add_stages(self, stages: "StageDict", options: Any, language: Any, capability: Any,
                           backend: "BaseBackend") -> None:
        """Add, replace, wrap, reorder or remove stages. ``stages`` maps each stage's name (its file
        extension) to ``fn(src, metadata) -> artifact``; it keeps insertion order and has helpers
        ``insert_after``, ``insert_before``, ``wrap``, ``remove``."""

    @hookspec
    def tritium_cache_key(self, options: Any, backend: "BaseBackend") -> Optional[str]:
        """Return a string that changes whenever this plugin would compile something differently (its
        options, knobs, data files). It joins the kernel's cache key. The plugin's name and version are
        always part of the key; this is for what they do not capture."""

    @hookspec
    def tritium_kernel_compiled(self, kernel: Any) -> None:
        """Called after a kernel was compiled or loaded from the cache (inspect ``kernel.asm``,
        ``kernel.metadata``). Must not change the kernel."""

    @hookspec(firstresult=True)
    def tritium_launch_metadata(self, kernel: Any, grid: tuple, args: tuple) -> Optional[dict]:
        """Return extra metadata to pass to launch hooks (e.g. bytes moved), or None."""


HOOK_NAMES = tuple(n for n in vars(TritiumHookSpecs) if n.startswith("tritium_"))
