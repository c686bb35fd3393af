"""Pass pipelines as data, and running them.

A stage's pipeline is a list of pass names that plugins edit by name (``insert_after("canonicalize",
"my-pass")``) through the ``tritium_pipeline`` hook; no source text is patched. Each name is looked up in
the passes registered through ``tritium_passes``: an upstream MLIR pass (run through a PassManager) or a
Python callable. A name may carry options, ``my-pass{key=value other=1}``: upstream passes get them as
MLIR pass options, Python passes as ``context.pass_options``.

A pass that a plugin registered cannot corrupt a kernel silently: if it raises, or leaves IR that does not
verify, compilation stops with a :class:`tritium.plugins.PluginError` naming the pass, its plugin and
distribution, and the stage.
"""
from __future__ import annotations

import dataclasses
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from .. import knobs, plugins
from ..knobs import DumpKnob
from ..plugins import PluginError
from . import reproducer
from .diagnostics import capture


@dataclass
class PassContext:
    """What a Python pass may read: the options, the backend, the kernel's name, the stage."""
    options: Any = None
    backend: Any = None
    kernel_name: str = ""
    stage: str = ""
    capability: Any = None
    metadata: dict = field(default_factory=dict)
    #: options written after the pass's name in the pipeline: ``my-pass{factor=2}`` -> {"factor": "2"}
    pass_options: dict = field(default_factory=dict)


class PipelineError(ValueError):
    pass


def split_name(entry: str) -> tuple[str, dict[str, str]]:
    """``"my-pass{a=1 b=x}"`` -> ``("my-pass", {"a": "1", "b": "x"})`` (options separated by spaces or commas)."""
    base, brace, rest = entry.partition("{")
    options: dict[str, str] = {}
    if brace:
        if not rest.endswith("}"):
            raise PipelineError(f"pass {entry!r}: options must be written name{{key=value ...}}")
        for item in rest[:-1].replace(",", " ").split():
            key, eq, value = item.partition("=")
            if not eq or not key:
                raise PipelineError(f"pass {entry!r}: option {item!r} is not key=value")
            options[key] = value
    return base.strip(), options


