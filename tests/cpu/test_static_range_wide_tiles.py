"""A kernel that unrolls a static_range over very wide tiles (Liger-Kernel's attention-residual forward does this
with 8192-wide rows) compiles to loops over the width, not to code proportional to it, and gives right answers.
Issue 11 measured 604 s to compile such a kernel (515 s in LLVM's optimizer) before top-level loops were outlined;
the structural check below keeps the emitted IR from growing with the tile width again."""
from __future__ import annotations

import numpy as np

import tritium
import tritium.language as tl


@tritium.jit
def _blocks_softmax_mix(V, W, Out, Alpha, n_blocks, n_rows, D, BLOCK_D: tl.constexpr, MAX_BLOCKS: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_D)
    dm = cols < D
    w = tl.load(W + cols, mask=dm, other=0.0)
    scores = tl.full((MAX_BLOCKS,), float("-inf"), tl.float32)
    best = tl.full((), float("-inf"), tl.float32)
    for i in tl.static_range(0, MAX_BLOCKS):
        if i < n_blocks:
            v = tl.load(V + (i * n_rows + row) * D + cols, mask=dm, other=0.0)
            rstd = tl.rsqrt(tl.sum(v * v, axis=0) / D + 1e-6)
            s = tl.sum(v * rstd * w, axis=0)
            scores = tl.where(tl.arange(0, MAX_BLOCKS) == i, s, scores)
            best = tl.maximum(best, s)
    e = tl.where(tl.arange(0, MAX_BLOCKS) < n_blocks, tl.exp(scores - best), 0.0)
    alpha = e / tl.sum(e, axis=0)
    h = tl.zeros((BLOCK_D,), tl.float32)
    for i in tl.static_range(0, MAX_BLOCKS):
        if i < n_blocks:
            a = tl.sum(tl.where(tl.arange(0, MAX_BLOCKS) == i, alpha, 0.0))
            tl.store(Alpha + row * n_blocks + i, a)
            h += a * tl.load(V + (i * n_rows + row) * D + cols, mask=dm, other=0.0)
    tl.store(Out + row * D + cols, h, mask=dm)


def _run(D: int, n_blocks: int = 3, rows: int = 2):
    rng = np.random.default_rng(0)
    v = rng.standard_normal((n_blocks, rows, D)).astype(np.float32)
    w = rng.standard_normal(D).astype(np.float32)
    out = np.zeros((rows, D), np.float32)
    alpha = np.zeros((rows, n_blocks), np.float32)
    block = 1 << (D - 1).bit_length()
    ck = _blocks_softmax_mix[(rows,)](v, w, out, alpha, n_blocks, rows, D, BLOCK_D=block, MAX_BLOCKS=4)
    v64 = v.astype(np.float64)
    rstd = 1 / np.sqrt((v64 * v64).mean(-1, keepdims=True) + 1e-6)
    s = (v64 * rstd * w).sum(-1)                      # (blocks, rows)
    a = np.exp(s - s.max(0)) / np.exp(s - s.max(0)).sum(0)
    np.testing.assert_allclose(alpha, a.T, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(out, (a[..., None] * v64).sum(0), rtol=1e-4, atol=1e-5)
    return ck


def test_static_range_over_narrow_masked_tiles_is_right():
    _run(100)


def test_wide_tiles_are_right_and_the_emitted_ir_does_not_grow_with_the_width():
    narrow = _run(256).asm["llir"].count("\n")
    wide = _run(8192).asm["llir"].count("\n")
    # 32x the width: the unrolled blocks each stay loops over the columns
    assert wide < 2 * narrow, (narrow, wide)
