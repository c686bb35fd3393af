"""Where the CPU backend's compile time goes, per stage, on a few representative kernels.

Run: python backends/cpu/bench/compile_time.py [--profile KERNEL] [--only a,b]
Each kernel is compiled into a fresh private cache (nothing is served from disk). The table splits the time
into the frontend (Python AST -> tile IR), the ttir passes, and the llir stage's parts (tile IR -> LLVM IR
text, parse + verify, loop outlining, the O3 pipeline, printing), then the obj stage (parse, codegen).
``--profile NAME`` prints cProfile's top entries for that kernel's compile.
"""
from __future__ import annotations

import argparse
import cProfile
import contextlib
import os
import pstats
import sys
import tempfile
import time
from collections import defaultdict

import numpy as np

import tritium as triton
import tritium.language as tl

T: dict = defaultdict(float)


@contextlib.contextmanager
def timed(name: str):
    t = time.perf_counter()
    try:
        yield
    finally:
        T[name] += time.perf_counter() - t


def instrument() -> None:
    """Wrap the stage parts with timers (monkeypatching, for this script only)."""
    import llvmlite.binding as llvm
    from tritium import llvm_debug
    from tritium.compiler import compiler as core
    from tritium_cpu import codegen, outline
    from tritium_cpu import compiler as cpu

    def wrap(owner, attr, name):
        fn = getattr(owner, attr)

        def inner(*a, **k):
            with timed(name):
                return fn(*a, **k)
        setattr(owner, attr, inner)

    wrap(codegen, "lower_to_llvm", "llir: lower to LLVM IR text")
    wrap(outline, "outline_loops", "llir: outline loops")
    wrap(llvm_debug, "run_module_passes", "llir: O3 pipeline")
    wrap(llvm, "parse_assembly", "parse LLVM IR text")
    orig_src = core.ASTSource.make_ir

    def make_ir(self, *a, **k):
        with timed("frontend: AST -> tile IR"):
            return orig_src(self, *a, **k)
    core.ASTSource.make_ir = make_ir
    from tritium.passes import pipeline
    wrap(pipeline, "make_ttir", "ttir: core passes")
    orig_obj = cpu.CPUBackend.make_obj

    def make_obj(self, *a, **k):
        with timed("obj stage (parse + codegen)"):
            return orig_obj(self, *a, **k)
    cpu.CPUBackend.make_obj = make_obj
    orig_llir = cpu.CPUBackend.make_llir

    def make_llir(self, *a, **k):
        with timed("llir stage"):
            return orig_llir(self, *a, **k)
    cpu.CPUBackend.make_llir = make_llir


# -- kernels ---------------------------------------------------------------------------------------

@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * K + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * N + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < K - k * BLOCK_K), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < K - k * BLOCK_K) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * N
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def softmax_kernel(out_ptr, in_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * n_cols + offs, mask=offs < n_cols, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * n_cols + offs, num / tl.sum(num, axis=0), mask=offs < n_cols)


@triton.jit
def reduce_kernel(x_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + offs_m[:, None] * N + offs_n[None, :], mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))
    tl.store(out_ptr + offs_m, tl.sum(x * x, axis=1) + tl.max(x, axis=1), mask=offs_m < M)


@triton.jit
def scan_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.cumsum(tl.load(x_ptr + offs), axis=0))


@triton.jit
def unrolled_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, ), dtype=tl.float32)
    for i in tl.static_range(N):
        x = tl.load(x_ptr + i * BLOCK + offs)
        acc = acc * 0.5 + tl.sin(x) * i
    tl.store(out_ptr + offs, acc)


@triton.jit
def nested_kernel(x_ptr, out_ptr, N: tl.constexpr):
    acc = 0.0
    for i in tl.static_range(N):
        for j in tl.static_range(N):
            acc += tl.load(x_ptr + i * N + j) * (i + j)
    tl.store(out_ptr, acc)


@triton.jit
def warm_kernel(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.cumsum(tl.load(x_ptr + offs), axis=0) + tl.sum(tl.exp(tl.load(x_ptr + offs)), axis=0))


def f32(*shape):
    return np.random.default_rng(0).standard_normal(shape, dtype=np.float32)


CASES = {
    "matmul": lambda: matmul_kernel[(2, 2)](f32(64, 64), f32(64, 64), f32(64, 64), 64, 64, 64,
                                            BLOCK_M=32, BLOCK_N=32, BLOCK_K=16),
    "softmax": lambda: softmax_kernel[(4, )](f32(4, 1000), f32(4, 1000), 1000, BLOCK=1024),
    "reduce": lambda: reduce_kernel[(2, )](f32(64, 100), f32(64), 64, 100, BLOCK_M=32, BLOCK_N=128),
    "scan": lambda: scan_kernel[(2, )](f32(512), f32(512), BLOCK=256),
    "unrolled64": lambda: unrolled_kernel[(1, )](f32(64 * 64), f32(64), BLOCK=64, N=64),
    "nested16x16": lambda: nested_kernel[(1, )](f32(256), f32(1), N=16),
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--profile", default="")
    ap.add_argument("--only", default="")
    ap.add_argument("--top", type=int, default=30)
    args = ap.parse_args()
    from tritium import knobs
    knobs.cache.dir = tempfile.mkdtemp(prefix="tritium-compile-time-")
    instrument()
    # imports and one-time LLVM/MLIR setup are not any kernel's compile time
    warm_kernel[(1, )](f32(16), BLOCK=16)
    names = [n for n in CASES if not args.only or n in args.only.split(",")]
    rows = []
    for name in names:
        T.clear()
        knobs.cache.dir = tempfile.mkdtemp(prefix="tritium-compile-time-")
        prof = cProfile.Profile() if name == args.profile else None
        t = time.perf_counter()
        if prof:
            prof.enable()
        CASES[name]()
        if prof:
            prof.disable()
        total = time.perf_counter() - t
        rows.append((name, total, dict(T)))
        if prof:
            pstats.Stats(prof, stream=sys.stdout).sort_stats("cumulative").print_stats(args.top)
            pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(args.top)
    parts = ["frontend: AST -> tile IR", "ttir: core passes", "llir stage", "llir: lower to LLVM IR text",
             "parse LLVM IR text", "llir: outline loops", "llir: O3 pipeline", "obj stage (parse + codegen)"]
    short = ["frontend", "ttir", "llir", "->llvm", "parse*", "outline", "O3", "obj"]
    print(f"{'kernel':14s} {'total':>7s} " + " ".join(f"{s:>8s}" for s in short))
    for name, total, t in rows:
        print(f"{name:14s} {total:7.3f} " + " ".join(f"{t.get(p, 0.0):8.3f}" for p in parts))
    print("(seconds; parse* counts every llvmlite parse_assembly, in llir and obj; total includes launching)")


if __name__ == "__main__":
    main()
