"""One compilation for kernels whose options differ only in what their backend's code does not depend on.

Portable autotune configs vary GPU launch parameters (``num_warps``, ``num_stages``...) that a backend may
ignore (the CPU's code is the same for every ``num_warps``). Each config still gets its own cache entry, under
its own key, with its own options in its metadata; but when the backend says (``BaseBackend.code_options``)
that these options compile to the same code as another set, the stages run once, for that set, and the other
entries are made from its artifacts.

That is only sound while nothing else that compiles can read the options: the seed's inspection hook and a
plugin's ``tritium_add_stages``/``tritium_pipeline``/``tritium_cache_key`` that take ``options``, or a plugin's
passes (they see ``PassContext.options``), make every set compile on its own, as before. Core's built-in
plugin and backend plugins are exempt: a backend answers for its own options through ``code_options``.
"""
from __future__ import annotations

import dataclasses
import json
from typing import Any, Callable, Optional

from .. import knobs
from ..plugins import registry

#: hooks that receive the options; a plugin implementing one with an ``options`` parameter may compile by them
_OPTION_HOOKS = ("tritium_add_stages", "tritium_pipeline", "tritium_cache_key")


def code_options(backend: Any, options: Any) -> Optional[Any]:
    """The options whose compilation serves ``options`` too, or None: they are ``options`` themselves, or
    something besides the backend may read the options (see the module's doc)."""
    canonical = backend.code_options(options)
    if canonical == options or others_read_options():
        return None
    return canonical


def others_read_options() -> bool:
    if knobs.runtime.add_stages_inspection_hook is not None:
        return True
    reg = registry()
    trusted = {name for name, info in reg.infos.items()
               if name == "core" or callable(getattr(info.module, "tritium_backends", None))}
    if any(info.name not in trusted for info, _, _ in reg.impls("tritium_passes")):
        return True
    return any(info.name not in trusted and "options" in argnames
               for hook in _OPTION_HOOKS for info, _, argnames in reg.impls(hook))


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
