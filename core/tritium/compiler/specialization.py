"""A kernel's specialization as text (Triton's ``specialization_data``) and compiling from it (``preload``).

Triton hands ``jit_cache_hook`` a JSON string describing one compilation (the kernel's name, signature,
compile-time values, argument attributes, options and specialization key); ``JITFunction.preload(data)`` compiles
that specialization again without any arguments, so that a cache warmed in one process (or shipped with an
application) is loaded before the first launch. Here the same: :func:`serialize` writes the text, :func:`preload`
compiles the kernel it describes through :func:`~.compiler.compile`, which finds it in the kernel cache when it
was compiled before (the same key as the launch that produced the text: same ``hash``).

The text is tritium's own (Triton's layout, with values Triton cannot encode made explicit: a dtype is
``{"dtype": "fp16"}``, a compile-time value ``{"constexpr": v}``); it is read back only by tritium. Beyond
Triton's fields it carries the launch's own specialization key (``binder_key``, see
:mod:`tritium.runtime.specialize`) and launch options, so that :mod:`tritium.runtime.preload` can put the kernel
where the next launch with those arguments looks for it; ``key`` stays a readable string, as in Triton.
"""
from __future__ import annotations

import json
from dataclasses import asdict, is_dataclass
from typing import Any, Optional

from ..language import core as tl
from ..language.dtypes import dtype, str_to_ty, ty_to_str


def full_name(fn: Any) -> str:
    """The kernel's name in the text: ``module.qualname``, as Triton's ``get_full_name``."""
    inner = getattr(fn, "fn", fn)
    return f"{inner.__module__}.{inner.__qualname__}"


_BUILTIN_TYPES = {t.__name__: t for t in (int, float, bool, str, type(None), tuple)}


def _encode(v: Any) -> Any:
    if isinstance(v, dtype):
        return {"dtype": ty_to_str(v)}
    if isinstance(v, tl.constexpr):
        return {"constexpr": _encode(v.value)}
    if isinstance(v, tuple):
        return {"tuple": [_encode(x) for x in v]}
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, type):
        if _BUILTIN_TYPES.get(v.__name__) is v:
            return {"type": v.__name__}
        from ..language import dtypes
        if issubclass(v, dtype) and getattr(dtypes, v.__name__, None) is v:  # (named triton.* under the compat alias)
            return {"type": f"tl.{v.__name__}"}
        if v.__module__ == "torch" and v.__name__ == "dtype":
            return {"type": "torch.dtype"}
    mod = type(v).__module__
    if mod == "torch" and type(v).__name__ == "dtype":
        return {"torch": str(v).split(".", 1)[1]}
    if mod.startswith("numpy") and hasattr(v, "char") and hasattr(v, "itemsize"):  # a numpy dtype
        return {"numpy": v.str}
    raise TypeError(f"a compile-time value of type {type(v).__name__} ({v!r}) cannot be written as text; only "
                    "numbers, strings, None, dtypes and tuples of them can")


def _decode(v: Any) -> Any:
    if isinstance(v, dict):
        if "dtype" in v:
            return str_to_ty(v["dtype"])
        if "constexpr" in v:
            return tl.constexpr(_decode(v["constexpr"]))
        if "tuple" in v:
            return tuple(_decode(x) for x in v["tuple"])
        if "type" in v:
            name = v["type"]
            if name in _BUILTIN_TYPES:
                return _BUILTIN_TYPES[name]
            if name.startswith("tl."):
                from ..language import dtypes
                return getattr(dtypes, name[3:])
            if name == "torch.dtype":
                import torch
                return torch.dtype
        if "torch" in v:
            import torch
            return getattr(torch, v["torch"])
        if "numpy" in v:
            import numpy
            return numpy.dtype(v["numpy"])
    if isinstance(v, list):
        return tuple(_decode(x) for x in v)
    return v


def _tuples(v: Any) -> Any:
    """JSON wrote tuples as lists; signatures and options never hold lists, so every list was a tuple."""
    if isinstance(v, list):
        return tuple(_tuples(x) for x in v)
    if isinstance(v, dict):
        return {k: _tuples(x) for k, x in v.items()}
    return v


