"""Names that moved between the language's modules (to keep them free of import cycles) are still reachable,
as the same objects, where Triton code and libraries look for them."""
from __future__ import annotations

import pytest

import tritium.language as tl
import tritium.language.core as core
import tritium.language.descriptor as descriptor
import tritium.language.dtypes as dtypes


def test_iterators_reachable_from_core():
    # Triton keeps tl.range in triton.language.core; iterators.py builds on core, so core reaches it lazily
    from tritium.language.core import range, static_range
    assert range is tl.range and static_range is tl.static_range
    assert core.range is tl.range and core.static_range is tl.static_range


def test_descriptor_types_are_one_class():
    assert descriptor.tensor_descriptor_type is dtypes.tensor_descriptor_type is tl.tensor_descriptor_type
    assert descriptor.tensor_descriptor_base_type is dtypes.tensor_descriptor_base_type
    ty = tl.str_to_ty("tensordesc<fp16[64, 32]>")
    assert isinstance(ty, descriptor.tensor_descriptor_type)
    assert ty.block_type == tl.block_type(tl.float16, [64, 32])


def test_block_type_takes_constexpr_dimensions():
    assert tl.block_type(tl.float32, [tl.constexpr(4), 8]).shape == (4, 8)
    with pytest.raises(TypeError, match="compile-time integers"):
        tl.block_type(tl.float32, [tl.constexpr(4.0)])
    with pytest.raises(TypeError, match="compile-time integers"):
        tl.block_type(tl.float32, [tl.constexpr(4), "8"])
