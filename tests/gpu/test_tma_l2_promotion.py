"""TRITIUM_NVIDIA_TMA_L2_PROMOTION on the GPU: the maps encoded with another L2 sector promotion bring the same
bytes, so examples/08 computes C bit for bit as with the default (128), on NaN-poisoned C, partial and whole
tiles. NVIDIA sm_90 only."""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hopper import SHAPE08_IDS, SHAPES08, assert_same_and_close08, operands08, require_sm90, run08  # noqa: E402

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("size", [0, 256])
@pytest.mark.parametrize("name", ["float16", "float32"])
@pytest.mark.parametrize("shape,programs", SHAPES08[:2], ids=SHAPE08_IDS[:2])
def test_promotion_is_bit_identical(cuda, size, name, shape, programs):
    pytest.importorskip("torch")
    require_sm90("tensor maps encoded by the launcher")
    a, b, out, cfg = operands08(name, (128, 128, 64, 8, 3), shape)
    got, k = run08(a, b, out, cfg, programs, tma_l2_promotion=size)
    want, _ = run08(a, b, out, cfg, programs)
    assert [m["l2_promotion"] for m in k.metadata_dict["tensor_map_params"]] == [size] * 3
    assert_same_and_close08(got, want, a, b)
