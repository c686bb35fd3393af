"""The emulator's JIT engines over many recompiles: a module defining a kernel is run again and again (as a
notebook cell or a reloaded module is), each time compiling and launching. Every engine once shared the process's
target machine, which llvmlite hands to the engine to delete: the first engine freed took the machine with it and
the next compile or launch crashed (segfault, or "LLVM ERROR: out of memory"). The loop runs in a subprocess, so a
crash fails this test rather than killing pytest."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

CHILD = textwrap.dedent('''
    import gc, os, runpy, sys
    import numpy as np
    import llvmlite.binding as llvm
    from tritium import knobs, plugins

    KERNEL = """
    import tritium
    import tritium.language as tl

    @tritium.jit
    def add(x, y, out, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)
    """
    path, rounds = sys.argv[1], int(sys.argv[2])
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "gpu-emu": "tritium.gpu.emulator"})
    with plugins.use(reg), knobs.runtime.scope():
        knobs.runtime.default_backend = "gpu-emu"
        x = np.arange(100, dtype=np.float32)
        y = np.full(100, 0.5, np.float32)
        for i in range(rounds):
            # odd rounds change the source (a real compile), even rounds repeat the last one (a cache hit)
            with open(path, "w") as f:
                f.write(KERNEL + f"# version {i // 2}\\n")
            ns = runpy.run_path(path)
            out = np.zeros_like(x)
            ns["add"][(2,)](x, y, out, 100, BLOCK=64)
            assert (out == x + y).all(), f"round {i}: wrong result"
            del ns
            gc.collect()
            engines = sum(isinstance(o, llvm.ExecutionEngine) for o in gc.get_objects())
            rss = int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            print(f"round {i} engines {engines} rss {rss}", flush=True)
''')


def test_recompiling_a_kernel_module_neither_crashes_nor_grows(tmp_path):
    rounds = 24
    env = dict(os.environ, TRITIUM_HOME=str(tmp_path / "home"))
    r = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path / "kern.py"), str(rounds)], capture_output=True,
                       text=True, env=env, timeout=600)
    assert r.returncode == 0, f"exit status {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-4000:]}"
    rows = [line.split() for line in r.stdout.splitlines() if line.startswith("round ")]
    assert len(rows) == rounds
    engines = [int(row[3]) for row in rows]
    rss = [int(row[5]) for row in rows]
    # the kernels of earlier rounds are garbage once their module is: their engines must be freed with them
    assert max(engines) <= 1, engines
    # a leaked engine of this small kernel costs only ~80 KB, so the count above is what catches that; this catches
    # anything bigger that a compile leaves behind (measured: about 1 MB of allocator drift over the 16 rounds)
    growth = rss[-1] - rss[7]
    assert growth < 12 << 20, f"resident memory grew {growth >> 20} MB over {rounds - 8} rounds: {rss}"
