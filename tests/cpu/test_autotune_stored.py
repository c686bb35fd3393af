"""Autotuning results kept on disk (``cache_results=True`` / TRITON_CACHE_AUTOTUNING) are input like cache entries:
a result file another user could have written, or one naming a config that is not being tuned, is not used (a
planted block size could make the kernel read past its arrays); the configs are timed again instead."""
from __future__ import annotations

import glob
import json
import os

import numpy as np
import pytest

import tritium
import tritium.language as tl

N = 64
CONFIGS = [tritium.Config({"B": 16}), tritium.Config({"B": 32})]


@tritium.jit
def _copy(x_ptr, out_ptr, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def _tune_and_run():
    tuned = tritium.autotune(CONFIGS, key=["n"], cache_results=True, warmup=1, rep=3)(_copy)
    x = np.arange(N, dtype=np.float32)
    out = np.zeros(N, dtype=np.float32)
    tuned[lambda meta: (tritium.cdiv(N, meta["B"]),)](x, out, N)
    assert np.array_equal(out, x)
    return tuned


def _stored(cache_dir) -> str:
    (path,) = glob.glob(os.path.join(str(cache_dir), "**", "autotune", "*", "*.json"), recursive=True)
    return path


def test_stored_result_is_reused(fresh_cache):
    assert _tune_and_run().bench_time > 0
    assert _tune_and_run().bench_time == 0.0, "the stored result was not reused"


def test_result_naming_a_foreign_config_is_not_used(fresh_cache):
    _tune_and_run()
    path = _stored(fresh_cache)
    doc = json.load(open(path))
    for pair in doc["configs_timings"]:
        pair[0]["kwargs"]["B"] = 4096
        pair[1] = [0.0]
    with open(path, "w") as f:
        json.dump(doc, f)
    tuned = _tune_and_run()
    assert tuned.bench_time > 0, "a stored result naming a config not being tuned was used"
    assert {c.kwargs["B"] for c in tuned.configs_timings} == {16, 32}


@pytest.mark.skipif(not hasattr(os, "chown") or os.geteuid() != 0, reason="needs root to give a file to another uid")
def test_result_owned_by_another_user_is_not_used(fresh_cache):
    _tune_and_run()
    path = _stored(fresh_cache)
    os.chown(path, 65534, 65534)
    assert _tune_and_run().bench_time > 0, "a result file another user owns was used"
