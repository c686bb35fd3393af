"""Kernels for test_autotune_parallel.py, in a module of their own: a compile worker imports this module and
finds them by name, as it would a library's kernels."""
from __future__ import annotations

import tritium as triton
import tritium.language as tl

CONFIGS = [triton.Config({"BLOCK": 32}, num_warps=2), triton.Config({"BLOCK": 64}),
           triton.Config({"BLOCK": 128}, num_stages=2), triton.Config({"BLOCK": 256}, num_warps=8)]


@triton.autotune(CONFIGS, key=["n"], warmup=1, rep=3)
@triton.jit
def scale_add(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.load(y_ptr + offs, mask=m)
    tl.store(out_ptr + offs, tl.exp(x) * alpha + tl.sqrt(y), mask=m)


# BLOCK=512 fails to compile (a compile-time assertion): the autotuner skips it, with or without workers
FAILING_CONFIGS = [triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 512}), triton.Config({"BLOCK": 128}),
                   triton.Config({"BLOCK": 256})]


@triton.autotune(FAILING_CONFIGS, key=["n"], warmup=1, rep=3)
@triton.jit
def capped(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK <= 256, "BLOCK too large")
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


# a meta-parameter computed by @heuristics from the config's: the workers compile what the launch will use
@triton.autotune([triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 96 + 32})], key=["n"], warmup=1, rep=3)
@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def negate(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(out_ptr + offs, -tl.load(x_ptr + offs))
    else:
        tl.store(out_ptr + offs, -tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
