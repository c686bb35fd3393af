"""A dot whose operand goes through scratch memory, in a pipelined loop (see scratch_dot.py), on the emulator
and the GPU: many iterations, so a dot left reading scratch while the next iteration rewrites it shows."""
from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scratch_dot import scaled_a_matmul  # noqa: E402


def test_dot_operand_through_scratch_in_pipelined_loop(dev):
    BM, BN, BK = 64, 64, 32
    K = 64 * BK if dev.name == "cuda" else 4 * BK
    rng = np.random.default_rng(5)
    a = rng.standard_normal((BM, K)).astype(np.float16)
    b = rng.standard_normal((K, BN)).astype(np.float16)
    c = dev.put(np.zeros((BM, BN), np.float32))
    scaled_a_matmul[(1, )](dev.put(a), dev.put(b), c, K, BM=BM, BN=BN, BK=BK, num_stages=3)
    want = 2 * a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(dev.get(c), want, rtol=2e-2, atol=5e-2)
