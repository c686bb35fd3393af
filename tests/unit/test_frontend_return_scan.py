"""The code generator asks of every ``if`` whether it returns from the kernel, each time it visits it: in every
iteration of an unrolled loop and at every level of an if/elif chain. That question walked the ``if``'s whole
subtree each time, quadratic in a chain's length (the conformance suite's op-dispatch kernels spent ~10% of
their compile time there). Each node's answer is now found once: the walk visits no node twice."""
from __future__ import annotations

import ast
import inspect
import textwrap

import numpy as np

import tritium as triton
import tritium.language as tl
from tritium.compiler import control_flow


@triton.jit
def _dispatch(x_ptr, o_ptr, OPS: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    acc = x
    for k in tl.static_range(len(OPS)):
        op: tl.constexpr = OPS[k]
        if op == "add":
            acc = acc + x
        elif op == "sub":
            acc = acc - x
        elif op == "mul":
            acc = acc * x
        elif op == "max":
            acc = tl.maximum(acc, x)
        elif op == "min":
            acc = tl.minimum(acc, x)
        elif op == "neg":
            acc = -acc
        elif op == "abs":
            acc = tl.abs(acc)
        else:
            acc = acc + 1.0
    tl.store(o_ptr + tl.arange(0, 16), acc)


def test_each_node_is_scanned_for_returns_at_most_once(fresh_cache, monkeypatch):
    scanned = []
    real = control_flow.contains_return

    def counting(node):
        scanned.append(node)
        return real(node)

    # the recursion goes through the module's global name, so this sees every node the walk visits
    monkeypatch.setattr(control_flow, "contains_return", counting)
    ops = ("add", "sub", "mul", "max", "min", "neg", "abs", "one") * 2
    x = np.arange(16, dtype=np.float32)
    out = np.zeros_like(x)
    _dispatch[(1, )](x, out, OPS=ops)
    want = x.copy()
    for op in ops:
        want = {"add": want + x, "sub": want - x, "mul": want * x, "max": np.maximum(want, x),
                "min": np.minimum(want, x), "neg": -want, "abs": np.abs(want), "one": want + 1}[op]
    np.testing.assert_allclose(out, want, rtol=1e-6)
    nodes = sum(1 for _ in ast.walk(ast.parse(textwrap.dedent(inspect.getsource(_dispatch.fn)))))
    # before: each of the 16 unrolled iterations rescanned the chain at each of its 8 levels (5,874 visits of
    # this function's 201 nodes)
    assert 0 < len(scanned) <= nodes, f"{len(scanned)} visits of {nodes} nodes"
