"""One compilation for kernels whose options differ only in what their backend's code does not depend on.

Portable autotune configs vary GPU launch parameters (``num_warps``, ``num_stages``...) that a backend may
ignore (the CPU's code is the same for every ``num_warps``). Each config still gets its own cache entry, under
its own key, with its own options in its metadata; but when the backend says (``BaseBackend.code_options``)
that these options compile to the same code as another set, the stages run once, for that set, and the other
entries are made from its artifacts.

That is only sound while nothing else that compiles can read the options: the seed's inspection hook and a
plugin's ``tritium_add_stages``/``tritium_cache_key`` that take ``options``, a plugin's passes in a pipeline
that runs them (they see ``PassContext.options``), or a ``tritium_pipeline`` that takes ``options`` and builds
another pipeline for the shared set, make every set compile on its own, as before. Core's built-in
plugin and backend plugins are exempt: a backend answers for its own options through ``code_options``.
"""
from __future__ import annotations

import dataclasses
import json
from typing import Any, Callable, Optional

from .. import knobs
from ..plugins import registry


def code_options(backend: Any, options: Any) -> Optional[Any]:
    """The options whose compilation serves ``options`` too, or None: they are ``options`` themselves, or
    something besides the backend may read the options (see the module's doc)."""
    canonical = backend.code_options(options)
    if canonical == options or others_read_options(backend, options, canonical):
        return None
    return canonical


def others_read_options(backend: Any = None, options: Any = None, canonical: Any = None) -> bool:
    if knobs.runtime.add_stages_inspection_hook is not None:
        return True
    reg = registry()
    trusted = {name for name, info in reg.infos.items()
               if name == "core" or callable(getattr(info.module, "tritium_backends", None))}
    if any(info.name not in trusted and "options" in argnames
           for hook in ("tritium_add_stages", "tritium_cache_key") for info, _, argnames in reg.impls(hook)):
        return True
    passes = {name for name, (_, info) in reg.passes.items() if info.name not in trusted}
    readers = any(info.name not in trusted and "options" in argnames
                  for info, _, argnames in reg.impls("tritium_pipeline"))
    if not passes and not readers:
        return False
    if backend is None:
        return True
    # a plugin's passes see the options only where a pipeline runs them (installed plugins often add theirs only
    # when switched on), and a pipeline hook reading the options matters only if it builds another pipeline
    try:
        return any(_pipeline_reads(backend, stage, options, canonical, passes, readers)
                   for stage in _pipeline_stages(backend, options))
    except Exception:   # a pipeline that cannot be built here will fail its compile: share nothing meanwhile
        return True


def _pipeline_stages(backend: Any, options: Any) -> list:
    stages: dict = {}
    backend.add_stages(stages, options)
    found = []
    for stage in stages:
        try:
            backend.pipeline(stage, options)
        except KeyError:
            continue
        found.append(stage)
    return found


def _pipeline_reads(backend: Any, stage: str, options: Any, canonical: Any, passes: set, readers: bool) -> bool:
    from ..passes.pipeline import make_pipeline, split_name
    mine = list(make_pipeline(stage, backend.pipeline(stage, options), options, backend))
    if any(split_name(entry)[0] in passes for entry in mine):
        return True
    return readers and mine != list(make_pipeline(stage, backend.pipeline(stage, canonical), canonical, backend))


def options_as_input(options: Any) -> dict:
    """``options`` as the dict that ``parse_options`` turns back into them."""
    if dataclasses.is_dataclass(options):
        return {f.name: getattr(options, f.name) for f in dataclasses.fields(options)}
    return dict(vars(options))


def share(src: Any, key: str, options_dict: dict, base: Any, file_name: str, make_kernel: Callable[..., Any],
          cache: Any) -> Any:
    """The kernel for ``key``: ``base``'s artifacts under ``key``, with this kernel's options in its metadata."""
    metadata = dict(base.metadata_dict)
    metadata["target"] = _target_list(metadata["target"])
    metadata.update(options_dict)
    metadata["hash"] = key
    metadata["code_from"] = base.hash   # the entry whose stages ran (its symbols are this kernel's too)
    files: dict[str, Any] = {f"{file_name}.{ext}": data for ext, data in base.asm.items()}
    files[f"{file_name}.json"] = json.dumps(metadata, default=str)
    cache.put(key, files, metadata)
    return make_kernel(src, files, metadata, key, base.backend)


def _target_list(target: Any) -> list:
    if isinstance(target, (list, tuple)):
        return list(target)
    return [target.backend, target.arch, target.warp_size]
