"""Standalone reproducer files: the kernel's source, its inputs as literals, and the check.

A reproducer imports tritium and this module only (for :func:`check`), runs the kernel on the interpreter
and on the target in one process, and raises AssertionError while the two disagree beyond the tolerance."""
from __future__ import annotations

import os
import sys
from contextlib import ExitStack
from typing import Any

import numpy as np

from . import check as chk
from . import inputs, runner, tolerance
from . import types as T
from .program import Program


def _literal(a: np.ndarray) -> str:
    bits = np.ascontiguousarray(a).view(f"u{a.dtype.itemsize}").ravel().tolist()
    return f"np.array({bits!r}, dtype='u{a.dtype.itemsize}').view({a.dtype.str!r}).reshape({a.shape!r})"


def write(p: Program, target: Any, outcome: Any, out_dir: str, tried: int = 0, also: tuple = ()) -> str:
    """Write ``p`` as a reproducer of ``outcome`` on ``target`` into ``out_dir``; returns the file's path."""
    os.makedirs(out_dir, exist_ok=True)
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in target.name)
    path = os.path.join(out_dir, f"repro_{safe}_seed{p.seed}.py")
    arrays = inputs.make(p)   # frozen arrays cut to the shrunk shapes
    job = {"scalars": chk.scalars(p), "options": {"enable_fp_fusion": p.fp_fusion},
           "dtypes": {f"{r}_{v}": d for r, v, d, _ in p.array_args()}}
    src = p.source().split("\n")
    body = "\n".join(line for line in src if not line.startswith("import "))
    sinks = []
    st = p.by_var()
    for k in p.sinks:
        s = st[k.var]
        names = [f"out_{k.var}"] + ([f"old_{k.var}"] if k.kind == "atomic" else [])
        for n in names:
            sinks.append((n, s.dtype, "aux" if k.kind == "aux" else s.tol,
                          f"out_{s.scale}" if s.scale else None, s.k))
    lines = [
        f'"""tritium fuzz reproducer: target {target.name!r} disagrees with the interpreter (fuzz seed {p.seed}).',
        "",
        f"Found: {outcome.kind}: {outcome.detail[:1500]}",
        *([f"The same kernel also fails on: {', '.join(also)}."] if also else []),
        f"Shrunk in {tried} tries. Run: python {os.path.basename(path)}   (raises AssertionError while the bug is "
        "there)",
        '"""',
        "import os",
        f"os.environ.update({target.env!r})   # the target's variant, read by its knobs",
        "import numpy as np",
        "import tritium as triton",
        "import tritium.language as tl",
        "",
        body.strip("\n"),
        "",
        "",
        f"TARGET = ({target.backend!r}, {target.plugin!r})",
        f"GRID = {p.grid}",
        f"SCALARS = {job['scalars']!r}",
        f"OPTIONS = {job['options']!r}",
        f"DTYPES = {job['dtypes']!r}",
        "# (parameter, dtype, tolerance class, scale parameter, terms): see tritium.testing.fuzz.tolerance",
        f"SINKS = {sinks!r}",
        "INPUTS = {",
        *[f"    {k!r}: {_literal(v)}," for k, v in sorted(arrays.items())],
        "}",
        "",
        'if __name__ == "__main__":',
        "    from tritium.testing.fuzz.repro import check",
        f"    check({p.name}, INPUTS, DTYPES, SCALARS, GRID, OPTIONS, SINKS, TARGET)",
        "",
    ]
    with open(path, "w") as f:
        f.write("\n".join(lines))
    return path


def check(kernel: Any, arrays: dict, dtypes: dict, scalars: dict, grid: int, options: dict, sinks: list,
          target: tuple) -> None:
    results = {}
    for backend, plugin in ((runner.ORACLE, ""), target):
        with ExitStack() as stack:
            runner.use_target(stack, backend, plugin)
            results[backend] = runner.run(kernel, arrays, dtypes, scalars, grid, options)
    ref, got = results[runner.ORACLE], results[target[0]]
    problems = []
    for name, dt, cls, scale, k in sinks:
        d = T.get(dt)
        m = tolerance.mismatches(cls, d, ref[name], got[name], ref.get(scale) if scale else None, k)
        if m.any():
            i = np.flatnonzero(m.ravel())
            r = T.as_float_view(d, ref[name].ravel()[i[:4]])
            g = T.as_float_view(d, got[name].ravel()[i[:4]])
            problems.append(f"{name} ({dt}, tolerance {cls!r}): {i.size} of {m.size} elements differ; at flat "
                            f"indices {i[:4].tolist()} the interpreter has {r.tolist()}, {target[0]} has {g.tolist()}")
    if problems:
        raise AssertionError("\n".join(problems))
    print(f"{target[0]} agrees with the interpreter", file=sys.stderr)
