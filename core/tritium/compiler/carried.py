"""Values that ``scf.if`` results and ``scf.for``/``scf.while`` iteration arguments carry.

A tensor is carried as its one IR value, a tuple as its elements' parts in order (a compile-time element
other than a number stays as it is and must not change). A tensor descriptor is carried as its IR value
plus its shape and strides (scalars), as Triton flattens it, so after the branch or loop
``desc.shape``/``desc.strides`` are the carried ones and the value is again a ``tl.tensor_descriptor``. :class:`Carried` holds the run-time parts
and rebuilds the language value from the scf op's results or block arguments.

The backends know a descriptor's padding (what out-of-bounds loads read) at compile time, from the
``make_tensor_descriptor`` that made it, and a carried descriptor takes the padding of its first incoming
value; so values of different paddings must not meet in one result: that is refused here (Triton keeps
the padding in the run-time descriptor and would allow it).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ..language.core import constexpr, tensor, tuple_value
from ..language.descriptor import tensor_descriptor, tensor_descriptor_base


class Carried:
    """``parts``: the tensors an scf op carries for one value; ``template``: the descriptor or tuple they came
    from (None for a plain tensor); ``children``: a tuple's elements, each carried."""

    __slots__ = ("parts", "template", "padding", "children")

    def __init__(self, parts: list[tensor], template: Any = None, padding: str | None = None,
                 children: list["Carried"] | None = None) -> None:
        self.parts, self.template, self.padding, self.children = parts, template, padding, children

    @property
    def type(self) -> Any:
        """The language type, for messages (a descriptor's names its block, and its padding when not zero)."""
        if self.children is not None:
            return "(" + ", ".join(str(c.type) for c in self.children) + ")"
        if isinstance(self.template, constexpr):
            return f"constexpr {self.template.value!r}"
        if self.template is None:
            return self.parts[0].type
        return self.template.type if self.padding in (None, "zero") else f"{self.template.type} " \
            f"(padding_option={self.padding!r})"

    @property
    def handles(self) -> list[Any]:
        return [p.handle for p in self.parts]

    @property
    def ir_types(self) -> list[Any]:
        return [p.handle.type for p in self.parts]

    def same_type(self, other: "Carried") -> bool:
        """Whether ``other`` can flow where this value does: the same kind and the same type for every part
        (a descriptor's shape and strides included; a tuple's, element by element)."""
        if self.children is not None or other.children is not None:
            return self.children is not None and other.children is not None and \
                len(self.children) == len(other.children) and \
                all(a.same_type(b) for a, b in zip(self.children, other.children))
        if isinstance(self.template, constexpr) or isinstance(other.template, constexpr):
            return isinstance(self.template, constexpr) and isinstance(other.template, constexpr) and \
                type(self.template.value) is type(other.template.value) and self.template.value == other.template.value
        if self.padding is not None and other.padding is not None and self.padding != other.padding:
            return False
        return type(self.template) is type(other.template) and len(self.parts) == len(other.parts) and \
            all(a.type == b.type for a, b in zip(self.parts, other.parts))

    def rebuild(self, handles: Sequence[Any]) -> Any:
        """The value these parts stand for, with ``handles`` (results or block arguments) as its IR values."""
        if self.children is not None:
            return self.template.with_values(rebuild_all(self.children, handles))
        if isinstance(self.template, constexpr):
            return self.template
        parts = [tensor(h, p.type) for h, p in zip(handles, self.parts)]
        t = self.template
        if t is None:
            return parts[0]
        if isinstance(t, tensor_descriptor):
            n = len(t.shape.values)
            d = tensor_descriptor(parts[0].handle, parts[1:1 + n], parts[1 + n:], t.block_type)
        else:
            d = tensor_descriptor_base(parts[0].handle, t.block_type)
        d._carried_padding = self.padding  # type: ignore[attr-defined]
        return d


def descriptor_padding(desc: Any) -> str | None:
    """The padding ``desc`` was made with, when the compiler can tell (None: a parameter of a device function)."""
    known = getattr(desc, "_carried_padding", None)
    if known is not None:
        return known
    from .._mlir import ir
    owner = desc.handle.owner if not isinstance(desc.handle, ir.BlockArgument) else None
    op = getattr(owner, "operation", owner)
    if op is None or getattr(op, "name", None) != "tt.make_tensor_descriptor":
        return None
    return ir.StringAttr(op.attributes["padding"]).value if "padding" in op.attributes else "zero"


def carry(v: Any, scalar: Callable[[Any], tensor]) -> Carried:
    """``v`` as an scf op carries it; ``scalar`` turns a tensor or compile-time number into a tensor (and
    refuses anything else with the user's error)."""
    if isinstance(v, tuple_value):
        # an aggregate's constexpr fields are part of its type: they stay compile-time values, never tensors
        keep = getattr(v, "__triton_aggregate__", False)
        children = [Carried([], x) if isinstance(x, constexpr) and (keep or not isinstance(x.value, (int, float, bool)))
                    else carry(x, scalar) for x in v.values]
        return Carried([p for c in children for p in c.parts], v, children=children)
    if isinstance(v, tensor_descriptor_base):
        parts = [tensor(v.handle, v.type)]
        if isinstance(v, tensor_descriptor):
            parts += [scalar(x) for x in list(v.shape.values) + list(v.strides.values)]
        return Carried(parts, v, descriptor_padding(v))
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
