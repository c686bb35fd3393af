"""Kernel parameters whose signature entry is a tuple or a host tensor descriptor.

A tuple parameter becomes one IR argument per run-time element (depth first), a descriptor its base
pointer, shape (int32) and strides but the last (int64). Inside the kernel the parameter is rebuilt: a
``tl.tuple`` of its elements (compile-time elements from the constants, keyed by their path), or the
descriptor ``tl.make_tensor_descriptor`` builds from those values with a last stride of 1.
"""
from __future__ import annotations

import re
from typing import Any, Iterator

from ..language import core as tl
from ..language.dtypes import pointer_type, str_to_ty, tuple_type
from .frontend import wrap_python

_DESC = re.compile(r"tensordesc<\s*([\w]+)\s*\[([\d,\s]*)\]\s*(?:,\s*padding\s*=\s*(\w+)\s*)?>$")


class ArgSpec:
    """A parameter built from several IR arguments (or a tuple with compile-time elements)."""

    def __init__(self, kind: str, parts: list, fields: Any = None, elt: Any = None, block: tuple = (),
                 padding: str = "zero") -> None:
        self.kind = kind  # "tuple" | "desc"
        self.parts = parts  # tuple elements: ArgSpec | tl dtype | ("C", value)
        self.fields = fields
        self.elt = elt
        self.block = block
        self.padding = padding


def is_structured(sig: Any) -> bool:
    return isinstance(sig, tuple) or (isinstance(sig, str) and sig.startswith("tensordesc"))


def parse(sig: Any, path: tuple, constants: dict) -> Any:
    """The spec of a signature entry at ``path``: ArgSpec, a tl type (one IR argument) or ("C", value)."""
    if isinstance(sig, tuple):
        fields = getattr(type(sig), "_fields", None)
        return ArgSpec("tuple", [parse(s, path + (j, ), constants) for j, s in enumerate(sig)], fields)
    if sig == "constexpr":
        return ("C", constants.get(path))
    if sig.startswith("tensordesc"):
        m = _DESC.match(sig.replace(" ", ""))
        if m is None:
            raise TypeError(f"malformed tensor descriptor type {sig!r}; expected e.g. 'tensordesc<fp16[64, 64]>'")
        block = tuple(int(x) for x in m.group(2).split(",") if x)
        return ArgSpec("desc", [], elt=str_to_ty(m.group(1)), block=block, padding=m.group(3) or "zero")
    return str_to_ty(sig)


def flat_args(spec: Any, path: tuple) -> list[tuple[Any, tuple, list]]:
    """(tl type, attrs path, extra attrs) of each IR argument of a spec, in order."""
    if isinstance(spec, ArgSpec):
        if spec.kind == "desc":
            nd = len(spec.block)
            # the base is 16-byte aligned and the outer strides are 16-byte multiples: the runtime refuses
            # descriptors that are not (backends may copy their blocks with engines that need it)
            stride_div = [["tt.divisibility", max(1, 128 // max(8, spec.elt.primitive_bitwidth))]]
            # the innermost extent's facts are keyed by its position among the parts (base, shape..., strides)
            return ([(pointer_type(spec.elt), path, [["tt.divisibility", 16]])] + [(tl.int32, None, [])] * (nd - 1)
                    + [(tl.int32, path + (nd, ), [])] + [(tl.int64, None, stride_div)] * (nd - 1))
        out = []
        for j, part in enumerate(spec.parts):
            out += flat_args(part, path + (j, ))
        return out
    if isinstance(spec, tuple):
        return []
    return [(spec, path, [])]


def build(spec: Any, args: Iterator[Any], semantic: Any) -> Any:
    """The kernel's value of a parameter, from its IR arguments; descriptors emit their make op here."""
    if isinstance(spec, tuple):
        v = spec[1]
        return v if isinstance(v, (tl.constexpr, tl.tuple_value)) else wrap_python(v)
    if not isinstance(spec, ArgSpec):
        return tl.tensor(next(args), spec)
    if spec.kind == "tuple":
        values = [build(p, args, semantic) for p in spec.parts]
        return tl.tuple_value(values, tuple_type([getattr(v, "type", None) for v in values], spec.fields))
    nd = len(spec.block)
    base = tl.tensor(next(args), pointer_type(spec.elt))
    shape = [tl.tensor(next(args), tl.int32) for _ in range(nd)]
    strides = [tl.tensor(next(args), tl.int64) for _ in range(nd - 1)] + [tl.constexpr(1)]
    return semantic.make_tensor_descriptor(base, shape, strides, list(spec.block), spec.padding)
