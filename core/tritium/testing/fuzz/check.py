"""Run a program on the oracle and on targets, and compare what each sink stored."""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field

import numpy as np

from . import inputs, tolerance
from . import types as T
from .program import Program


@dataclass
class Outcome:
    target: str
    kind: str                      # "ok", "mismatch", "error" (the target failed where the oracle did not)
    detail: str = ""
    sinks: list = field(default_factory=list)   # names of mismatching parameters
    kinds: tuple = ()                           # "dtype:pattern" of each mismatching parameter
    form: str = ""                              # how the kernel used a cluster (runner.cluster_form)

    @property
    def bad(self) -> bool:
        return self.kind != "ok"

    def signature(self) -> tuple:
        """What must stay the same while shrinking: the kind; for errors the exception type; for mismatches the
        most severe class of difference (so that shrinking does not drift to a milder bug of the same kernel)."""
        if self.kind == "error":
            return (self.kind, self.detail.split(":", 1)[0])
        if self.kind == "mismatch" and self.kinds:
            return (self.kind, max(self.kinds, key=lambda k: SEVERITY.get(k.split(":")[-1], 0)))
        return (self.kind,)

    def matches(self, sig: tuple) -> bool:
        """Still the failure ``sig`` describes (a mismatch may have grown other classes besides)."""
        if not self.bad or self.kind != sig[0]:
            return False
        if self.kind == "mismatch" and len(sig) > 1:
            return sig[1] in self.kinds
        return self.signature() == sig


SEVERITY = {"value": 3, "nan": 2, "zero-sign": 1, "subnormal-flushed": 0}


def scalars(p: Program) -> dict:
    return {"vM": p.valid["M"], "vN": p.valid["N"], "vK": p.valid["K"],
            "BM": p.blocks["M"], "BN": p.blocks["N"], "BK": p.blocks["K"]}


def job(p: Program, workdir: str) -> dict:
    """A worker request; arrays from ``inputs.make`` (frozen ones as they are)."""
    src = p.source()
    digest = hashlib.sha1(src.encode()).hexdigest()[:12]
    path = os.path.join(workdir, f"k{p.seed}_{digest}.py")
    if not os.path.exists(path):
        with open(path, "w") as f:
            f.write(src)
    arrays = inputs.make(p)
    return {"op": "run", "path": path, "kernel": p.name, "arrays": arrays,
            "dtypes": {f"{r}_{v}": d for r, v, d, _ in p.array_args()}, "scalars": scalars(p), "grid": p.grid,
            "options": {"enable_fp_fusion": p.fp_fusion}}


def compare(p: Program, ref: dict, got: dict) -> list:
    """(parameter, number of bad elements, first bad index, expected, got) for every mismatching output."""
    st = p.by_var()
    bad = []
    for k in p.sinks:
        s = st[k.var]
        d = T.get(s.dtype)
        names = [f"out_{k.var}"] + ([f"old_{k.var}"] if k.kind == "atomic" else [])
        cls = "aux" if k.kind == "aux" else s.tol
        for name in names:
            r, g = ref[name], got[name]
            if r.shape != g.shape or r.dtype != g.dtype:
                bad.append((name, r.size, 0, f"shape {r.shape} {r.dtype}", f"shape {g.shape} {g.dtype}"))
                continue
            scale = ref.get(f"out_{s.scale}") if s.scale else None
            m = tolerance.mismatches(cls, d, r, g, scale, s.k)
            if m.any():
                i = int(np.flatnonzero(m.ravel())[0])
                rv, gv = T.as_float_view(d, r.ravel()[i:i + 1])[0], T.as_float_view(d, g.ravel()[i:i + 1])[0]
                bad.append((name, int(m.sum()), i, rv, gv, f"{s.dtype}:{pattern(d, r[m], g[m])}"))
    return bad


def pattern(d: T.DType, ref: np.ndarray, got: np.ndarray) -> str:
    """A coarse class of the differing elements, to recognise one bug seen again in another kernel."""
    if not d.is_float:
        return "value"
    r, g = T.as_float_view(d, ref).astype(np.float64), T.as_float_view(d, got).astype(np.float64)
    tiny = T.finfo(d)[1] if d.name != "bfloat16" else 2.0 ** -126
    if np.all((np.abs(r) < tiny) & (r != 0) & (g == 0)) or np.all((np.abs(g) < tiny) & (g != 0) & (r == 0)):
        return "subnormal-flushed"
    if np.all((r == 0) & (g == 0)):
        return "zero-sign"
    if np.all(np.isnan(r) != np.isnan(g)):
        return "nan"
    return "value"


def describe(bad: list) -> str:
    return "; ".join(f"{n}: {c} elements differ ({kind}), first at flat index {i}: interpreter {r!r}, target {g!r}"
                     for n, c, i, r, g, kind in bad)
