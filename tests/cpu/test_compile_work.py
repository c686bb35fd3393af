"""Compiling does no work that grows with a kernel's size beyond what its code needs: no import search per op, no
recursion as deep as an unrolled loop is long."""
from __future__ import annotations

import sys
from collections import Counter

import numpy as np

import tritium as triton
import tritium.language as tl
from tritium.compiler.compiler import ASTSource, compile


@triton.jit
def unrolled_sum(x_ptr, out_ptr, N: tl.constexpr):
    acc = 0.0
    for i in tl.static_range(N):
        for j in tl.static_range(N):
            acc += tl.load(x_ptr + i * N + j) * (i + j)
    tl.store(out_ptr, acc)


class ImportSpy:
    """Records every module name the import system searches for (it finds nothing itself)."""

    def __init__(self):
        self.names = Counter()

    def find_spec(self, name, path=None, target=None):
        self.names[name] += 1
        return None


def test_no_module_search_per_tile_op(fresh_cache):
    # the MLIR bindings import a Python module for the dialect of every op they wrap and did not remember a miss:
    # each tt op searched sys.path again (thousands of searches, most of the compile time, for this kernel)
    compile(ASTSource(unrolled_sum, {"x_ptr": "*fp32", "out_ptr": "*fp32", "N": "constexpr"}, {"N": 2}))
    spy = ImportSpy()
    sys.meta_path.insert(0, spy)
    try:
        kernel = compile(ASTSource(unrolled_sum, {"x_ptr": "*fp32", "out_ptr": "*fp32", "N": "constexpr"}, {"N": 6}))
    finally:
        sys.meta_path.remove(spy)
    assert "llir" in kernel.asm
    # (a lazy import that fails once per compilation, e.g. of an optional package, is not what this is about)
    repeated = {name: n for name, n in spy.names.items() if n > 3}
    assert not repeated, f"modules searched for again and again while compiling: {repeated}"
    x = np.arange(36, dtype=np.float32)
    out = np.zeros(1, np.float32)
    unrolled_sum[(1, )](x, out, N=6)
    expected = sum(x[i * 6 + j] * (i + j) for i in range(6) for j in range(6))
    np.testing.assert_allclose(out[0], expected, rtol=1e-6)


@triton.jit
def unrolled_chain(x_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, 16)
    acc = tl.zeros((16, ), dtype=tl.float32)
    for i in tl.static_range(N):
        acc = acc * 0.5 + tl.load(x_ptr + offs + i)
    tl.store(out_ptr + offs, acc)


def test_an_unrolled_chain_of_tile_updates_compiles_and_is_right(fresh_cache):
    # each iteration's `acc` was a lazy expression over the previous one: 300 iterations made one expression 300
    # levels deep, whose evaluation exceeded Python's recursion limit (and every new level walked the whole chain)
    n = 300
    x = np.random.default_rng(0).random(n + 16, dtype=np.float32)
    out = np.zeros(16, np.float32)
    unrolled_chain[(1, )](x, out, N=n)
    expected = np.zeros(16, np.float32)
    for i in range(n):
        expected = expected * np.float32(0.5) + x[i:i + 16]
    np.testing.assert_allclose(out, expected, rtol=1e-5)
