"""What the lowering holds for each IR value: a uniform scalar, or a tile spread over the program's threads
(one SSA value per register of its layout)."""
from __future__ import annotations

from typing import Any

from ..._mlir import ir
from ..layout import Layout


class Scalar:
    """A value every thread of the program holds (kernel arguments, program ids, scalar arithmetic)."""
    __slots__ = ("value", "ty")

    def __init__(self, value: str, ty: str) -> None:
        self.value, self.ty = value, ty

    def __repr__(self) -> str:
        return f"Scalar({self.value}: {self.ty})"


class Tensor:
    """A tile in ``layout``: ``regs[r]`` is this thread's register ``r`` (LLVM type ``ty``)."""
    __slots__ = ("layout", "regs", "ty")

    def __init__(self, layout: Layout, regs: list[str], ty: str) -> None:
        if len(regs) != layout.num_regs:
            raise AssertionError(f"{len(regs)} registers for a layout of {layout.num_regs}")
        self.layout, self.regs, self.ty = layout, regs, ty

    @property
    def shape(self) -> tuple[int, ...]:
        return self.layout.shape

    def __repr__(self) -> str:
        return f"Tensor({self.layout.text()} x {self.ty}, {len(self.regs)} regs)"


class LoweringError(NotImplementedError):
    """The GPU lowering cannot handle this kernel (names the op and what to do)."""
    #: the message already points at the kernel's source line
    located = False


def owner_op(value: Any) -> Any:
    """The operation that defines ``value``, or None for a block argument."""
    if isinstance(value, ir.OpResult):
        return value.owner
    if isinstance(value, ir.BlockArgument):
        return None
    owner = value.owner
    return owner if isinstance(owner, (ir.Operation, ir.OpView)) else None
