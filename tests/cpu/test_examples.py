"""The examples' kernels on small inputs (the scripts themselves benchmark at full size)."""
from __future__ import annotations

import importlib.util
import os
import sys

import numpy as np
import pytest

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")


def load(name: str):
    path = os.path.join(EXAMPLES, name)
    sys.path.insert(0, EXAMPLES)
    spec = importlib.util.spec_from_file_location(name.replace("-", "_")[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_vector_add():
    m = load("01-vector-add.py")
    x = np.random.default_rng(0).random(5000, dtype=np.float32)
    np.testing.assert_array_equal(m.add(x, x), x + x)


def test_fused_softmax():
    m = load("02-fused-softmax.py")
    x = np.random.default_rng(1).standard_normal((37, 300)).astype(np.float32)
    out = m.softmax(x, programs=4)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)


def test_matmul():
    m = load("03-matrix-multiplication.py")
    rng = np.random.default_rng(2)
    a = rng.standard_normal((100, 70), dtype=np.float32)
    b = rng.standard_normal((70, 90), dtype=np.float32)
    c = np.zeros((100, 90), np.float32)
    m.matmul(a, b, c, BLOCK_M=32, BLOCK_N=32, BLOCK_K=16)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_layer_norm():
    m = load("04-layer-norm.py")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 3000), dtype=np.float32)
    w, b = rng.random(3000, dtype=np.float32), rng.random(3000, dtype=np.float32)
    y = m.layer_norm(x, w, b, block=1024)
    ref = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5) * w + b
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-4)


def test_inspect_stages(capsys):
    m = load("05-inspect-stages.py")
    m.main()
    out = capsys.readouterr().out
    assert "stages the backend added: ['ttir', 'llir', 'obj']" in out
    assert "'llstats'" in out and "a new hook compiled a new kernel: True" in out


def test_launch_overhead(capsys):
    m = load("06-launch-overhead.py")
    m.main()
    out = capsys.readouterr().out
    assert "import tritium:" in out and "cached launch of a one-store kernel (cpu): tritium" in out
