"""Masked-row reductions on the CPU: the LLVM IR they become, their compile time, and their speed against numpy.

Run: python backends/cpu/bench/masked_reduce.py [--only a,b] [--repeat N]
Each kernel is compiled into a fresh private cache. ``ir`` is the LLVM IR the code generator writes (lines,
before optimization), ``compile`` the time of the first launch minus the second's, ``run`` the median launch
time over ``--repeat`` launches and ``numpy`` the median of the same reduction in numpy, in the same process.
The wide-tiles case is tests/cpu/test_static_range_wide_tiles.py's kernel (four 8192-wide masked blocks).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np

import tritium as triton
import tritium.language as tl

_LOWERED: list[str] = []


def _capture_ir() -> None:
    """Keep the text of every LLVM IR module the code generator writes (this script only)."""
    import tritium_cpu.codegen as codegen
    from tritium_cpu.codegen import module
    orig = module.lower_to_llvm

    def lower(*a, **k):
        text, meta = orig(*a, **k)
        _LOWERED.append(text)
        return text, meta
    codegen.lower_to_llvm = lower


@triton.jit
def row_reduce(x_ptr, out_ptr, M, N, stride, OP: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    if OP == "sum":
        x = tl.load(x_ptr + rows[:, None] * stride + cols[None, :], mask=mask, other=0.0)
        r = tl.sum(x, axis=1)
    elif OP == "max":
        x = tl.load(x_ptr + rows[:, None] * stride + cols[None, :], mask=mask, other=float("-inf"))
        r = tl.max(x, axis=1)
    elif OP == "argmax":
        x = tl.load(x_ptr + rows[:, None] * stride + cols[None, :], mask=mask, other=float("-inf"))
        r = tl.argmax(x, axis=1).to(tl.float32)
    else:  # a sum of squares through the general combine path
        x = tl.load(x_ptr + rows[:, None] * stride + cols[None, :], mask=mask, other=0.0)
        r = tl.reduce(x * x, 1, _add)
    tl.store(out_ptr + rows, r, mask=rows < M)


@triton.jit
def _add(a, b):
    return a + b


def _numpy(op: str, x: np.ndarray) -> np.ndarray:
    return {"sum": lambda: x.sum(1), "max": lambda: x.max(1), "argmax": lambda: x.argmax(1).astype(np.float32),
            "reduce": lambda: (x * x).sum(1)}[op]()


def _median_time(f, repeat: int) -> float:
    f()
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def rows_case(op: str, m: int = 4096, n: int = 1000, repeat: int = 20) -> dict:
    x = np.random.default_rng(0).standard_normal((m, n), dtype=np.float32)
    out = np.empty(m, np.float32)
    block_n = triton.next_power_of_2(n)

    def launch():
        row_reduce[(triton.cdiv(m, 4), )](x, out, m, n, n, OP=op, BLOCK_M=4, BLOCK_N=block_n)
    n0 = len(_LOWERED)
    t = time.perf_counter()
    launch()
    first = time.perf_counter() - t
    ir = _LOWERED[n0].count("\n") if len(_LOWERED) > n0 else 0
    ref = _numpy(op, x)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)
    run = _median_time(launch, repeat)
    return {"ir": ir, "compile": first - run, "run": run, "numpy": _median_time(lambda: _numpy(op, x), repeat)}


def wide_case(repeat: int = 5) -> dict:
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "..", "..", "..", "tests", "cpu"))
    import test_static_range_wide_tiles as wide
    n0 = len(_LOWERED)
    t = time.perf_counter()
    wide._run(8192)
    first = time.perf_counter() - t
    ir = _LOWERED[n0].count("\n") if len(_LOWERED) > n0 else 0
    return {"ir": ir, "compile": first, "run": float("nan"), "numpy": float("nan")}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    from tritium import knobs
    knobs.cache.dir = tempfile.mkdtemp(prefix="tritium-masked-reduce-")
    _capture_ir()
    row_reduce[(1, )](np.zeros((4, 4), np.float32), np.zeros(4, np.float32), 4, 4, 4, OP="sum", BLOCK_M=4,
                      BLOCK_N=4)   # imports and one-time setup are no kernel's compile time
    cases = {f"rows {op} 4096x1000": (lambda op=op: rows_case(op, repeat=args.repeat))
             for op in ("sum", "max", "argmax", "reduce")}
    cases["wide tiles (compile + run)"] = wide_case
    print(f"{'case':30s} {'ir lines':>9s} {'compile s':>10s} {'run ms':>8s} {'numpy ms':>9s}")
    for name, f in cases.items():
        if args.only and not any(s in name for s in args.only.split(",")):
            continue
        r = f()
        print(f"{name:30s} {r['ir']:9d} {r['compile']:10.2f} {1e3 * r['run']:8.2f} {1e3 * r['numpy']:9.2f}")


if __name__ == "__main__":
    main()
