"""``triton.X.Y`` IS the tritium module implementing it (the same object, so isinstance checks and module
state are shared), through one table and a meta-path finder."""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from typing import Optional

#: Triton module -> the module that implements it, where the name is not simply triton.* -> tritium.*
TABLE = {
    "triton.runtime.cache": "tritium.cache",
    "triton.runtime.errors": "triton._runtime_errors",
    "triton.runtime.interpreter": "triton._interpreter",
    "triton.runtime._allocation": "tritium.runtime._allocation",
    "triton.tools.mxfp": "triton._mxfp",
    # vendor spellings of libdevice: tritium's libdevice serves every target. A backend's own tl.extra.<name>
    # (hookspecs' tritium_language_extras: tritium-nvidia's cuda) is found first (extra_target)
    "triton.language.extra.cuda": "tritium.language.extra",
    "triton.language.extra.cuda.libdevice": "tritium.language.extra.libdevice",
    "triton.language.extra.hip": "tritium.language.extra",
    "triton.language.extra.hip.libdevice": "tritium.language.extra.libdevice",
}
#: modules of this package itself (found as files, never aliased)
OWN = {"triton._alias", "triton._guard", "triton._internal_testing", "triton._runtime_errors", "triton._mxfp",
       "triton._utils", "triton._interpreter", "triton._C", "triton._C.libtriton", "triton._C.libtriton.ir"}


_EXTRA = "triton.language.extra."


def extra_target(fullname: str) -> Optional[str]:
    """The module an active plugin provides as ``triton.language.extra.<name>`` (as ``tl.extra.<name>``), or None."""
    name = fullname[len(_EXTRA):] if fullname.startswith(_EXTRA) else ""
    if not name or "." in name:
        return None
    from tritium.language.extra import OWN_MODULES, provider
    return None if name in OWN_MODULES else provider(name)


def target_of(fullname: str) -> Optional[str]:
    provided = extra_target(fullname)
    if provided is not None:
        return provided
    if fullname in TABLE:
        return TABLE[fullname]
    if fullname in OWN or not fullname.startswith("triton."):
        return None
    return "tritium." + fullname[len("triton."):]


def triton_name(target: str) -> Optional[str]:
    """The name a tritium module is registered under when it was imported before ``triton``."""
    return "triton." + target[len("tritium."):] if target.startswith("tritium.") else None


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec):  # type: ignore[override]
        module = importlib.import_module(self.target)
        # the import system stamps the alias's spec on whatever create_module returns: keep the real one
        spec.loader_state = module.__spec__
        return module

    def exec_module(self, module) -> None:  # type: ignore[override]
        module.__spec__ = module.__spec__.loader_state if module.__spec__.loader_state else module.__spec__
        register_loaded_children(module.__name__)


def register_loaded_children(target: str) -> None:
    """Alias the submodules of ``target`` imported already: a package attribute may shadow one of them (
    ``tritium.runtime.driver`` is the driver object, not the module) and an import through the finder would
    overwrite that attribute with the module."""
    prefix = target + "."
    for name, mod in list(sys.modules.items()):
        if name.startswith(prefix) and mod is not None:
            alias = triton_name(name)
            if alias is not None and alias not in sys.modules:
                sys.modules[alias] = mod


class TritonAliasFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):  # type: ignore[override]
        real = target_of(fullname)
        if real is None:
            return None
        if real.startswith("triton."):  # a module of this package under another name
            spec = importlib.util.find_spec(real)
            if spec is None:
                return None
            return importlib.util.spec_from_loader(fullname, _AliasLoader(real))
        try:
            found = importlib.util.find_spec(real)
        except ModuleNotFoundError:
            return None
        if found is None:
            return None
        return importlib.util.spec_from_loader(fullname, _AliasLoader(real),
                                               is_package=found.submodule_search_locations is not None)


#: classes whose ``module.name`` code generators write into the code they generate (torch inductor: a global's
#: annotation ``X: tl.constexpr``, ``from <dtype's module> import dtype``, only when it starts with "triton"):
#: generated code imports ``triton``, not ``tritium``
EMITTED_CLASSES = (("tritium.language.core", "constexpr"), ("tritium.language.scalar_types", "dtype"))


def name_emitted_classes() -> None:
    """Give those classes their Triton module names, as in Triton (``triton.language.core.constexpr``): the
    names resolve through this package to the same classes (also for pickle)."""
    for module, name in EMITTED_CLASSES:
        cls = getattr(importlib.import_module(module), name)
        if cls.__module__ == module:
            cls.__module__ = triton_name(module)


def install() -> None:
    if not any(isinstance(f, TritonAliasFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, TritonAliasFinder())
    register_loaded_children("tritium")
    name_emitted_classes()
