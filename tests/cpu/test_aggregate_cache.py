"""A kernel's cache key covers the aggregate classes it uses: editing an aggregate's ``@jit`` method between two
runs that share a kernel cache recompiles the kernel instead of serving the old code from disk."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

SOURCE = textwrap.dedent('''
    import numpy as np
    import tritium as triton
    import tritium.language as tl


    @tl.core._aggregate
    class Box:
        v: tl.tensor

        def __init__(self, v):
            self.v = v

        @triton.jit
        def get(self):
            return self.v + INCREMENT


    @triton.jit
    def kern(X):
        b = Box(tl.load(X + tl.arange(0, 4)))
        tl.store(X + tl.arange(0, 4), b.get())


    x = np.zeros(4, np.float32)
    kern[(1, )](x)
    print(x.tolist())
''')


def _run(tmp_path, increment: int) -> str:
    (tmp_path / "agg_kernel.py").write_text(SOURCE.replace("INCREMENT", str(increment)))
    env = dict(os.environ, TRITON_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("TRITON_INTERPRET", None)
    r = subprocess.run([sys.executable, str(tmp_path / "agg_kernel.py")], capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_editing_an_aggregate_method_recompiles(tmp_path):
    assert _run(tmp_path, 1) == "[1.0, 1.0, 1.0, 1.0]"
    assert _run(tmp_path, 2) == "[2.0, 2.0, 2.0, 2.0]"
