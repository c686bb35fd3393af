"""The next-iteration prefetch of a tile load in a loop (codegen/prefetch.py) runs only when there was a previous
iteration and the tile moved: on a first iteration (a loop of one iteration per program, layer norm's
``for off in range(0, N, BLOCK)`` with BLOCK >= N) it would prefetch the very lines the load reads next, one
prefetch per 64 bytes of every load of every row. Checked on the LLVM IR before optimization: no block that
prefetches is reachable from the entry without taking the guard's "tile moved" branch; and the results stay
right."""
from __future__ import annotations

import re

import numpy as np

import tritium as triton
import tritium.language as tl
from tritium import knobs


@triton.jit
def _row_norm(X, Y, stride, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        acc += tl.load(X + row * stride + cols, mask=cols < N, other=0.0)
    total = tl.sum(acc, axis=0)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(X + row * stride + cols, mask=cols < N, other=0.0)
        tl.store(Y + row * stride + cols, x / total, mask=cols < N)


def _blocks(text: str) -> tuple[dict[str, list[str]], str]:
    """The first function definition's blocks (label -> lines) and its entry label."""
    body = text[text.index("define "):]
    body = body[body.index("{") + 1:body.index("\n}")]
    blocks: dict[str, list[str]] = {}
    label = entry = "entry"
    for line in body.splitlines():
        m = re.match(r"^([\w.]+):", line)
        if m:
            label = m.group(1)
            blocks.setdefault(label, [])
            continue
        if line.strip():
            blocks.setdefault(label, []).append(line.strip())
    return blocks, entry


def _guard_conditions(blocks: dict[str, list[str]]) -> set[str]:
    """Values ``or i1 (icmp eq ptr prev, null), (icmp eq i64 delta, 0)``: no previous iteration or no move."""
    defs = {}
    for lines in blocks.values():
        for ln in lines:
            m = re.match(r"(%[\w.]+) = (.*)", ln)
            if m:
                defs[m.group(1)] = m.group(2)
    guards = set()
    for name, rhs in defs.items():
        m = re.match(r"or i1 (%[\w.]+), (%[\w.]+)", rhs)
        if m:
            a, b = (defs.get(v, "") for v in m.groups())
            if {bool(re.match(r"icmp eq ptr .*, null", a)), bool(re.match(r"icmp eq ptr .*, null", b))} == {True, False}:
                guards.add(name)
    return guards


def _prefetch_reachable_unguarded(text: str) -> list[str]:
    blocks, entry = _blocks(text)
    guards = _guard_conditions(blocks)
    succ: dict[str, list[str]] = {}
    for label, lines in blocks.items():
        term = lines[-1] if lines else ""
        m = re.match(r"br i1 (%[\w.]+), label %([\w.]+), label %([\w.]+)", term)
        if m:
            cond, t, f = m.groups()
            succ[label] = [t] if cond in guards else [t, f]   # the guard's false edge: the tile moved
        else:
            succ[label] = re.findall(r"label %([\w.]+)", term)
    seen, todo = set(), [entry]
    while todo:
        b = todo.pop()
        if b in seen or b not in blocks:
            continue
        seen.add(b)
        todo.extend(succ.get(b, []))
    return [b for b in seen if any("@llvm.prefetch" in ln for ln in blocks[b])]


def test_first_iteration_prefetch_is_skipped(capfd):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 300)).astype(np.float32) + 3
    y = np.empty_like(x)
    with knobs.compilation.scope():
        knobs.compilation.llvm_ir_dump = True
        _row_norm[(6, )](x, y, 300, 300, 512)
    err = capfd.readouterr().err
    before = err.split("LLVM IR before optimization")[1].split("LLVM IR after optimization")[0]
    assert "@llvm.prefetch" in before   # the loads in loops still prefetch the next iteration
    assert _prefetch_reachable_unguarded(before) == []
    np.testing.assert_allclose(y, x / x.sum(axis=1, keepdims=True), rtol=1e-5)


def test_moving_tiles_still_prefetch_and_stay_right():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 1000)).astype(np.float32) + 3
    y = np.empty_like(x)
    _row_norm[(3, )](x, y, 1000, 1000, 128)   # eight iterations per loop
    np.testing.assert_allclose(y, x / x.sum(axis=1, keepdims=True), rtol=1e-5)
