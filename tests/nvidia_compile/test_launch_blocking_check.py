"""The launcher's cheap test for CUDA_LAUNCH_BLOCKING (it skips reading the knob on every launch) answers as the
knob does at every launch: set or unset in the environment between launches, set from Python, scoped."""
from __future__ import annotations

import pytest

from tritium_nvidia import driver
from tritium_nvidia.knobs import nvidia as nv_knobs


@pytest.mark.parametrize("value", ["1", "0", "true"])
def test_follows_the_environment_and_python(monkeypatch, value):
    monkeypatch.delenv("CUDA_LAUNCH_BLOCKING", raising=False)
    assert not driver._blocking_may_be_set() and not nv_knobs.launch_blocking
    monkeypatch.setenv("CUDA_LAUNCH_BLOCKING", value)
    assert driver._blocking_may_be_set()
    assert nv_knobs.launch_blocking == (value != "0")
    monkeypatch.delenv("CUDA_LAUNCH_BLOCKING")
    assert not driver._blocking_may_be_set()
    with nv_knobs.scope():
        nv_knobs.launch_blocking = True
        assert driver._blocking_may_be_set() and nv_knobs.launch_blocking
    assert not driver._blocking_may_be_set()


def test_a_replaced_environment_reads_the_knob(monkeypatch):
    import os
    monkeypatch.setattr(os, "environ", dict(os.environ, CUDA_LAUNCH_BLOCKING="1"))
    assert driver._blocking_may_be_set()
