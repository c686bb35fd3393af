"""dialect/block_types.py: the block shape and element type read from a tensor descriptor's or block pointer's type
(one helper for the cluster split and the GPU lowering)."""
from __future__ import annotations

import pytest

from tritium.dialect.block_types import block_of, descriptor_type, is_descriptor


@pytest.mark.parametrize("text,expect", [
    ("!tt.tensordesc<tensor<128x64xf16>>", ((128, 64), "f16")),
    ("!tt.tensordesc<tensor<8x16x32xbf16>>", ((8, 16, 32), "bf16")),
    ("!tt.tensordesc<tensor<64xi8>>", ((64, ), "i8")),
    ("!tt.tensordesc<tensor<128x64xf8E4M3FN>>", ((128, 64), "f8E4M3FN")),
    ("!tt.ptr<tensor<64x32xf32>>", ((64, 32), "f32")),
    ("!tt.ptr<tensor<64x32xf16>, 1>", ((64, 32), "f16")),
    ("!tt.ptr<f16>", None),
    ("tensor<4x4xf16>", None),
])
def test_block_of(text, expect):
    assert block_of(text) == expect


def test_descriptor_type_round_trip():
    t = descriptor_type([64, 16], "bf16")
    assert t == "!tt.tensordesc<tensor<64x16xbf16>>" and is_descriptor(t) and block_of(t) == ((64, 16), "bf16")
    assert not is_descriptor("!tt.ptr<tensor<64x32xf32>>")
