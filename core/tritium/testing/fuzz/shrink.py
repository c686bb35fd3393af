"""Shrink a program while a mismatch persists: fewer sinks, statements replaced by their operands or by plain
loads, smaller grid and blocks, simpler inputs. Greedy and bounded by a number of tries and a deadline."""
from __future__ import annotations

import time
import zlib
from typing import Callable, Iterator

import numpy as np

from . import inputs
from . import types as T
from .program import Program, Stmt


def freeze(p: Program) -> Program:
    """Pin every array's contents, so that later edits keep the values that showed the mismatch."""
    p = p.clone()
    p.inputs = inputs.make(p)
    return p


def _rename(p: Program, old: str, new: str) -> None:
    for s in p.stmts:
        s.args = [new if a == old else a for a in s.args]
        if s.scale == old:
            s.scale = new
    for k in p.sinks:
        if k.var == old:
            k.var = new
        if k.mask == old:
            k.mask = new
    seen, sinks = set(), []
    for k in p.sinks:
        if k.var not in seen:
            seen.add(k.var)
            sinks.append(k)
    p.sinks = sinks


def _sink_sets(p: Program) -> Iterator[Program]:
    compared = [k for k in p.sinks if k.kind != "aux"]
    if len(compared) > 1:
        for k in compared:
            q = p.clone()
            scale = q.by_var()[k.var].scale
            q.sinks = [x for x in q.sinks if x.var == k.var or x.var == scale]
            yield q.live()
    for k in p.sinks:
        if k.kind != "aux" and len(compared) > 1:
            q = p.clone()
            q.sinks = [x for x in q.sinks if x.var != k.var]
            yield q.live()
        if k.mask:
            q = p.clone()
            [x for x in q.sinks if x.var == k.var][0].mask = None
            yield q.live()


def _statements(p: Program) -> Iterator[Program]:
    for s in reversed(p.stmts):
        if s.tol == "aux":
            continue   # a scale must stay the magnitude of what it bounds
        if s.op == "load":
            if s.args:
                q = p.clone()
                q.by_var()[s.out].args = []
                yield q.live()
            continue
        for a in dict.fromkeys(s.args):
            src = p.by_var().get(a)
            if src is not None and src.dtype == s.dtype and src.shape == s.shape:
                q = p.clone()
                q.stmts = [x for x in q.stmts if x.out != s.out]
                _rename(q, s.out, a)
                yield q.live()
        if s.shape and s.tol in ("exact", "zero_sign"):
            q = p.clone()
            i = [x.out for x in q.stmts].index(s.out)
            q.stmts[i] = Stmt(s.out, s.dtype, s.shape, "load", "0")
            rng = np.random.default_rng(zlib.crc32(f"{p.seed}:{s.out}".encode()))
            q.inputs[f"in_{s.out}"] = inputs.values(T.get(s.dtype), q.shape_of(s.shape), rng)
            yield q.live()


def _sizes(p: Program) -> Iterator[Program]:
    has_dot = any("tl.dot" in s.tmpl for s in p.stmts)
    if p.grid > 1:
        q = p.clone()
        q.grid = 1
        yield q
    for d in "MNK":
        b = p.blocks[d]
        if b // 2 >= (16 if has_dot else 1):
            q = p.clone()
            q.blocks[d] = b // 2
            q.valid[d] = min(q.valid[d], b // 2)
            yield q
        if p.valid[d] > 1:
            q = p.clone()
            q.valid[d] = 1 if p.valid[d] > 2 else p.valid[d] - 1
            yield q


def _values(p: Program) -> Iterator[Program]:
    for name, a in sorted(p.inputs.items()):
        if not name.startswith("in_") or not a.size or not a.any():
            continue
        q = p.clone()
        q.inputs[name] = np.zeros_like(a)
        yield q
        flat = a.reshape(-1)
        for lo, hi in ((0, flat.size // 2), (flat.size // 2, flat.size)):
            if hi > lo:
                q = p.clone()
                f = q.inputs[name].reshape(-1)
                f[lo:hi] = 0
                yield q


PASSES = (_sink_sets, _statements, _sizes, _values)


def shrink(p: Program, still_bad: Callable[[Program], bool], max_tries: int = 120,
           deadline: float = 180.0) -> tuple[Program, int]:
    """The smallest program found for which ``still_bad`` holds, and the number of programs tried."""
    end = time.monotonic() + deadline
    p = freeze(p)
    tries = 0
    progress = True
    while progress:
        progress = False
        for make in PASSES:
            again = True
            while again:
                again = False
                for q in make(p):
                    if tries >= max_tries or time.monotonic() > end:
                        return p, tries
                    tries += 1
                    if still_bad(q):
                        p, again, progress = q, True, True
                        break
    return p, tries
