"""Cold start of a precompiled kernel against a JIT cold start, on the GPU. Builds nothing: the artifacts are made
beforehand, on any machine with ptxas (see BUILD below), and carried here.

Each measurement is a fresh Python process that has already imported torch (an inference server has); the time
runs from there through ``import tritium``, loading (or JIT-compiling) the kernel, allocating the inputs, the first
launch and a synchronization. The result is checked against torch, and the AOT process asserts that it imported
no MLIR, no frontend and no backend compiler.

    python backends/nvidia/bench/aot_cold_start.py .device/aot [--repeat 3]

BUILD (on the development machine, from the repository root):

    tritium compile backends/nvidia/bench/aot_kernels.py:add_kernel --signature "*fp32:16, *fp32:16, *fp32:16, i32, 1024" \
        --grid "cdiv(n, BLOCK)" --target cuda:90 -o .device/aot/add_kernel.tritium
    tritium compile backends/nvidia/bench/aot_kernels.py:softmax_kernel \
        --signature "*fp32:16, *fp32:16, i32, i32, i32, 1024" --target cuda:90 -o .device/aot/softmax_kernel.tritium
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from typing import Optional

HERE = os.path.dirname(os.path.abspath(__file__))
FORBIDDEN = ("mlir", "tritium._mlir", "tritium.dialect", "tritium.passes.pipeline", "tritium.compiler.code_generator",
             "tritium.compiler.ast_to_ir", "tritium.compiler.builder", "tritium.language.semantic", "tritium.gpu",
             "tritium_nvidia.compiler", "tritium_nvidia.target", "llvmlite")

# one child process; {mode} is "aot" or "jit", {case} the kernel; prints one JSON line
CHILD = r'''
import json, sys, time
import torch
torch.cuda.init()
mode, case, artifact, kernels = sys.argv[1:5]
t0 = time.perf_counter()
import tritium
if mode == "aot":
    k = tritium.load_compiled(artifact)
else:
    import importlib.util
    spec = importlib.util.spec_from_file_location("aot_kernels", kernels)
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
    k = getattr(mod, case)
t_load = time.perf_counter() - t0
if case == "add_kernel":
    n = 1 << 24
    x = torch.rand(n, device="cuda"); y = torch.rand(n, device="cuda"); out = torch.empty_like(x)
    if mode == "aot":
        k(x, y, out, n)                                   # the grid recorded at compile time
    else:
        k[((n + 1023) // 1024, )](x, y, out, n, BLOCK=1024)
    torch.cuda.synchronize()
    expect = x + y
else:
    rows, cols = 4096, 1000
    x = torch.randn(rows, cols, device="cuda"); out = torch.empty_like(x)
    if mode == "aot":
        k[(rows, )](out, x, x.stride(0), out.stride(0), cols)
    else:
        k[(rows, )](out, x, x.stride(0), out.stride(0), cols, BLOCK=1024)
    torch.cuda.synchronize()
    expect = torch.softmax(x, dim=1)
total = time.perf_counter() - t0
torch.testing.assert_close(out, expect)
bad = [m for m in %r if m in sys.modules or any(s.startswith(m + ".") for s in sys.modules)] if mode == "aot" else []
assert not bad, "loading a precompiled kernel imported " + ", ".join(bad)
print(json.dumps({"load_s": t_load, "total_s": total}))
''' % (FORBIDDEN, )


def child(mode: str, case: str, artifact: str, home: str) -> Optional[dict]:
    env = dict(os.environ, TRITIUM_HOME=home)
    env.pop("TRITON_CACHE_DIR", None)
    env.pop("TRITIUM_CACHE_DIR", None)
    r = subprocess.run([sys.executable, "-c", CHILD, mode, case, artifact, os.path.join(HERE, "aot_kernels.py")],
                       capture_output=True, text=True, env=env, timeout=600)
    if r.returncode != 0:
        if mode == "aot":
            raise SystemExit(f"{mode} {case} failed:\n{r.stdout}\n{r.stderr}")
        # the JIT rows need MLIR (.device/install.sh); the AOT rows do not, so they are still worth printing
        print(f"{mode} {case} failed (is MLIR installed, PYTHONPATH=/tmp/site?):\n{r.stderr[-1500:]}")
        return None
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", help="the folder holding add_kernel.tritium and softmax_kernel.tritium")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rows = []
    for case in ("add_kernel", "softmax_kernel"):
        artifact = os.path.abspath(os.path.join(args.folder, f"{case}.tritium"))
        if not os.path.exists(artifact):
            print(f"{case}: no artifact at {artifact} (see BUILD in this script's doc)")
            continue
        times: dict[str, list[Optional[dict]]] = {"aot": [], "jit cold": [], "jit warm cache": []}
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory(prefix="aot-bench-") as home:
                times["aot"].append(child("aot", case, artifact, home))
                times["jit cold"].append(child("jit", case, artifact, home))       # empty cache: compiles
                times["jit warm cache"].append(child("jit", case, artifact, home))  # same cache: loads it
        for mode, all_runs in times.items():
            runs = [r for r in all_runs if r is not None]
            if not runs:
                continue
            load = statistics.median(r["load_s"] for r in runs) * 1e3
            total = statistics.median(r["total_s"] for r in runs) * 1e3
            rows.append((case, mode, load, total))
    print(f"{'kernel':<16}{'mode':<16}{'import+load ms':>16}{'to first result ms':>20}   (median of {args.repeat})")
    for case, mode, load, total in rows:
        print(f"{case:<16}{mode:<16}{load:>16.1f}{total:>20.1f}")


if __name__ == "__main__":
    main()
