"""wide-accumulate on CPU kernels: off by default, on with its knob, and what it changes is measurable."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium import knobs

HERE = Path(__file__).parent


@tritium.jit
def sum_and_cumsum(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr, tl.sum(x, axis=0))
    tl.store(out_ptr + 1 + offs, tl.cumsum(x, axis=0))


def _run(n=4096):
    x = np.ones(n, np.float16)
    out = np.zeros(n + 1, np.float16)
    # one JITFunction for every test: a knob set in process must not hand out a kernel compiled before
    k = sum_and_cumsum[(1,)](x, out, BLOCK=n)
    return k, out


def test_ir_file():
    from tritium.tools.irtest import run_ir_file
    run_ir_file(HERE / "wide-accumulate.mlir")


def test_off_by_default_fp16_scan_loses_counts():
    k, out = _run()
    # tl.sum itself accumulates fp16 in fp32 (the language does, plugin or not); scans stay narrow without the
    # plugin: 2048 + 1 rounds to 2048 in fp16, so the running sum stalls
    assert out[0] == 4096
    assert out[-1] == 2048


def test_knob_widens_reductions_and_scans():
    knobs.wideacc.enable = True
    k, out = _run()
    assert "arith.extf" in k.asm["ttir"] and "tensor<4096xf32>" in k.asm["ttir"]
    assert out[0] == 4096 and out[-1] == 4096
    np.testing.assert_array_equal(out[1:], np.arange(1, 4097).astype(np.float16))


def test_scans_knob_keeps_scans_narrow():
    knobs.wideacc.enable = True
    knobs.wideacc.scans = False
    k, out = _run()
    assert out[0] == 4096 and out[-1] == 2048


def test_knob_changes_the_cache_key_and_pipeline():
    k_off, _ = _run()
    knobs.wideacc.enable = True
    k_on, _ = _run()
    assert k_off.hash != k_on.hash
    from tritium.passes.pipeline import make_pipeline
    assert "wide-accumulate" in make_pipeline("ttir", ["inline", "canonicalize"], None, None)


def test_environment_prefix(tmp_path):
    """The knob is read from the plugin's own environment name."""
    code = ("from tritium import plugins, knobs; "
            "plugins.PluginRegistry.from_objects({'wideacc': 'tritium_wideacc.plugin', 'core': 'tritium.builtin_plugin'}); "
            "print(knobs.wideacc.enable, knobs.wideacc.types)")
    env = dict(os.environ, TRITIUM_WIDEACC_ENABLE="1", TRITIUM_WIDEACC_TYPES="bf16")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "bf16"]


def test_listed_with_its_distribution():
    from tritium.tools.cli import collect
    data = collect()
    assert {"name": "wide-accumulate", "plugin": "wideacc", "kind": "python"}.items() <= \
        next(p for p in data["passes"] if p["name"] == "wide-accumulate").items()
    assert any(g["group"] == "wideacc" for g in data["knob_groups"])


@pytest.mark.parametrize("dtype", [np.float32])
def test_f32_kernels_unchanged(dtype):
    knobs.wideacc.enable = True
    x = np.random.rand(1024).astype(dtype)
    out = np.zeros(1025, dtype)
    k = sum_and_cumsum[(1,)](x, out, BLOCK=1024)
    assert "arith.extf" not in k.asm["ttir"]
    np.testing.assert_allclose(out[0], x.sum(), rtol=1e-5)
