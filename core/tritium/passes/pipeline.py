"""Pass pipelines as data, and running them.

A stage's pipeline is a list of pass names that plugins edit by name (``insert_after("canonicalize",
"my-pass")``) through the ``tritium_pipeline`` hook; no source text is patched. Each name is looked up in
the passes registered through ``tritium_passes``: an upstream MLIR pass (run through a PassManager) or a
Python callable.
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from .. import knobs
from ..knobs import DumpKnob


@dataclass
class PassContext:
    """What a Python pass may read: the options, the backend, the kernel's name, the stage."""
    options: Any = None
    backend: Any = None
    kernel_name: str = ""
    stage: str = ""
    capability: Any = None
    metadata: dict = field(default_factory=dict)


class PipelineError(ValueError):
    pass


class Pipeline:
    def __init__(self, stage: str, passes: Iterable[str]) -> None:
        self.stage = stage
        self.passes: list[str] = list(passes)

    def __iter__(self):
        return iter(self.passes)

    def __len__(self) -> int:
        return len(self.passes)

    def __contains__(self, name: object) -> bool:
        return name in self.passes

    def _index(self, anchor: str) -> int:
        try:
            return self.passes.index(anchor)
        except ValueError:
            raise PipelineError(f"pipeline of stage {self.stage!r} has no pass {anchor!r} "
                                f"(passes: {', '.join(self.passes)})") from None

    def insert_after(self, anchor: str, name: str) -> None:
        self.passes.insert(self._index(anchor) + 1, name)

    def insert_before(self, anchor: str, name: str) -> None:
        self.passes.insert(self._index(anchor), name)

    def append(self, name: str) -> None:
        self.passes.append(name)

    def prepend(self, name: str) -> None:
        self.passes.insert(0, name)

    def remove(self, name: str) -> None:
        del self.passes[self._index(name)]

    def replace(self, name: str, new: str) -> None:
        self.passes[self._index(name)] = new

    def __repr__(self) -> str:
        return f"Pipeline({self.stage!r}, {self.passes})"


def _dump_target():
    path = knobs.compilation.mlir_dump_path
    return open(path, "a") if path else sys.stderr


def run_pipeline(module: Any, pipeline: Pipeline, ctx: PassContext) -> Any:
    """Run the named passes on ``module`` in order; upstream passes in a row share one PassManager."""
    from .. import plugins
    from .._mlir import passmanager
    registered = plugins.registry().passes
    dump = DumpKnob.wants(knobs.compilation.mlir_dump, ctx.kernel_name)
    timing = knobs.compilation.mlir_timing
    groups: list[tuple[str, Any]] = []
    for name in pipeline:
        base = name.split("{", 1)[0]
        entry = registered.get(base)
        if entry is None:
            raise PipelineError(f"stage {pipeline.stage!r} asks for pass {name!r}, which no plugin registers "
                                f"(registered: {', '.join(sorted(registered))})")
        spec, info = entry
        if isinstance(spec.run, str):
            text = spec.run if name == base else spec.run + name[len(base):]
            if groups and groups[-1][0] == "mlir" and not dump:
                groups[-1][1].append((name, text))
            else:
                groups.append(("mlir", [(name, text)]))
        else:
            groups.append(("py", (name, spec, info)))
    for kind, item in groups:
        if kind == "mlir":
            names = ", ".join(n for n, _ in item)
            if dump:
                _dump(module, f"IR Dump Before {names} ({ctx.kernel_name})")
            text = "builtin.module(" + ",".join(t for _, t in item) + ")"
            with module.context:
                pm = passmanager.PassManager.parse(text)
                if timing:
                    pm.enable_timing()
                t0 = time.perf_counter()
                pm.run(module.operation)
                if timing:
                    print(f"[tritium] {names}: {1e3 * (time.perf_counter() - t0):.2f} ms", file=sys.stderr)
        else:
            name, spec, info = item
            if dump:
                _dump(module, f"IR Dump Before {name} ({ctx.kernel_name})")
            t0 = time.perf_counter()
            try:
                spec.run(module, ctx)
            except Exception as exc:
                if info.name == "core":
                    raise
                from ..plugins import PluginError
                raise PluginError(f"pass {name!r} of {info.describe()} failed in stage {ctx.stage!r}: "
                                  f"{type(exc).__name__}: {exc}") from exc
            if timing:
                print(f"[tritium] {name}: {1e3 * (time.perf_counter() - t0):.2f} ms", file=sys.stderr)
    return module


def _dump(module: Any, title: str) -> None:
    out = _dump_target()
    try:
        print(f"// -----// {title} //----- //", file=out)
        print(module.operation.get_asm(enable_debug_info=False), file=out)
    finally:
        if out is not sys.stderr:
            out.close()


def make_pipeline(stage: str, passes: Iterable[str], options: Any, backend: Any) -> Pipeline:
    """The backend's default pipeline for ``stage``, edited by every plugin's ``tritium_pipeline`` hook."""
    from .. import plugins
    pipeline = Pipeline(stage, passes)
    plugins.registry().call_each("tritium_pipeline", stage=stage, pipeline=pipeline, options=options,
                                 backend=backend)
    return pipeline


def run_stage_passes(module: Any, stage: str, passes: Iterable[str], options: Any, backend: Any,
                     metadata: Optional[dict] = None) -> Any:
    pipeline = make_pipeline(stage, passes, options, backend)
    name = (metadata or {}).get("name", "")
    ctx = PassContext(options=options, backend=backend, kernel_name=name, stage=stage,
                      capability=getattr(backend, "target", None), metadata=metadata or {})
    return run_pipeline(module, pipeline, ctx)
