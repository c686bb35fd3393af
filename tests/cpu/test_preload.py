"""Triton 3.6's ``jit_cache_hook`` ``compile["specialization_data"]`` and ``JITFunction.preload``: a kernel
compiled in one process is preloaded in another from the hook's text, and that process's launch then runs
without compiling (the hook, called before every compilation, is not called again). ``device_caches`` indexed
by a device reads as Triton's ``(kernel_cache, kernel_key_cache, target, backend, binder)``."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium import knobs

KERNEL = textwrap.dedent('''
    import tritium as triton
    import tritium.language as tl


    @triton.jit
    def scale(X, Y, n, t, s, DT: tl.constexpr, B: tl.constexpr):
        tl.static_assert(t[1][0] == 2)
        offs = tl.arange(0, B)
        m = offs < n
        x = tl.load(X + offs, mask=m)
        tl.store(Y + offs, (x * s + t[0][0]).to(DT), mask=m)
''')

WRITER = textwrap.dedent('''
    import sys
    import numpy as np
    import tritium.language as tl
    from tritium import knobs
    from kmod import scale

    seen = []
    knobs.runtime.jit_cache_hook = lambda **kw: seen.append(kw["compile"]["specialization_data"])
    x = np.arange(40, dtype=np.float32)
    y = np.zeros(40, np.float32)
    scale[(1, )](x, y, 37, ((3, ), (tl.constexpr(2), )), 2.0, tl.float32, 64, num_warps=2)
    assert y[36] == 36 * 2 + 3 and y[37] == 0, y
    assert len(seen) == 1 and isinstance(seen[0], str)
    open(sys.argv[1], "w").write(seen[0])
''')

READER = textwrap.dedent('''
    import sys
    import numpy as np
    import tritium.language as tl
    from tritium import knobs
    from kmod import scale

    kernel = scale.preload(open(sys.argv[1]).read())
    assert kernel is not None
    compiled = []
    knobs.runtime.jit_cache_hook = lambda **kw: compiled.append(kw["key"])
    x = np.arange(40, dtype=np.float32)
    y = np.zeros(40, np.float32)
    got = scale[(1, )](x, y, 5, ((4, ), (tl.constexpr(2), )), 0.5, tl.float32, 64, num_warps=2)
    assert got is kernel, "the launch did not take the preloaded kernel"
    assert compiled == [], f"the launch compiled: {compiled}"
    assert y[:6].tolist() == [4.0, 4.5, 5.0, 5.5, 6.0, 0.0], y[:6]
    # another specialization (n divisible by 16) is not the preloaded one: it compiles, and the hook sees it
    scale[(1, )](x, y, 32, ((4, ), (tl.constexpr(2), )), 0.5, tl.float32, 64, num_warps=2)
    assert len(compiled) == 1
    print("ok")
''')


def _python(tmp_path, script: str, *args: str) -> str:
    (tmp_path / "script.py").write_text(script)
    env = dict(os.environ, TRITON_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=os.pathsep.join([str(tmp_path), *filter(None, [os.environ.get("PYTHONPATH")])]))
    env.pop("TRITON_INTERPRET", None)
    r = subprocess.run([sys.executable, str(tmp_path / "script.py"), *args], capture_output=True, text=True,
                       env=env, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout.strip()


def test_preloaded_in_another_process_launches_without_compiling(tmp_path):
    (tmp_path / "kmod.py").write_text(KERNEL)
    data = tmp_path / "spec.json"
    _python(tmp_path, WRITER, str(data))
    obj = json.loads(data.read_text())
    assert obj["name"] == "kmod.scale"
    assert obj["signature"]["t"] == [["i32"], ["constexpr"]]  # Triton's fields, as Triton writes them
    assert obj["launch_options"] == {"num_warps": 2}
    assert _python(tmp_path, READER, str(data)) == "ok"


@triton.jit
def _add_one(X, n, B: tl.constexpr):
    offs = tl.arange(0, B)
    tl.store(X + offs, tl.load(X + offs, mask=offs < n) + 1, mask=offs < n)


def test_hook_info_has_triton_fields_and_preload_in_process():
    seen = []
    x = np.zeros(8, np.float32)
    with knobs.runtime.scope():
        knobs.runtime.jit_cache_hook = lambda **kw: seen.append(kw["compile"])
        _add_one[(1, )](x, 7, 8)
        info = seen[-1]
        for name in ("num_ctas", "enable_fp_fusion", "launch_cooperative_grid", "extern_libs", "configs"):
            assert name in info
        assert info["configs"] == [info["attrs"]]
        _add_one.device_caches[0][0].clear()
        kernel = _add_one.preload(info["specialization_data"])
        assert len(seen) == 2  # preload compiles like a warmup: the hook sees it
        assert _add_one[(1, )](x, 7, 8) is kernel
        assert len(seen) == 2
    assert x.tolist() == [2.0] * 7 + [0.0]  # launched twice


def test_device_caches_reads_as_tritons_tuple():
    x = np.zeros(16, np.float32)
    calls = []
    with knobs.runtime.scope():
        knobs.runtime.jit_cache_hook = lambda **kw: calls.append(1)
        _add_one[(1, )](x, 16, 16)
        _add_one[(1, )](x, 16, 16)   # the second launch takes the generated cached path
        kernel_cache, kernel_key_cache, target, backend, binder = _add_one.device_caches[0]
        assert len(kernel_cache) >= 1 and any(k.hash for k in kernel_cache.values())
        assert target is not None and hasattr(backend, "parse_options")
        bound, spec, options = binder(x, 16, 16, num_warps=4)
        assert list(bound) == ["X", "n", "B"] and bound["n"] == 16
        assert spec == [("*fp32", "D"), ("i32", "D"), ("constexpr", 16)] and options == {"num_warps": 4}
        n = len(calls)
        kernel_cache.clear()   # as Triton's tests do, to see the hook again
        assert len(kernel_cache) == 0
        _add_one[(1, )](x, 16, 16)
        assert len(calls) == n + 1
    assert x.tolist() == [3.0] * 16


def test_preload_refuses_text_it_cannot_use():
    with pytest.raises(RuntimeError, match="Specialization data is for .*_add_one but trying to preload for"):
        _add_one_other.preload(json.dumps({"name": "tests.cpu.test_preload._add_one"}))
    with pytest.raises(ValueError, match="not the JSON text"):
        _add_one.preload("{not json")
    name = f"{_add_one.__module__}.{_add_one.__qualname__}"
    with pytest.raises(ValueError, match="no launch key"):
        _add_one.preload(json.dumps({"name": name}))


@triton.jit
def _add_one_other(X):
    pass


def test_hook_gets_tritons_fn_and_repr():
    seen = []
    x = np.zeros(4, np.float32)
    with knobs.runtime.scope():
        knobs.runtime.jit_post_compile_hook = lambda **kw: seen.append(kw)
        _add_one[(1, )](x, 3, 4, num_warps=2)
    kw = seen[-1]
    assert set(kw) == {"key", "repr", "fn", "compile", "is_manual_warmup", "already_compiled"}
    fn = kw["fn"]
    assert (fn.module, fn.name, fn.jit_function) == (_add_one.__module__, "_add_one", _add_one)
    assert kw["repr"].startswith("_add_one[num_warps=2, num_ctas=1, num_stages=")
    assert kw["repr"].endswith("](X: *fp32, n: i32, B: constexpr)")


def test_hook_key_finds_the_kernel_in_kernel_cache():
    # Triton's test_cache.py::test_hooks: compile["key"] is a key of device_caches[device][0]
    keys = []
    x = np.zeros(4, np.float32)
    with knobs.runtime.scope():
        knobs.runtime.jit_cache_hook = lambda **kw: keys.append(kw["compile"]["key"])
        kernel = _add_one.warmup(x, 3, 4, grid=(1, ), num_warps=8)
    cache = _add_one.device_caches[0][0]
    assert keys[-1] in cache and cache[keys[-1]] is kernel
    assert ("no such key", ) not in cache
