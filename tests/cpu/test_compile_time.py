"""The CPU backend writes out no more code than a kernel needs, so that large unrolled kernels compile in time
linear in their size. Compile time itself is never asserted: each test checks the structure that keeps it down.

Liger-Kernel's attention residuals (``tl.static_range(64)`` unrolled three times, each step reducing a 128-wide
row twice) took minutes to compile: every reduction was written out lane by lane for one peeled step and then
again for the loop body, and LLVM's loop extractor rebuilt a whole-function cache for each of ~1000 loops."""
from __future__ import annotations

import re

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
import tritium_cpu.codegen as codegen
from tritium_cpu.compiler import host_cpu, vector_bits


@triton.jit
def row_sum_of_squares(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr, tl.sum(x * x, axis=0))


@pytest.fixture
def llvm_text(monkeypatch):
    """The LLVM IR text each compilation's code generator writes (before LLVM optimizes it)."""
    texts = []
    lower = codegen.lower_to_llvm

    def spy(*args, **kwargs):
        text, meta = lower(*args, **kwargs)
        texts.append(text)
        return text, meta
    monkeypatch.setattr(codegen, "lower_to_llvm", spy)
    return texts


@pytest.mark.parametrize("steps", [2, 8])
def test_a_vector_reduction_writes_out_one_step_of_lanes(fresh_cache, llvm_text, steps):
    # an explicit vector reduction evaluates its row lane by lane, four vectors per loop step; the first step was
    # peeled (written out again before the loop): twice the lanes, all the more LLVM work per reduction
    step = 4 * max(1, vector_bits(host_cpu()[1]) // 32)
    n = steps * step
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    out = np.zeros(1, np.float32)
    row_sum_of_squares[(1, )](x, out, N=n)
    np.testing.assert_allclose(out[0], np.sum(x.astype(np.float64) ** 2), rtol=1e-5)
    (text, ) = llvm_text
    lane_loads = len(re.findall(r"= load float, ptr", text))
    assert lane_loads == step, f"{lane_loads} scalar loads for a {n}-wide row reduced {step} lanes a step"


@triton.jit
def many_row_loops(x_ptr, out_ptr, N: tl.constexpr, R: tl.constexpr):
    offs = tl.arange(0, N)
    acc = 0.0
    for i in tl.static_range(R):
        x = tl.load(x_ptr + i * N + offs)
        acc += tl.sum(x * x, axis=0)
        if i % 3 == 0:
            acc = tl.maximum(acc, 0.0)
        tl.store(out_ptr + i * N + offs, x * 2 + acc)
    tl.store(out_ptr + R * N, acc)


def _calls_to_defined(llir: str) -> dict:
    """For each function of ``llir``, how many calls it makes to functions the module defines."""
    defined = set(re.findall(r"^define [^@]*@([\w.$\"-]+)\(", llir, re.M))
    calls, cur = {}, None
    for line in llir.split("\n"):
        if line.startswith("define "):
            cur = re.search(r"@([\w.$\"-]+)\(", line).group(1)
            calls[cur] = 0
        elif cur is not None:
            calls[cur] += sum(1 for f in re.findall(r"call [^@]*@([\w.$\"-]+)\(", line) if f in defined)
    return calls


def test_many_loops_are_extracted_in_chunks(fresh_cache):
    # each top-level loop of a large kernel becomes a function of its own before O3; LLVM's loop extractor
    # scans the whole function once per loop it moves out, so ~1000 loops (Liger's attn_res, 64 blocks) cost
    # seconds, quadratically more as kernels grew. Loops are moved out of ~sqrt(n) chunks of the function instead,
    # so no function calls (was: contained) more than a few times sqrt(n) of them
    n, rows = 128, 48
    x = np.random.default_rng(1).standard_normal(n * rows).astype(np.float32)
    out = np.zeros(n * rows + 1, np.float32)
    kernel = many_row_loops[(1, )](x, out, N=n, R=rows)
    acc = np.float32(0)
    expected = np.zeros_like(out)
    for i in range(rows):
        row = x[i * n:(i + 1) * n]
        acc = np.float32(acc + np.sum(row.astype(np.float64) ** 2))
        if i % 3 == 0:
            acc = max(acc, np.float32(0))
        expected[i * n:(i + 1) * n] = row * 2 + acc
    expected[-1] = acc
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    calls = _calls_to_defined(kernel.asm["llir"])
    extracted = sum(calls.values())
    assert extracted >= 2 * rows, f"only {extracted} loops were extracted"
    most = max(calls.values())
    assert most <= 4 * int(extracted ** 0.5), f"one function calls {most} of {extracted} extracted functions"
