"""What the compiler is given for one specialization key: the kernel's signature, its compile-time values and
divisibility attributes, which run-time values the compiled kernel takes, and where its arrays live.

Apart from :mod:`.specialize` (argument keys, on every launch) and :mod:`.structured` (tuple and descriptor
arguments, which build on specialize): this module builds on both.
"""
from __future__ import annotations

from typing import Any

from ..language.core import constexpr
from .specialize import MockTensor, dtype_name
from .structured import structured_inputs, structured_locations


def compile_inputs(fn: Any, key: tuple, bound: tuple) -> tuple[dict, dict, dict, tuple]:
    """(signature, constexprs, attrs) for ASTSource, and which entries of the binder's ``runtime`` tuple the
    compiled kernel takes (indices, or paths into tuple arguments), from one specialization key."""
    signature: dict[str, str] = {}
    constexprs: dict[tuple, Any] = {}
    attrs: dict[tuple, list] = {}
    keep: list[Any] = []
    r = 0
    for i, (p, k, v) in enumerate(zip(fn.params, key, bound)):
        if k[0] in ("()", "TD"):
            signature[p.name] = structured_inputs(p, k, v, (i, ), (r, ), constexprs, attrs, keep)
        elif k[0] == "C":
            signature[p.name] = "constexpr"
            constexprs[(i, )] = v.value if isinstance(v, constexpr) else v
        elif k[0] == "*":
            signature[p.name] = ("*k" if p.is_const else "*") + dtype_name(k[1])
            if k[3]:
                attrs[(i, )] = [["tt.divisibility", 16]]
            keep.append(r)
        else:
            signature[p.name] = k[0]
            if k[1] == "D":
                attrs[(i, )] = [["tt.divisibility", 16]]
            keep.append(r)
        if not p.is_constexpr:
            r += 1
    return signature, constexprs, attrs, tuple(keep)


def array_locations(fn: Any, key: tuple, bound: tuple) -> list[tuple[str, str]]:
    """(parameter name, location) of every array argument in a key; warmup's stand-ins have no memory to
    check."""
    out: list[tuple[str, str]] = []
    for p, k, v in zip(fn.params, key, bound):
        if k[0] == "*" and not isinstance(v, MockTensor):
            out.append((p.name, k[2]))
        elif k[0] in ("()", "TD"):
            structured_locations(p.name, k, v, out)
    return out
