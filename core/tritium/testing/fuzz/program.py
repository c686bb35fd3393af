"""A generated kernel as data: statements that each define one tile, and sinks that store tiles.

The shrinker edits this form (drop a sink, replace a statement, shrink a block) and renders it again, so every
candidate is real Python source of a ``@jit`` kernel, written to a file and imported: error messages point at
its lines and a reproducer is a standalone file.

Tiles have symbolic dimensions: ``M``, ``N``, ``K`` (constexpr block sizes ``BM``, ``BN``, ``BK``; of each only
the first ``vM``/``vN``/``vK`` entries are valid, the rest is a masked tail) and ``2`` (from ``tl.join``).
Input and output arrays hold the valid part only, one slab per program: shape ``(G, valid extents...)``.
"""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Optional

from . import types as T

BLOCK = {"M": "BM", "N": "BN", "K": "BK", "2": "2"}
VALID = {"M": "vM", "N": "vN", "K": "vK", "2": "2"}
_VAR = re.compile(r"\{(\d+)\}")


class Skip(Exception):
    """An operation that does not fit the operands at hand: generate the next one instead."""


@dataclass
class Stmt:
    out: str                       # variable it defines
    dtype: str                     # tl dtype name of the result
    shape: tuple                   # dimension symbols
    op: str                        # category, for statistics and the tolerance table
    tmpl: str                      # source; "{0}".. are the arguments, "{out}" the result; may span lines
    args: list = field(default_factory=list)
    tol: str = "exact"             # key of tolerance.TABLE
    scale: Optional[str] = None    # variable holding the magnitude bound of an inexact result
    k: int = 1                     # terms summed into one result (reductions, dots, loops)
    helpers: tuple = ()            # names of helper functions it calls

    def render(self) -> list[str]:
        text = self.tmpl.replace("{out}", self.out)
        text = _VAR.sub(lambda m: self.args[int(m.group(1))], text)
        return text.split("\n")


@dataclass
class Sink:
    var: str
    kind: str = "store"            # "store", "aux" (a scale: stored, never compared), "atomic"
    atomic: str = ""               # tl function name for atomics
    atomic_args: str = ""          # extra source, e.g. the cmp value of atomic_cas
    mask: Optional[str] = None     # an extra boolean tile ANDed into the store mask


