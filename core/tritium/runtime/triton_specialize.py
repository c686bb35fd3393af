"""Triton's argument-specialization functions, for code written against Triton's runtime rather than for
tritium's binder: torch inductor's analysis of a user kernel builds the kernel's signature and attributes with
``triton.runtime.jit.native_specialize_impl`` and ``mangle_type``. Both read tritium's own argument keys
(:func:`.specialize.specialize_arg`), so a signature built this way is the one a launch would compile with."""
from __future__ import annotations

from typing import Any

from ..backends.compiler import BaseBackend
from ..language.device_function import DeviceFunction
from .specialize import dtype_name, specialize_arg
from .structured import descriptor_signature


def native_specialize_impl(backend: Any, arg: Any, is_const: bool = False, specialize_value: bool = True,
                           align: bool = True) -> tuple[Any, Any]:
    """(type, key) of one kernel argument, as Triton spells them.

    type: ``"i32"``/``"i64"``/``"u64"``, ``"fp32"``, ``"u1"``, ``"*fp16"`` (``"*kfp16"`` for a read-only
    parameter), ``"tensordesc<fp16[64, 64]>"`` or ``"constexpr"``; key: ``backend``'s specialization string
    (``"D"``: divisible by 16; None where the value is not specialized) or, for a compile-time value, the value
    (a @jit function's cache key). A tuple gives a tuple of types and a tuple of keys (a namedtuple keeps its
    class)."""
    if isinstance(arg, tuple):
        parts = [native_specialize_impl(backend, x, is_const, specialize_value, align) for x in arg]
        make = type(arg)._make if hasattr(type(arg), "_fields") else tuple
        return make(p[0] for p in parts), make(p[1] for p in parts)
    key, _ = specialize_arg(arg, specialize_value, align)
    kind = key[0]
    if kind == "C":  # None, tl.constexpr, dtypes, @jit functions, an int equal to 1
        return "constexpr", arg.cache_key if isinstance(arg, DeviceFunction) else key[2]
    if kind == "*":
        spec = None
        if specialize_value:
            spec = (backend.get_tensor_specialization(arg, align=align) if hasattr(arg, "data_ptr")
                    else "D" if key[3] else "")
        return ("*k" if is_const else "*") + dtype_name(key[1]), spec
    if kind == "TD":
        spec = backend.get_tensordesc_specialization(arg, align=align) if specialize_value else None
        return descriptor_signature(key[1], key[3], key[4]), spec
    if kind in ("i32", "i64", "u64"):
        return kind, backend.get_int_specialization(int(arg), align=align) if specialize_value else None
    return kind, None  # fp32, u1: never specialized


def mangle_type(arg: Any, specialize: bool = False) -> str:
    """The signature type of an argument (``"*fp32"``, ``"i32"``, ``"constexpr"``...)."""
    return native_specialize_impl(BaseBackend, arg, False, specialize, True)[0]
