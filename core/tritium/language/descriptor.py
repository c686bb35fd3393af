"""Tensor descriptors: ``tl.make_tensor_descriptor`` and the blocks loaded and stored through them.

A descriptor names a strided tensor in memory (base, shape, strides) and a block shape. Loads read one
block at element offsets, filling what lies outside the tensor with the padding value; stores, atomic
reductions and scatters drop what lies outside.
"""
from __future__ import annotations

from typing import Any, Sequence

from .core import _unwrap, _unwrap_shape, base_value, builtin
from .dtypes import (  # noqa: F401  (re-exported: the descriptor types lived here)
    block_type, tensor_descriptor_base_type, tensor_descriptor_type)


class tensor_descriptor_base(base_value):
    """A descriptor value inside a kernel. ``handle`` is its IR value."""

    def __init__(self, handle: Any, block_ty: block_type) -> None:
        self.handle = handle
        self.type = tensor_descriptor_base_type(block_ty)

    @property
    def block_type(self) -> block_type:
        return self.type.block_type

    @property
    def block_shape(self) -> list[int]:
        return list(self.type.block_type.shape)

    @property
    def dtype(self) -> dtype:
        return self.type.block_type.element_ty

    def __str__(self) -> str:
        return str(self.type)

    @builtin
    def load(self, offsets: Sequence[Any], _semantic: Any = None) -> Any:
        """The block at element ``offsets``; elements outside the tensor read as the padding value."""
        return _semantic.descriptor_load(self, offsets, "", "")

    @builtin
    def store(self, offsets: Sequence[Any], value: Any, _semantic: Any = None) -> Any:
        """Write ``value`` (converted to the descriptor's dtype) at ``offsets``; outside elements are dropped."""
        return _semantic.descriptor_store(self, value, offsets)

    @builtin
    def atomic_add(self, offsets: Sequence[Any], value: Any, _semantic: Any = None) -> Any:
        return _semantic.descriptor_reduce("add", self, value, offsets)

    @builtin
    def atomic_min(self, offsets: Sequence[Any], value: Any, _semantic: Any = None) -> Any:
        return _semantic.descriptor_reduce("min", self, value, offsets)

    @builtin
    def atomic_max(self, offsets: Sequence[Any], value: Any, _semantic: Any = None) -> Any:
        return _semantic.descriptor_reduce("max", self, value, offsets)

    @builtin
    def atomic_and(self, offsets: Sequence[Any], value: Any, _semantic: Any = None) -> Any:
        return _semantic.descriptor_reduce("and", self, value, offsets)

    @builtin
    def atomic_or(self, offsets: Sequence[Any], value: Any, _semantic: Any = None) -> Any:
        return _semantic.descriptor_reduce("or", self, value, offsets)

    @builtin
    def atomic_xor(self, offsets: Sequence[Any], value: Any, _semantic: Any = None) -> Any:
        return _semantic.descriptor_reduce("xor", self, value, offsets)

    @builtin
    def gather(self, *args: Any, _semantic: Any = None) -> Any:
        """Rows ``x_offsets`` (a 1-D block), columns ``y_offset`` onwards, of a descriptor whose block has one
        row."""
        if len(args) != 2:
            raise TypeError(f"descriptor gather takes (x_offsets, y_offset), got {len(args)} arguments")
        return _semantic.descriptor_gather(self, _unwrap(args[0]), _unwrap(args[1]))

    @builtin
    def scatter(self, value: Any, *args: Any, _semantic: Any = None) -> Any:
        if len(args) != 2:
            raise TypeError(f"descriptor scatter takes (value, x_offsets, y_offset), got {len(args) + 1} arguments")
        return _semantic.descriptor_scatter(self, value, _unwrap(args[0]), _unwrap(args[1]))


class tensor_descriptor(tensor_descriptor_base):
    """A descriptor with known shape and strides (``desc.shape``, ``desc.strides``: tuples of scalars)."""

    def __init__(self, handle: Any, shape: Sequence[Any], strides: Sequence[Any], block_ty: block_type) -> None:
        super().__init__(handle, block_ty)
        from .core import tuple_value
        self.shape = tuple_value(list(shape))
        self.strides = tuple_value(list(strides))
        self.type = tensor_descriptor_type(block_ty, self.shape.type, self.strides.type)


@builtin
def make_tensor_descriptor(base, shape, strides, block_shape, padding_option="zero", _semantic=None):
    """A descriptor of the tensor at ``base`` with ``shape`` and ``strides`` (the last stride must be 1),
    loaded and stored in blocks of ``block_shape``."""
    return _semantic.make_tensor_descriptor(base, shape, strides, _unwrap_shape(block_shape),
                                            _unwrap(padding_option))


@builtin
def load_tensor_descriptor(desc, offsets, _semantic=None):
    """``desc.load(offsets)``."""
    return _semantic.descriptor_load(desc, offsets, "", "")


@builtin
def store_tensor_descriptor(desc, offsets, value, _semantic=None):
    """``desc.store(offsets, value)``."""
    return _semantic.descriptor_store(desc, value, offsets)
