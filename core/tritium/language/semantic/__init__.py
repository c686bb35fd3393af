"""Type checking and IR construction for the Triton language.

Builtins call into :class:`Semantic`, which checks types and shapes the way Triton does, then asks
the builder to create operations. Errors raised here are user errors (``CompileTimeError``,
``TypeError``, ``ValueError``); the code generator attaches the kernel, the line and a caret.
"""
from __future__ import annotations

from typing import Any

from .. import core as tl
from ..descriptor import tensor_descriptor_base_type
from .arith import ArithMixin
from .casts import CastMixin
from .descriptor import DescriptorMixin
from .memory import MemoryMixin
from .misc import MiscMixin
from .regions import RegionMixin
from .shape import ShapeMixin


class Semantic(ArithMixin, CastMixin, ShapeMixin, MemoryMixin, MiscMixin, DescriptorMixin, RegionMixin):
    tensor = tl.tensor
    lang = tl

    def __init__(self, builder: Any, options: Any = None, capabilities: frozenset[str] = frozenset()) -> None:
        self.builder = builder
        self.options = options
        self.capabilities = capabilities
        self._ir_types: dict[Any, Any] = {}

    # dtype -> builder type, cached (hot: every constant and cast asks)
    def ir_type(self, ty: tl.dtype) -> Any:
        t = self._ir_types.get(ty)
        if t is None:
            t = self._ir_types[ty] = self._make_ir_type(ty)
        return t

    def _make_ir_type(self, ty: tl.dtype) -> Any:
        b = self.builder
        if isinstance(ty, tl.block_type):
            return b.get_block_ty(self.ir_type(ty.element_ty), ty.shape)
        if isinstance(ty, tl.pointer_type):
            return b.get_ptr_ty(self.ir_type(ty.element_ty), ty.address_space)
        if isinstance(ty, tensor_descriptor_base_type):
            return b.get_tensordesc_ty(self.ir_type(ty.block_type))
        name = ty.name
        if ty.is_int():
            return b.get_int_ty(ty.int_bitwidth)
        if name == "fp16":
            return b.get_half_ty()
        if name == "bf16":
            return b.get_bf16_ty()
        if name == "fp32":
            return b.get_float_ty()
        if name == "fp64":
            return b.get_double_ty()
        if ty.is_fp8():
            return b.get_fp8_ty(name)
        raise TypeError(f"type {ty} has no IR representation")


__all__ = ["Semantic"]
