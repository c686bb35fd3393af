"""Values that ``scf.if`` results and ``scf.for``/``scf.while`` iteration arguments carry.

A tensor is carried as its one IR value. A tensor descriptor is carried as its IR value plus its shape and
strides (scalars), as Triton flattens it, so after the branch or loop ``desc.shape``/``desc.strides`` are
the carried ones and the value is again a ``tl.tensor_descriptor``. :class:`Carried` holds the run-time parts
and rebuilds the language value from the scf op's results or block arguments.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ..language.core import tensor
from ..language.descriptor import tensor_descriptor, tensor_descriptor_base


class Carried:
    """``parts``: the tensors an scf op carries for one value; ``template``: the descriptor they came from
    (None for a plain tensor)."""

    __slots__ = ("parts", "template")

    def __init__(self, parts: list[tensor], template: Any = None) -> None:
        self.parts, self.template = parts, template

    @property
    def type(self) -> Any:
        """The language type, for messages (a descriptor's names its block)."""
        return self.template.type if self.template is not None else self.parts[0].type

    @property
    def handles(self) -> list[Any]:
        return [p.handle for p in self.parts]

    @property
    def ir_types(self) -> list[Any]:
        return [p.handle.type for p in self.parts]

    def same_type(self, other: "Carried") -> bool:
        """Whether ``other`` can flow where this value does: the same kind and the same type for every part
        (a descriptor's shape and strides included)."""
        return type(self.template) is type(other.template) and len(self.parts) == len(other.parts) and \
            all(a.type == b.type for a, b in zip(self.parts, other.parts))

    def rebuild(self, handles: Sequence[Any]) -> Any:
        """The value these parts stand for, with ``handles`` (results or block arguments) as its IR values."""
        parts = [tensor(h, p.type) for h, p in zip(handles, self.parts)]
        t = self.template
        if t is None:
            return parts[0]
        if isinstance(t, tensor_descriptor):
            n = len(t.shape.values)
            return tensor_descriptor(parts[0].handle, parts[1:1 + n], parts[1 + n:], t.block_type)
        return tensor_descriptor_base(parts[0].handle, t.block_type)


def carry(v: Any, scalar: Callable[[Any], tensor]) -> Carried:
    """``v`` as an scf op carries it; ``scalar`` turns a tensor or compile-time number into a tensor (and
    refuses anything else with the user's error)."""
    if isinstance(v, tensor_descriptor_base):
        parts = [tensor(v.handle, v.type)]
        if isinstance(v, tensor_descriptor):
            parts += [scalar(x) for x in list(v.shape.values) + list(v.strides.values)]
        return Carried(parts, v)
    return Carried([scalar(v)])


def flat(values: Sequence[Carried]) -> list[Any]:
    """The IR values of ``values``, in order."""
    return [h for c in values for h in c.handles]


def rebuild_all(values: Sequence[Carried], handles: Sequence[Any]) -> list[Any]:
    """Rebuild each of ``values`` from consecutive ``handles`` (the scf op's results or block arguments)."""
    out, i = [], 0
    for c in values:
        n = len(c.parts)
        out.append(c.rebuild(list(handles[i:i + n])))
        i += n
    return out
