"""fork() while another thread compiles: the child must be able to compile and launch (it used to hang on a
lock the compiling thread held, llvmlite's among them, in 4 of 6 children). Runs in a fresh interpreter, and
every child has a deadline, so a hang fails the test instead of stalling it."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

_SCRIPT = """
import os, threading, time
import numpy as np, tritium as triton, tritium.language as tl
from tritium import knobs

def make(i):
    c = tl.constexpr(i)

    @triton.jit
    def k(x, y, n, B: tl.constexpr):
        o = tl.arange(0, B)
        m = o < n
        tl.store(y + o, tl.load(x + o, mask=m) * c + tl.sum(tl.load(x + o, mask=m), 0), mask=m)
    return k

@triton.autotune(configs=[triton.Config({"B": 16}), triton.Config({"B": 32})], key=["n"],
                 do_bench=lambda fn, quantiles=None: (fn(), [1.0, 1.0, 1.0])[1])
@triton.jit
def tuned(x, y, n, B: tl.constexpr):
    o = tl.arange(0, B)
    tl.store(y + o, tl.load(x + o, mask=o < n) + 1, mask=o < n)

stop = False

def spin():  # compiles (and autotunes) without pause
    i = 0
    while not stop:
        i += 1
        x = np.ones(32, np.float32); y = np.zeros(32, np.float32)
        make(i)[(1, )](x, y, 16, B=16)
        tuned[(1, )](x, y, 16 + i % 16)  # new keys: autotuning again and again

knobs.compilation.always_compile = True
# the forking thread has compiled too: its children inherit its MLIR context and the JIT engine
make(-1)[(1, )](np.ones(16, np.float32), np.zeros(16, np.float32), 16, B=16)
t = threading.Thread(target=spin, daemon=True)
t.start()
time.sleep(1.0)
results = []
for j in range(CHILDREN):
    time.sleep(0.2)
    pid = os.fork()
    if pid == 0:
        x = np.ones(16, np.float32); y = np.zeros(16, np.float32)
        make(1000 + j)[(1, )](x, y, 16, B=16)
        z = np.zeros(16, np.float32)
        tuned[(1, )](x, z, 10 + j)
        ok = y[0] == 1000 + j + 16 and z[0] == 2 and z[15] == 0
        os._exit(0 if ok else 3)
    deadline = time.time() + DEADLINE
    while time.time() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            results.append("ok" if status == 0 else f"status {status}")
            break
        time.sleep(0.05)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        results.append("hung")
stop = True
t.join(120)  # a daemon thread killed inside MLIR at interpreter exit can crash the exit
print(" ".join(results))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_fork_while_another_thread_compiles(tmp_path):
    script = tmp_path / "forker.py"
    script.write_text(_SCRIPT.replace("CHILDREN", "4").replace("DEADLINE", "60"))
    env = dict(os.environ, TRITIUM_HOME=str(tmp_path / "home"))
    proc = subprocess.run([sys.executable, "-W", "ignore::DeprecationWarning", str(script)], capture_output=True,
                          text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["ok"] * 4, proc.stdout + proc.stderr[-2000:]


def test_fork_handlers_leave_locks_free():
    """After a fork, parent and child can both take the compile lock again (the handlers released it)."""
    from tritium.runtime.forksafe import compile_lock
    pid = os.fork()
    if pid == 0:
        ok = compile_lock.acquire(timeout=5)
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert status == 0
    assert compile_lock.acquire(timeout=5)
    compile_lock.release()
