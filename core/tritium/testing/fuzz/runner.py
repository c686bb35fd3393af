"""Running one generated kernel on the interpreter or on a backend, in this process.

Used by the worker processes and by reproducer files (which import this module and nothing else of the
fuzzer's machinery)."""
from __future__ import annotations

import importlib.util
import os
import re
import sys
from contextlib import ExitStack
from typing import Any, Optional

import numpy as np

import tritium
from tritium import knobs, plugins
from tritium.runtime.driver import driver

ORACLE = "interpreter"


def load_kernel(path: str, name: str = "kernel") -> Any:
    mod_name = "tritium_fuzz_" + "".join(c if c.isalnum() else "_" for c in path)
    spec = importlib.util.spec_from_file_location(mod_name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = mod
    spec.loader.exec_module(mod)
    return getattr(mod, name)


def _plugin_module(plugin: str) -> Any:
    """A plugin given by module name, or a plugin file (imported under its stem, so that the "stem:function" paths
    it names resolve)."""
    if not plugin.endswith(".py"):
        return plugin
    name = os.path.splitext(os.path.basename(plugin))[0]
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, plugin)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


def use_target(stack: ExitStack, backend: str, plugin: str) -> None:
    """Make ``backend`` (provided by plugin module ``plugin``) the one launches use, or the interpreter."""
    stack.enter_context(knobs.runtime.scope())
    if backend == ORACLE:
        knobs.runtime.interpret = True
        return
    knobs.runtime.interpret = False
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", backend: _plugin_module(plugin)})
    stack.enter_context(plugins.use(reg))
    knobs.runtime.default_backend = backend


def _to_device(a: np.ndarray, dtype: str, device: Any) -> Any:
    if device is None:
        return tritium.reinterpret(a, tritium.language.bfloat16) if dtype == "bfloat16" else a
    import torch
    if dtype == "bfloat16":
        return torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16).to(device)
    if a.dtype.kind == "u" and a.dtype.itemsize > 1:   # torch's unsigned types are partial: pass the bits
        t = torch.from_numpy(a.view(f"i{a.dtype.itemsize}").copy()).to(device)
        return tritium.reinterpret(t, getattr(tritium.language, f"uint{8 * a.dtype.itemsize}"))
    return torch.from_numpy(a.copy()).to(device)


def _from_device(t: Any, like: np.ndarray) -> np.ndarray:
    if isinstance(t, np.ndarray):
        return t
    base = getattr(t, "base", t)
    if isinstance(base, np.ndarray):
        return base
    import torch
    if base.dtype == torch.bfloat16:
        base = base.view(torch.int16)
    return base.cpu().numpy().view(like.dtype).reshape(like.shape)


def run(kernel: Any, arrays: dict, dtypes: dict, scalars: dict, grid: int, options: dict,
        info: Optional[dict] = None) -> dict:
    """Launch ``kernel`` on copies of ``arrays`` (parameter name -> numpy array, bfloat16 as uint16 bits) and
    return the arrays after the launch. The target is whatever :func:`use_target` installed. ``info``, if given,
    gets ``"form"``: how the compiled kernel used a cluster (:func:`cluster_form`)."""
    device = None
    if not knobs.runtime.interpret:
        device = driver.active.get_active_torch_device()
    copies = {k: np.array(v, copy=True) for k, v in arrays.items()}
    args = {k: _to_device(v, dtypes[k], device) for k, v in copies.items()}
    kwargs = dict(args)
    kwargs.update(scalars)
    kwargs.update(options)
    compiled = kernel[(grid,)](**kwargs)
    if info is not None:
        info["form"] = cluster_form(compiled)
    if device is not None:
        driver.active.synchronize()
    return {k: _from_device(args[k], copies[k]) for k in arrays}


_ONE_CTA = re.compile(r'tritium\.cluster_one_cta = "([^"]*)"')


def cluster_form(compiled: Any) -> str:
    """"split" where the cluster split took the kernel, "one-cta: <why not>" where it kept the one-CTA form, ""
    for a kernel of one CTA per program (or a target without a ``ttgir`` stage)."""
    asm = getattr(compiled, "asm", None)
    try:
        ttgir = asm["ttgir"] if asm is not None else ""
    except (KeyError, TypeError):
        return ""
    ttgir = ttgir if isinstance(ttgir, str) else ""
    if "tritium.cluster_split" in ttgir:
        return "split"
    m = _ONE_CTA.search(ttgir)
    return f"one-cta: {m.group(1)}" if m else ""
