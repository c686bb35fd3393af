"""The fuzzer on clusters: the gpu-emu plugin file's num_ctas variants, the generator feature that steers kernels
toward the cluster split, and the per-target count of kernels the split took."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tritium.testing.fuzz import driver, gen, runner, targets

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "tests" / "gpu" / "gpu_emu_plugin.py"


def test_cluster_feature_steers_blocks_and_dots_only_when_asked():
    plain = gen.DEFAULT_FEATURES
    steered = plain | {gen.CLUSTER_FEATURE}
    with_dot, wide = 0, 0
    for seed in range(60):
        p = gen.generate(seed, steered)
        dots = [s for s in p.stmts if s.op == "dot"]
        if dots:
            with_dot += 1
            wide += p.blocks["N"] in gen.WIDE_N and p.blocks["N"] not in (p.blocks["M"], p.blocks["K"])
    assert with_dot == 60 and wide == with_dot
    # without the feature the distribution is the default one: kernels without dots, never 128 columns
    plain_kernels = [gen.generate(s, plain) for s in range(60)]
    assert sum(any(s.op == "dot" for s in p.stmts) for p in plain_kernels) < 40
    assert not any(p.blocks["N"] == 128 for p in plain_kernels)


def test_cluster_form_reads_the_ttgir():
    class K:
        def __init__(self, text):
            self.asm = {"ttgir": text}

    assert runner.cluster_form(K('module { tt.func @k() attributes {tritium.cluster_split = 2 : i32} }')) == "split"
    assert runner.cluster_form(K('tt.func @k() attributes {tritium.cluster_one_cta = "no dot"}')) == "one-cta: no dot"
    assert runner.cluster_form(K("tt.func @k()")) == ""
    assert runner.cluster_form(object()) == ""


def test_summary_counts_split_and_one_cta_kernels():
    st = driver.Stats(per_target={"gpu-emu:ctas2": [3, 6.0]},
                      forms={"gpu-emu:ctas2": {"split": 2, "one-cta: no dot": 1}})
    text = driver.summary(st)
    assert "cluster split: 2 kernels, one-CTA form: 1" in text and "1  one-cta: no dot" in text


def test_plugin_file_variants_reach_a_fresh_worker(tmp_path):
    """The plugin file's variants are listed, and a worker process (which cannot import the file by name) runs a
    kernel on the ctas2 variant, reporting the form the kernel took."""
    code = f"""
import json, os
from tritium.testing.fuzz import targets
ts = targets.discover(["gpu-emu"])
print(json.dumps([[t.name, t.plugin, t.env] for t in ts]))
"""
    env = dict(os.environ, TRITIUM_PLUGIN_PATHS=str(PLUGIN), TRITIUM_HOME=str(tmp_path / "home"))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    import json
    listed = json.loads(out.stdout.strip().splitlines()[-1])
    assert [n for n, _, _ in listed] == ["gpu-emu:ctas1", "gpu-emu:ctas2", "gpu-emu:ctas4"]
    assert listed[1][1] == str(PLUGIN)          # the file: a fresh process cannot import "gpu_emu_plugin"
    assert listed[1][2] == {"TRITIUM_EMULATOR_NUM_CTAS": "2"}

    # one steered kernel of 32 x 64 x 16 that the split takes
    t = targets.Target("gpu-emu:ctas2", "gpu-emu", listed[1][1], listed[1][2])
    w = targets.Worker(t, str(tmp_path / "home"), str(tmp_path))
    try:
        hello = w.hello()
        assert hello["ok"] and gen.CLUSTER_FEATURE in hello["features"], hello
        src = tmp_path / "k.py"
        src.write_text(DOT_KERNEL)
        import numpy as np
        a = np.ones((32, 16), np.float32)
        b = np.ones((16, 64), np.float32)
        job = {"op": "run", "path": str(src), "kernel": "kernel", "arrays": {"a": a, "b": b, "c": np.zeros((32, 64),
               np.float32)}, "dtypes": {"a": "float32", "b": "float32", "c": "float32"}, "scalars": {}, "grid": 1,
               "options": {}}
        r = w.call(job, timeout=600)
        assert r["ok"], r
        assert r["form"] == "split"
        np.testing.assert_array_equal(r["arrays"]["c"], np.full((32, 64), 16.0, np.float32))
    finally:
        w.stop()


DOT_KERNEL = """
import tritium as triton
import tritium.language as tl


@triton.jit
def kernel(a, b, c):
    rm = tl.arange(0, 32)
    rn = tl.arange(0, 64)
    rk = tl.arange(0, 16)
    acc = tl.dot(tl.load(a + rm[:, None] * 16 + rk[None, :]), tl.load(b + rk[:, None] * 64 + rn[None, :]))
    tl.store(c + rm[:, None] * 64 + rn[None, :], acc)
"""


def test_installed_backends_are_imported_by_name():
    # an editable install is found by its own import finder, not on sys.path: such a plugin must still go to the
    # worker by module name (loading it from its file would break its package's relative imports)
    found = targets.discover()
    assert found
    for t in found:
        if not t.plugin.endswith("gpu_emu_plugin.py"):
            assert not t.plugin.endswith(".py"), (t.name, t.plugin)
