"""TRITIUM_NVIDIA_EMPTY_BARRIERS on the GPU: examples/08's K loop freeing its stages through per-stage empty
mbarriers (gpu/lower/pipeline_empty.py) instead of CTA barriers must compute exactly what the knob-off kernel
computes (the same dots in the same order; only who waits for whom changes), on NaN-poisoned C: several tile
configs (one or two warpgroups, mma.sync at 64x64), fp16/bf16/fp8/tf32, partial and whole tiles, K shorter than
the pipeline (fewer K steps than stages) and long, persistent grids smaller than the tile count (each program
walks several tiles, the stages' phases carried from tile to tile) and larger (programs without a tile), with the
tile prefetch in each mode. A wrong phase hangs or reads a stage early: the comparison is bit for bit. NVIDIA
sm_90 only."""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hopper import (CONFIGS08, SHAPE08_IDS, SHAPES08, assert_same_and_close08, operands08,  # noqa: E402
                    require_sm90, run08)

pytestmark = pytest.mark.gpu


def _run(a, b, out_dtype, cfg, empties, prefetch, programs):
    c, k = run08(a, b, out_dtype, cfg, programs, empty_barriers=empties, prefetch_tiles=prefetch)
    return c, k.asm["ptx"].count("mbarrier.arrive.shared::cta.b64 _,")


@pytest.mark.parametrize("cfg", CONFIGS08, ids=lambda c: "x".join(map(str, c[:3])) + f"-w{c[3]}-s{c[4]}")
@pytest.mark.parametrize("name", ["float16", "bfloat16", "float8_e4m3fn", "float32"])
@pytest.mark.parametrize("prefetch", [2, 1, 0], ids=["carried", "restarted", "no-prefetch"])
@pytest.mark.parametrize("shape,programs", SHAPES08, ids=SHAPE08_IDS)
def test_empty_barriers_are_bit_identical(cuda, cfg, name, prefetch, shape, programs):
    pytest.importorskip("torch")
    require_sm90("empty barriers")
    a, b, out, cfg = operands08(name, cfg, shape)
    got, n_on = _run(a, b, out, cfg, True, prefetch, programs)
    want, n_off = _run(a, b, out, cfg, False, prefetch, programs)
    assert n_off == 0
    assert n_on >= 2
    assert_same_and_close08(got, want, a, b)
