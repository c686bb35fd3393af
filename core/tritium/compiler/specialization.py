"""A kernel's specialization as text (Triton's ``specialization_data``) and compiling from it (``preload``).

Triton hands ``jit_cache_hook`` a JSON string describing one compilation (the kernel's name, signature,
compile-time values, argument attributes, options and specialization key); ``JITFunction.preload(data)`` compiles
that specialization again without any arguments, so that a cache warmed in one process (or shipped with an
application) is loaded before the first launch. Here the same: :func:`serialize` writes the text, :func:`preload`
compiles the kernel it describes through :func:`~.compiler.compile`, which finds it in the kernel cache when it
was compiled before (the same key as the launch that produced the text: same ``hash``).

The text is tritium's own (Triton's layout, with values Triton cannot encode made explicit: a dtype is
``{"dtype": "fp16"}``, a compile-time value ``{"constexpr": v}``); it is read back only by tritium.
"""
from __future__ import annotations

import json
from dataclasses import asdict, is_dataclass
from typing import Any, Optional

from ..language import core as tl
from ..language.dtypes import dtype, str_to_ty


def full_name(fn: Any) -> str:
    """The kernel's name in the text: ``module.qualname``, as Triton's ``get_full_name``."""
    inner = getattr(fn, "fn", fn)
    return f"{inner.__module__}.{inner.__qualname__}"


def _encode(v: Any) -> Any:
    if isinstance(v, dtype):
        return {"dtype": str(v)}
    if isinstance(v, tl.constexpr):
        return {"constexpr": _encode(v.value)}
    if isinstance(v, tuple):
        return {"tuple": [_encode(x) for x in v]}
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
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


def serialize(fn: Any, signature: dict, constants: dict, attrs: dict, options: Any, key: Any) -> str:
    """The text for one compilation of ``fn`` (what ``jit_cache_hook`` gets as ``specialization_data``)."""
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
    }
    return json.dumps(obj)


def preload(fn: Any, data: str, target: Optional[Any] = None) -> Any:
    """Compile (or load from the kernel cache) the specialization of ``fn`` that ``data`` describes; returns the
    CompiledKernel, as a warmup of the same arguments would."""
    from .compiler import ASTSource, compile
    try:
        obj = json.loads(data)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{fn.__name__}.preload: the specialization data is not the JSON text jit_cache_hook "
                         f"gives ({exc})") from None
    if obj.get("name") != full_name(fn):
        raise RuntimeError(f"Specialization data is for {obj.get('name')} but trying to preload for "
                           f"{full_name(fn)}")
    constants = {tuple(k): _decode(v) for k, v in zip(obj["constant_keys"], obj["constant_vals"])}
    attrs = {tuple(k): v for k, v in zip(obj["attrs_keys"], obj["attrs_vals"])}
    signature = {k: _tuples(v) for k, v in obj["signature"].items()}
    options = {k: _decode(v) if isinstance(v, dict) else _tuples(v) for k, v in obj["options"].items()}
    return compile(ASTSource(fn, signature, constants, attrs), target=target, options=options)
