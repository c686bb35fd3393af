"""TRITIUM_NVIDIA_PRODUCER_WARPS on the GPU: examples/08 with its copies issued by a producer warp (1 or 4 extra
warps; gpu/lower/pipeline_producer.py) must compute exactly what the kernel without it computes (the same dots
in the same order; only who issues the copies changes), on NaN-poisoned C: several tile configs (one or two
warpgroups, mma.sync at 64x64), fp16/bf16/fp8/tf32, partial and whole tiles, K shorter than the pipeline and
long, persistent grids smaller than the tile count (the producer walks several tiles ahead of the consumers) and
larger (programs without a tile). A wrong phase or a barrier counting the producer's threads hangs or reads a
stage early: the comparison is bit for bit. NVIDIA sm_90 only."""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hopper import (CONFIGS08, SHAPE08_IDS, SHAPES08, assert_same_and_close08, operands08,  # noqa: E402
                    require_sm90, run08)

pytestmark = pytest.mark.gpu


def _run(a, b, out_dtype, cfg, producer, programs):
    c, k = run08(a, b, out_dtype, cfg, programs, empty_barriers=bool(producer), producer_warps=producer)
    return c, k.metadata.num_warps


@pytest.mark.parametrize("cfg", CONFIGS08, ids=lambda c: "x".join(map(str, c[:3])) + f"-w{c[3]}-s{c[4]}")
@pytest.mark.parametrize("name", ["float16", "bfloat16", "float8_e4m3fn", "float32"])
@pytest.mark.parametrize("producer", [1, 4])
@pytest.mark.parametrize("shape,programs", SHAPES08, ids=SHAPE08_IDS)
def test_producer_warp_is_bit_identical(cuda, cfg, name, producer, shape, programs):
    pytest.importorskip("torch")
    require_sm90("producer warps")
    warps = cfg[3]
    a, b, out, cfg = operands08(name, cfg, shape)
    got, w_on = _run(a, b, out, cfg, producer, programs)
    want, w_off = _run(a, b, out, cfg, 0, programs)
    assert (w_off, w_on) == (warps, warps + producer)
    assert_same_and_close08(got, want, a, b)
