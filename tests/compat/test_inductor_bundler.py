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

    entries = sorted(n for n in os.listdir(root) if valid(n))
    print(json.dumps({"compiled": len(compiled), "root": root, "entries": entries,
                      "names": [KernelCache().get(n).metadata["name"] for n in entries],
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
    p = subprocess.run([sys.executable, str(script), str(tmp_path / f"out{n}.pt")], env=env,
                       capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-6000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


@pytest.mark.slow
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
    assert warm["compiled"] == 0 and warm["entries"] == cold["entries"], (cold, warm)
    assert {e: sorted(os.listdir(os.path.join(warm["root"], e))) for e in warm["entries"]} == files
    assert torch.equal(torch.load(tmp_path / "out1.pt"), torch.load(tmp_path / "out2.pt"))


# -- one kernel through TritonBundler.collect and read_and_emit, in this process ----------------------------

tl = triton.language


@triton.jit
def _add(x, y, o, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    m = i < n
    tl.store(o + i, tl.load(x + i, mask=m) + tl.load(y + i, mask=m), mask=m)


@pytest.fixture
def bundler(tmp_path, monkeypatch):
    """TritonBundler switched on, compilations counted (tritium asks the inspection hook only when it builds
    a kernel's stages), and ``use(name)`` pointing the kernel cache (inductor's view and tritium's) at a
    folder."""
    import torch._inductor.config as config
    from torch._inductor.triton_bundler import TritonBundler
    from tritium import cache_safety, knobs
    compiled = []

    def count(*args):
        if not args:
            return ("test_inductor_bundler", "1")
        compiled.append(args)

    def use(name):
        monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / name))
        knobs.cache.dir = str(tmp_path / name)
        return tmp_path / name

    cache_safety._warned.clear()
    with knobs.cache.scope(), knobs.runtime.scope(), config.patch(bundle_triton_into_fx_graph_cache=True,
                                                                   force_disable_caches=False):
        knobs.runtime.add_stages_inspection_hook = count
        yield TritonBundler, use, compiled
    cache_safety._warned.clear()


def _compile_and_run():
    from torch._inductor.runtime.runtime_utils import triton_hash_to_path_key
    from tritium.compiler import ASTSource
    sig = {"x": "*fp32", "y": "*fp32", "o": "*fp32", "n": "i32", "B": "constexpr"}
    k = triton.compile(ASTSource(_add, sig, {"B": 64}))
    x, y, o = torch.arange(50.0), torch.full((50, ), 0.5), torch.zeros(50)
    k[(1, 1, 1)](x, y, o, 50)
    torch.testing.assert_close(o, x + 0.5)
    return triton_hash_to_path_key(k.hash)


def _bundle(bundler):
    TritonBundler, use, compiled = bundler
    here = use("here")
    TritonBundler.begin_compile()
    key = _compile_and_run()
    assert len(compiled) == 1
    TritonBundler.put(key, 0)
    bundle, _ = TritonBundler.collect()
    (kernel, ) = bundle.kernel_artifacts
    assert kernel.kernel_hash == key
    assert sorted(a.filename for a in kernel.artifacts) == sorted(os.listdir(here / key))
    assert "manifest.json" in os.listdir(here / key)
    shutil.rmtree(here)
    return bundle, key


def test_bundle_restores_a_verified_entry(bundler):
    TritonBundler, use, compiled = bundler
    bundle, key = _bundle(bundler)
    elsewhere = use("elsewhere")
    TritonBundler.read_and_emit(bundle)
    assert os.path.isfile(elsewhere / key / "manifest.json")
    assert _compile_and_run() == key and len(compiled) == 1, "loaded from the restored entry, not compiled"


def test_tampered_bundle_is_compiled_again(bundler):
    TritonBundler, use, compiled = bundler
    bundle, key = _bundle(bundler)
    (kernel, ) = bundle.kernel_artifacts
    obj = next(a for a in kernel.artifacts if a.filename.endswith(".obj"))
    kernel.artifacts[kernel.artifacts.index(obj)] = type(obj)(obj.filename, obj.payload[:-1] + b"\x01")
    use("elsewhere")
    TritonBundler.read_and_emit(bundle)
    assert _compile_and_run() == key and len(compiled) == 2, "the checksum mismatch is caught: compiled again"


def test_bundle_restored_under_umask_002_is_not_trusted(bundler):
    """The bundler writes with the process's umask: under 002 its group could have written the entry, which
    tritium never loads (the rule for any entry, cache_safety): it warns, compiles again and replaces it."""
    from tritium.cache import CacheWarning
    TritonBundler, use, compiled = bundler
    bundle, key = _bundle(bundler)
    use("elsewhere").mkdir(mode=0o700)
    old = os.umask(0o002)
    try:
        TritonBundler.read_and_emit(bundle)
    finally:
        os.umask(old)
    with pytest.warns(CacheWarning, match="its group can write to it"):
        assert _compile_and_run() == key
    assert len(compiled) == 2
