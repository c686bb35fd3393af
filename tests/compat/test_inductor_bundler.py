"""torch inductor's TritonBundler carries tritium's compiled kernels in the FX graph cache entry.

Inductor notes every compiled kernel as ``<TRITON_CACHE_DIR>/<kernel.hash>/`` (Triton's cache layout), copies
that folder's files into the FX graph cache entry, and on an FX cache hit writes them back into an empty
cache directory before the compiled module loads its kernels. tritium's cache entries live where the bundler
looks, so a warm start elsewhere (another machine, a wiped kernel cache) loads the restored, checksummed
entries instead of compiling again. Each run is a fresh process: dynamo's and inductor's in-memory caches
and tritium's kernels are gone, only the two cache folders carry over."""
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed")
pytest.importorskip("torch._inductor.triton_bundler", reason="this torch has no TritonBundler")
triton = pytest.importorskip("triton", reason="the tritium-triton-compat package is not installed")

if not hasattr(triton, "__tritium_version__"):
    pytest.skip("`triton` is not tritium's compat package", allow_module_level=True)

# compiles in this process (compile_threads = 1), so that the inspection hook sees every compilation: tritium
# calls it only when it builds a kernel's stages, never for a kernel it loads from its cache
SCRIPT = textwrap.dedent("""
    import json, os, sys
    import torch
    import torch._inductor.config as config
    from torch._dynamo.utils import counters
    from tritium import knobs
    from tritium.cache import KernelCache

    config.cpu_backend = "triton"
    config.fx_graph_cache = True
    config.fx_graph_remote_cache = False
    config.bundle_triton_into_fx_graph_cache = True
    config.compile_threads = 1
    compiled = []

    def count(*args):
        if not args:   # Triton's form, asked for the cache key: the same in every run
            return ("test_inductor_bundler", "1")
        compiled.append(args[3])

    knobs.runtime.add_stages_inspection_hook = count

    def f(x, w):
        return torch.softmax(x @ w, dim=-1) * x.sin().sum(-1, keepdim=True) + x.cumsum(-1)

    torch.manual_seed(0)
    x, w = torch.randn(37, 40), torch.randn(40, 40)
    out = torch.compile(f, fullgraph=True)(x, w)
    torch.testing.assert_close(out, f(x, w))
    torch.save(out, sys.argv[1])
    root = KernelCache().location()

    def valid(name):
        try:
            return KernelCache().get(name) is not None
        except ValueError:   # not a key: the cache's own files and folders
            return False

    print(json.dumps({"compiled": len(compiled), "root": root,
                      "entries": sorted(n for n in os.listdir(root) if valid(n)),
                      "counters": {k: dict(v) for k, v in counters.items() if k == "inductor"}}))
""")


def _run(tmp_path, n: int, kernels: str) -> dict:
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "inductor"),
               TRITON_CACHE_DIR=str(tmp_path / kernels), TORCHINDUCTOR_FX_GRAPH_CACHE="1",
               TORCHINDUCTOR_BUNDLE_TRITON_INTO_FX_GRAPH_CACHE="1", TORCHINDUCTOR_COMPILE_THREADS="1")
    for var in ("TRITON_INTERPRET", "TRITON_ALWAYS_COMPILE", "TRITON_REMOTE_CACHE_BACKEND",
                "TORCHINDUCTOR_FORCE_DISABLE_CACHES"):
        env.pop(var, None)
    script = tmp_path / "run.py"
    script.write_text(SCRIPT)
    p = subprocess.run([sys.executable, str(script), str(tmp_path / f"out{n}.pt")], env=env, capture_output=True,
                       text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-6000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_fx_graph_cache_hit_restores_tritium_kernels(tmp_path):
    cold = _run(tmp_path, 1, "here")
    inductor = cold["counters"]["inductor"]
    assert inductor.get("fxgraph_cache_miss") == 1 and cold["compiled"] > 0, cold
    # every kernel tritium compiled is a complete entry where the bundler looks, and was bundled (all files)
    assert len(cold["entries"]) == cold["compiled"], cold
    assert inductor.get("triton_bundler_save_kernel", 0) >= 2 * cold["compiled"], cold
    files = {e: sorted(os.listdir(os.path.join(cold["root"], e))) for e in cold["entries"]}

    # as on another machine: the kernels are nowhere but in the FX graph cache, which restores them into a
    # kernel cache at another path (the bundler rewrites the old path wherever a .json file held it)
    shutil.rmtree(tmp_path / "here")
    warm = _run(tmp_path, 2, "elsewhere")
    inductor = warm["counters"]["inductor"]
    assert inductor.get("fxgraph_cache_hit") == 1, warm
    assert inductor.get("triton_bundler_read_and_emit_kernel", 0) >= 2 * cold["compiled"], warm
    # the restored entries passed tritium's checks (manifest, checksums, ownership): nothing compiled again
    assert warm["compiled"] == 0, warm
    assert warm["entries"] == cold["entries"]
    assert {e: sorted(os.listdir(os.path.join(warm["root"], e))) for e in warm["entries"]} == files
    assert torch.equal(torch.load(tmp_path / "out1.pt"), torch.load(tmp_path / "out2.pt"))