def serialize(fn: Any, signature: dict, constants: dict, attrs: dict, options: Any, key: Any,
              launch_options: Optional[dict] = None) -> str:
    """The text for one compilation of ``fn`` (what ``jit_cache_hook`` gets as ``specialization_data``);
    ``key`` the launch's specialization key, ``launch_options`` the options given at the launch
    (``num_warps=8``). Raises TypeError for a compile-time value text cannot hold (a @jit function)."""
    opts = asdict(options) if is_dataclass(options) else dict(vars(options) if not isinstance(options, dict)
                                                                 else options)
    obj = {
        "name": full_name(fn),
        "signature": signature,
        "constant_keys": [list(k) for k in constants],
        "constant_vals": [_encode(v) for v in constants.values()],
        "attrs_keys": [list(k) for k in attrs],
        "attrs_vals": list(attrs.values()),
        "options": {k: _encode(v) if isinstance(v, (dtype, tl.constexpr)) else v for k, v in opts.items()},
        "key": repr(key),
        "binder_key": _encode(tuple(key)),
        "launch_options": {k: _encode(v) for k, v in (launch_options or {}).items()},
    }
    return json.dumps(obj)


def read(fn: Any, data: Any) -> dict:
    """The JSON object of ``data``, checked to describe ``fn``."""
    try:
        obj = json.loads(data)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{fn.__name__}.preload: the specialization data is not the JSON text jit_cache_hook "
                         f"gives ({exc})") from None
    if not isinstance(obj, dict) or obj.get("name") != full_name(fn):
        name = obj.get("name") if isinstance(obj, dict) else None
        raise RuntimeError(f"Specialization data is for {name} but trying to preload for {full_name(fn)}")
    return obj


def launch_inputs(obj: dict) -> tuple[tuple, dict]:
    """(the launch's specialization key, its launch options) from a text ``read`` returned."""
    if "binder_key" not in obj:
        raise ValueError(f"the specialization data of {obj.get('name')} has no launch key (binder_key): it was not "
                         "written by tritium's jit_cache_hook; compile it with "
                         "tritium.compiler.specialization.preload instead")
    return _decode(obj["binder_key"]), {k: _decode(v) for k, v in obj.get("launch_options", {}).items()}


def hook_fields(fn: Any, signature: dict, constants: dict, attrs: dict, options: Any, key: Any,
                launch_options: dict) -> dict:
    """What Triton 3.6 adds to a cache hook's ``compile`` dict beyond tritium's own entries: the options it
    names one by one, ``configs`` and ``specialization_data`` (None when a compile-time value, such as a @jit
    function argument, cannot be written as text)."""
    try:
        data: Optional[str] = serialize(fn, signature, constants, attrs, options, key, launch_options)
    except TypeError:
        data = None
    return {name: getattr(options, name, None) for name in ("num_ctas", "enable_fp_fusion",
                                                            "launch_cooperative_grid", "extern_libs")} | {
        "configs": [attrs], "specialization_data": data}


def preload(fn: Any, data: str, target: Optional[Any] = None) -> Any:
    """Compile (or load from the kernel cache) the specialization of ``fn`` that ``data`` describes; returns the
    CompiledKernel, as a warmup of the same arguments would. (``JITFunction.preload`` also puts it where the
    launches of this process look: :mod:`tritium.runtime.preload`.)"""
    from .compiler import ASTSource, compile
    obj = read(fn, data)
    constants = {tuple(k): _decode(v) for k, v in zip(obj["constant_keys"], obj["constant_vals"])}
    attrs = {tuple(k): v for k, v in zip(obj["attrs_keys"], obj["attrs_vals"])}
    signature = {k: _tuples(v) for k, v in obj["signature"].items()}
    options = {k: _decode(v) if isinstance(v, dict) else _tuples(v) for k, v in obj["options"].items()}
    return compile(ASTSource(fn, signature, constants, attrs), target=target, options=options)
