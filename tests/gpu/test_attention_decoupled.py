"""The attention forward's pipelined loops with barriers per stage instead of the loop top's CTA barrier
(gpu/lower/pipeline_decoupled.py; on sm_90 the knob TRITIUM_NVIDIA_DECOUPLED_STAGES): copies one iteration ahead,
each stage's landing told by a barrier every thread arrives on, threads up to one iteration apart. On the
emulator every GPU thread is an OS thread and copies land at once, so a refill of a stage that a slower thread
still reads would show as a wrong result; on an NVIDIA GPU the same with cp.async and mbarriers."""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_attention import _attention, _Numpy, _Torch  # noqa: E402


@pytest.fixture
def taken(monkeypatch):
    """How many loops took the decoupled form in this test."""
    from tritium import knobs
    from tritium.gpu.lower import pipeline_decoupled as pd
    calls = []
    keep = pd.StageBarriers.init

    def init(self, ctx):
        calls.append(self.stages)
        return keep(self, ctx)
    monkeypatch.setattr(pd.StageBarriers, "init", init)
    monkeypatch.setattr(knobs.compilation, "always_compile", True)    # the setting is not in the cache key
    return calls


# (the block-pointer kernel's loads are not software-pipelined on the emulator: the pointer one only)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("N,D,BM,BN,warps,stages", [(128, 32, 32, 16, 2, 3), (128, 32, 32, 32, 4, 3),
                                                     (128, 16, 32, 16, 4, 4)])
def test_emulated_attention_forward_decoupled(emulator, monkeypatch, taken, causal, N, D, BM, BN, warps, stages):
    from tritium.gpu.emulator import EmulatorTarget
    monkeypatch.setattr(EmulatorTarget, "decoupled_stage_warps", 1)
    err, _ = _attention(_Numpy(), 1, 2, N, D, causal, BM, BN, warps, stages, kind="pointers")
    assert err < 1e-2
    assert taken == [stages] * (2 if causal else 1)


def test_emulated_decoupled_needs_the_warps(emulator, monkeypatch, taken):
    from tritium.gpu.emulator import EmulatorTarget
    monkeypatch.setattr(EmulatorTarget, "decoupled_stage_warps", 8)
    err, _ = _attention(_Numpy(), 1, 2, 128, 32, False, 32, 32, 4, 3, kind="pointers")
    assert err < 1e-2 and taken == []


@pytest.mark.parametrize("kind", ["block_ptr", "pointers"])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("N,D,BM,BN,warps,stages", [(256, 128, 128, 128, 8, 3), (1024, 128, 128, 64, 8, 3),
                                                     (1024, 64, 128, 64, 4, 3), (512, 64, 128, 64, 8, 4)])
@pytest.mark.parametrize("turns", [False, True])
def test_cuda_attention_forward_decoupled(cuda, taken, turns, kind, causal, N, D, BM, BN, warps, stages):
    from tritium_nvidia.knobs import nvidia
    with nvidia.scope():
        nvidia.decoupled_stages = 4
        nvidia.warpgroup_turns = turns
        err, _ = _attention(_Torch(), 2, 3, N, D, causal, BM, BN, warps, stages, seed=N + D, kind=kind)
    assert err < 1e-2
    assert taken or kind != "pointers", "no loop took the decoupled form"
