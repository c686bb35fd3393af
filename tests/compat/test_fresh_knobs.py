"""``triton._internal_testing._fresh_knobs_impl`` (Triton's ``fresh_knobs`` fixture): fresh() gives every knob its
default, environment variables unset; reset() brings back the values and the environment that were there."""
import os

import pytest

pytest.importorskip("triton", reason="the triton compat package is not installed")

from triton._internal_testing import _fresh_knobs_impl  # noqa: E402

from tritium import knobs  # noqa: E402


def test_fresh_then_reset(monkeypatch):
    monkeypatch.setenv("TRITON_ALWAYS_COMPILE", "1")
    hook = object()
    with knobs.runtime.scope():
        knobs.runtime.jit_cache_hook = hook
        assert knobs.compilation.always_compile is True
        fresh, reset = _fresh_knobs_impl()
        k = fresh()
        assert k is knobs
        assert knobs.runtime.jit_cache_hook is None
        assert knobs.compilation.always_compile is False and "TRITON_ALWAYS_COMPILE" not in os.environ
        knobs.runtime.jit_cache_hook = print
        reset()
        assert knobs.runtime.jit_cache_hook is hook
        assert os.environ["TRITON_ALWAYS_COMPILE"] == "1" and knobs.compilation.always_compile is True


def test_skipped_groups_keep_their_values():
    with knobs.runtime.scope():
        knobs.runtime.jit_cache_hook = print
        fresh, reset = _fresh_knobs_impl(skipped_attr={"runtime"})
        fresh()
        try:
            assert knobs.runtime.jit_cache_hook is print
        finally:
            reset()