class Pipeline:
    """The ordered pass names of one stage. Every entry remembers who put it there (for error messages)."""

    def __init__(self, stage: str, passes: Iterable[str], owner: str = "backend") -> None:
        self.stage = stage
        self.passes: list[str] = list(passes)
        self.owner = owner
        self.owners: list[str] = [owner] * len(self.passes)

    def __iter__(self):
        return iter(self.passes)

    def __len__(self) -> int:
        return len(self.passes)

    def __contains__(self, name: object) -> bool:
        return any(split_name(p)[0] == name or p == name for p in self.passes)

    def _index(self, anchor: str, occurrence: int = 0) -> int:
        hits = [i for i, p in enumerate(self.passes) if p == anchor or split_name(p)[0] == anchor]
        if not hits:
            raise PipelineError(f"pipeline of stage {self.stage!r} has no pass {anchor!r} (passes: "
                                f"{', '.join(self.passes)}); test `{anchor!r} in pipeline` before editing")
        try:
            return hits[occurrence]
        except IndexError:
            raise PipelineError(f"pipeline of stage {self.stage!r} runs {anchor!r} {len(hits)} time(s); "
                                f"occurrence {occurrence} does not exist") from None

    def _put(self, i: int, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise PipelineError(f"a pipeline entry must be a pass name, got {name!r}")
        self.passes.insert(i, name)
        self.owners.insert(i, self.owner)

    def insert_after(self, anchor: str, name: str, occurrence: int = 0) -> None:
        """Put ``name`` right after ``anchor`` (its first occurrence; ``occurrence=-1`` for the last)."""
        self._put(self._index(anchor, occurrence) + 1, name)

    def insert_before(self, anchor: str, name: str, occurrence: int = 0) -> None:
        self._put(self._index(anchor, occurrence), name)

    def append(self, name: str) -> None:
        self._put(len(self.passes), name)

    def prepend(self, name: str) -> None:
        self._put(0, name)

    def remove(self, name: str, occurrence: Optional[int] = None) -> None:
        """Remove every occurrence of ``name`` (or only the given one)."""
        idx = [self._index(name, occurrence)] if occurrence is not None else \
            [i for i, p in enumerate(self.passes) if p == name or split_name(p)[0] == name]
        if not idx:
            self._index(name)  # raises the error that lists the passes
        for i in reversed(idx):
            del self.passes[i]
            del self.owners[i]

    def replace(self, name: str, new: str, occurrence: Optional[int] = None) -> None:
        """Run ``new`` wherever ``name`` ran (every occurrence, or only the given one)."""
        idx = [self._index(name, occurrence)] if occurrence is not None else \
            [i for i, p in enumerate(self.passes) if p == name or split_name(p)[0] == name]
        if not idx:
            self._index(name)
        for i in idx:
            self.passes[i] = new
            self.owners[i] = self.owner

    def who(self, i: int) -> str:
        return self.owners[i]

    def __repr__(self) -> str:
        return f"Pipeline({self.stage!r}, {self.passes})"


def _dump_target():
    path = knobs.compilation.mlir_dump_path
    return open(path, "a") if path else sys.stderr


def _resolve(pipeline: Pipeline, registered: dict) -> list[tuple[str, dict, Any, Any]]:
    out = []
    for i, entry in enumerate(pipeline):
        base, options = split_name(entry)
        found = registered.get(base)
        if found is None:
            raise PipelineError(f"stage {pipeline.stage!r} asks for pass {entry!r} (put there by "
                                f"{pipeline.who(i)}), which no plugin registers (registered: "
                                f"{', '.join(sorted(registered))}); `tritium plugins` lists the passes")
        out.append((entry, options, found[0], found[1]))
    return out


def run_pipeline(module: Any, pipeline: Pipeline, ctx: PassContext) -> Any:
    """Run the named passes on ``module`` in order; upstream passes in a row share one PassManager."""
    registered = plugins.registry().passes
    dump = DumpKnob.wants(knobs.compilation.mlir_dump, ctx.kernel_name)
    repro = knobs.compilation.reproducer_path
    groups: list[tuple[str, Any]] = []
    for entry, options, spec, info in _resolve(pipeline, registered):
        if spec.is_upstream:
            text = spec.run if entry == spec.name else spec.run + entry[len(spec.name):]
            # a reproducer must hold the IR right before the failing pass: then every pass runs on its own
            if groups and groups[-1][0] == "mlir" and not dump and not repro:
                groups[-1][1].append((entry, text, info))
            else:
                groups.append(("mlir", [(entry, text, info)]))
        else:
            groups.append(("py", (entry, options, spec, info)))
    with capture(module.context):
        for kind, item in groups:
            if repro:
                _run_reproducible(module, kind, item, ctx, dump, repro)
            elif kind == "mlir":
                _run_upstream(module, item, ctx, dump)
            else:
                _run_python(module, *item, ctx=ctx, dump=dump)
    return module


def _run_reproducible(module: Any, kind: str, item: Any, ctx: PassContext, dump: bool, path: str) -> None:
    """Write the reproducer, run the pass; a failure says which pass, which stage, and where the file is."""
    if kind == "mlir":
        names, texts = [n for n, _, _ in item], [t for _, t, _ in item]
    else:
        names = texts = [item[0]]
    backend = getattr(ctx.backend, "name", "") or ""
    reproducer.write(path, module, texts, names, ctx.stage, ctx.kernel_name, backend)
    try:
        if kind == "mlir":
            _run_upstream(module, item, ctx, dump)
        else:
            _run_python(module, *item, ctx=ctx, dump=dump)
    except Exception as exc:
        where = (f"reproducer of the IR before pass {', '.join(names)!r} (stage {ctx.stage!r}, kernel "
                 f"`{ctx.kernel_name}`): {path}; replay it with `tritium-opt --reproduce {path}`")
        from ..plugins import PluginError
        if isinstance(exc, PluginError):
            raise PluginError(f"{exc}\n{where}") from exc.__cause__
        note = f"pass {', '.join(names)!r} failed in stage {ctx.stage!r}; {where}"
        if hasattr(exc, "add_note"):
            exc.add_note(note)
        else:   # Python 3.10
            print(f"[tritium] {note}", file=sys.stderr)
        raise


def _run_upstream(module: Any, items: list, ctx: PassContext, dump: bool) -> None:
    from .._mlir import passmanager
    names = ", ".join(n for n, _, _ in items)
    if dump:
        _dump(module, f"IR Dump Before {names} ({ctx.kernel_name})")
    text = "builtin.module(" + ",".join(t for _, t, _ in items) + ")"
    t0 = time.perf_counter()
    try:
        with module.context:
            pm = passmanager.PassManager.parse(text)
            if knobs.compilation.mlir_timing:
                pm.enable_timing()
            pm.run(module.operation)
    except Exception as exc:
        foreign = [(n, i) for n, _, i in items if i.name != "core"]
        if not foreign:
            raise
        from ..plugins import PluginError
        who = "; ".join(f"pass {n!r} of {i.describe()}" for n, i in foreign)
        raise PluginError(f"upstream pipeline {text} failed in stage {ctx.stage!r} ({who}): "
                          f"{type(exc).__name__}: {exc}") from exc
    if knobs.compilation.mlir_timing:
        print(f"[tritium] {names}: {1e3 * (time.perf_counter() - t0):.2f} ms", file=sys.stderr)


def _run_python(module: Any, entry: str, options: dict, spec: Any, info: Any, ctx: PassContext,
                dump: bool) -> None:
    if dump:
        _dump(module, f"IR Dump Before {entry} ({ctx.kernel_name})")
    t0 = time.perf_counter()
    pass_ctx = dataclasses.replace(ctx, pass_options=dict(options))
    foreign = info.name != "core"
    try:
        spec.run(module, pass_ctx)
    except Exception as exc:
        if not foreign:
            raise
        from ..plugins import PluginError
        raise PluginError(f"pass {entry!r} of {info.describe()} failed in stage {ctx.stage!r}: "
                          f"{type(exc).__name__}: {exc}") from exc
    if foreign:
        _verify(module, entry, info, ctx)
    if knobs.compilation.mlir_timing:
        print(f"[tritium] {entry}: {1e3 * (time.perf_counter() - t0):.2f} ms", file=sys.stderr)


def _verify(module: Any, entry: str, info: Any, ctx: PassContext) -> None:
    """A plugin's pass must leave valid IR: check it here, where the culprit is known."""
    try:
        ok = module.operation.verify()
    except Exception as exc:
        ok, why = False, str(exc)
    else:
        why = "verification failed"
    if not ok:
        raise PluginError(f"pass {entry!r} of {info.describe()} left invalid IR in stage {ctx.stage!r}: {why}")


def _dump(module: Any, title: str) -> None:
    out = _dump_target()
    try:
        print(f"// -----// {title} //----- //", file=out)
        print(module.operation.get_asm(enable_debug_info=False), file=out)
    finally:
        if out is not sys.stderr:
            out.close()


def make_pipeline(stage: str, passes: Iterable[str], options: Any, backend: Any) -> Pipeline:
    """The backend's default pipeline for ``stage``, edited by every plugin's ``tritium_pipeline`` hook, then
    checked: every name must be a registered pass (the error names the plugin that put it there)."""
    reg = plugins.registry()
    pipeline = Pipeline(stage, passes)

    def before(info: Any) -> None:
        pipeline.owner = info.describe()

    reg.call_each("tritium_pipeline", stage=stage, before=before, pipeline=pipeline, options=options,
                  backend=backend)
    pipeline.owner = "backend"
    _resolve(pipeline, reg.passes)
    return pipeline


def run_stage_passes(module: Any, stage: str, passes: Iterable[str], options: Any, backend: Any,
                     metadata: Optional[dict] = None) -> Any:
    """What a backend's stage calls to run its pipeline: build it (plugins edit it), then run it."""
    pipeline = make_pipeline(stage, passes, options, backend)
    name = (metadata or {}).get("name", "")
    ctx = PassContext(options=options, backend=backend, kernel_name=name, stage=stage,
                      capability=getattr(backend, "target", None), metadata=metadata if metadata is not None else {})
    return run_pipeline(module, pipeline, ctx)


#: the ``ttir`` stage of every backend: inline calls, then simplify (core's passes and upstream MLIR's)
TTIR_PASSES = ("inline", "tt-inline", "symbol-dce", "tt-combine", "canonicalize", "tt-cse", "cse", "tt-licm",
               "loop-invariant-code-motion", "tt-dce", "canonicalize")


def make_ttir(module: Any, metadata: dict, options: Any, backend: Any,
              passes: Iterable[str] = TTIR_PASSES) -> Any:
    """The ``ttir`` stage: ``passes`` (:data:`TTIR_PASSES` unless the backend adds its own; as plugins edited them)
    with every device function inlined. A GPU program's tiles live in registers, which calls cannot pass; on the
    CPU, noinline would only matter to register allocation."""
    from ._util import all_ops
    for op in all_ops(module):
        if op.name == "func.call" and "no_inline" in op.attributes:
            del op.attributes["no_inline"]
    return run_stage_passes(module, "ttir", passes, options, backend, metadata)