@dataclass
class Program:
    seed: int
    stmts: list
    sinks: list
    helpers: dict                  # name -> source of a @jit helper
    blocks: dict                   # {"M": 16, "N": 32, "K": 16}
    valid: dict                    # {"M": 13, "N": 32, "K": 16}
    grid: int = 1
    input_seed: int = 0
    inputs: dict = field(default_factory=dict)   # parameter name -> frozen array (set by the shrinker)
    name: str = "kernel"
    fp_fusion: bool = False

    def clone(self) -> "Program":
        return copy.deepcopy(self)

    # -- structure ----------------------------------------------------------------------------------
    def by_var(self) -> dict:
        return {s.out: s for s in self.stmts}

    def live(self) -> "Program":
        """Drop statements no sink needs (and helpers no statement calls), and scales nothing is bounded by."""
        st = self.by_var()
        owners = {st[k.var].scale for k in self.sinks if k.kind != "aux" and k.var in st}
        self.sinks = [k for k in self.sinks if k.kind != "aux" or k.var in owners]
        need = set()
        for s in self.sinks:
            need.add(s.var)
            if s.mask:
                need.add(s.mask)
        for s in reversed(self.stmts):
            if s.out in need:
                need.update(s.args)
                if s.scale:
                    need.add(s.scale)
        self.stmts = [s for s in self.stmts if s.out in need]
        used = {h for s in self.stmts for h in s.helpers}
        self.helpers = {k: v for k, v in self.helpers.items() if k in used}
        keep = {f"{role}_{var}" for role, var, _, _ in self.array_args()}
        self.inputs = {k: v for k, v in self.inputs.items() if k in keep}
        return self

    def loads(self) -> list:
        return [s for s in self.stmts if s.op == "load"]

    def array_args(self) -> list:
        """(role, var, dtype name, dims) of every array parameter, in parameter order."""
        st = self.by_var()
        out = [("in", s.out, s.dtype, s.shape) for s in self.loads()]
        for i, k in enumerate(self.sinks):
            s = st[k.var]
            out.append(("out", k.var, s.dtype, s.shape))
            if k.kind == "atomic":
                out.append(("old", k.var, s.dtype, s.shape))
        return out

    def shape_of(self, dims: tuple) -> tuple:
        return (self.grid,) + tuple(2 if d == "2" else self.valid[d] for d in dims)

    # -- source -------------------------------------------------------------------------------------
    def source(self) -> str:
        lines = ["import tritium as triton", "import tritium.language as tl", "", ""]
        for name in sorted(self.helpers):
            lines += ["@triton.jit", *self.helpers[name].split("\n"), "", ""]
        params = []
        for i, (role, var, _, _) in enumerate(self.array_args()):
            params.append(f"{role}_{var}")
        params += ["vM", "vN", "vK", "BM: tl.constexpr", "BN: tl.constexpr", "BK: tl.constexpr"]
        lines += ["@triton.jit", f"def {self.name}({', '.join(params)}):"]
        body = ["pid = tl.program_id(0)", "rM = tl.arange(0, BM)", "rN = tl.arange(0, BN)", "rK = tl.arange(0, BK)",
                "r2 = tl.arange(0, 2)"]
        for s in self.stmts:
            if s.op == "load":
                m = mask(s.shape)
                if s.args:   # an extra boolean tile masks some valid lanes too
                    m = f"({m}) & {s.args[0]}" if m != "None" else s.args[0]
                # a tile with no masked tail (only "2" dimensions, as a reduction of a 3-D tile leaves) takes no
                # other=: Triton refuses other without a mask
                tail = "" if m == "None" else f", mask={m}, other={s.tmpl}"
                body.append(f"{s.out} = tl.load(in_{s.out} + {offsets(s.shape)}{tail})")
            else:
                body += s.render()
        st = self.by_var()
        for k in self.sinks:
            dims = st[k.var].shape
            m = mask(dims)
            if k.mask:
                m = f"({m}) & {k.mask}" if m != "None" else k.mask
            if k.kind == "atomic":
                body.append(f"prev_{k.var} = tl.{k.atomic}(out_{k.var} + {offsets(dims)}{k.atomic_args}, {k.var}"
                            f"{'' if m == 'None' else ', mask=' + m})")
                body.append(f"tl.store(old_{k.var} + {offsets(dims)}, prev_{k.var}"
                            f"{'' if m == 'None' else ', mask=' + m})")
            else:
                body.append(f"tl.store(out_{k.var} + {offsets(dims)}, {k.var}{'' if m == 'None' else ', mask=' + m})")
        lines += ["    " + b for b in body]
        return "\n".join(lines) + "\n"


def _index(dims: tuple, i: int) -> str:
    r = f"r{dims[i]}"
    if len(dims) == 1:
        return r
    return f"{r}[{', '.join(':' if j == i else 'None' for j in range(len(dims)))}]"


def offsets(dims: tuple) -> str:
    if not dims:
        return "pid"
    size = " * ".join(VALID[d] for d in dims)
    terms = []
    for i in range(len(dims)):
        stride = " * ".join(VALID[d] for d in dims[i + 1:])
        terms.append(_index(dims, i) + (f" * {stride}" if stride else ""))
    return f"pid * ({size}) + " + " + ".join(terms)


def mask(dims: tuple) -> str:
    parts = [f"({_index(dims, i)} < {VALID[d]})" for i, d in enumerate(dims) if d != "2"]
    return " & ".join(parts) if parts else "None"


def block_shape(dims: tuple) -> str:
    return "(" + "".join(f"{BLOCK[d]}, " for d in dims) + ")"


def dtype(s: Stmt) -> T.DType:
    return T.get(s.dtype)
