"""Random, well-formed kernels (:class:`~.program.Program`), the same for the same seed.

Every operation is one Triton defines for its operands: integer division and remainder never see 0 (nor -1
for signed types, whose MIN / -1 overflows), shift amounts are masked below the width, floats are clamped
into the target's range (NaN replaced) before a cast to an integer, NaN never reaches argmax/argmin (whose
answer would depend on the order of comparisons) nor a float-to-int bitcast (NaN payloads are unspecified).
A value whose last bits Triton leaves open (transcendental functions, fp32 division, float sums, dots; see
``tolerance.TABLE``) is stored, never computed on further: an error bound cannot follow it through a chain.
"""
from __future__ import annotations

import random
from typing import Callable, Optional

from . import ops_elementwise as E
from . import ops_extra as X
from . import ops_tiles as O
from . import types as T
from .ops_elementwise import convert
from .program import Program, Sink, Skip, Stmt

#: a target feature (not a capability): kernels run on clusters of num_ctas > 1 CTAs. Dots then come more often
#: and their N is wide enough for the cluster split (it refuses parts under 16 columns), so that the split is
#: exercised rather than its one-CTA form; kernels for other targets keep the default distribution
CLUSTER_FEATURE = "cluster-split"
WIDE_N = [64, 64, 128]
CLUSTER_DOT_WEIGHT = 10

DEFAULT_FEATURES = frozenset({"fp64", "dot-fp32", "dot-fp16", "dot-bf16", "dot-int8", "dot-fp64", "int64-atomics",
                              "float-atomics", "ieee", "tf32", "tf32x3"})


class Gen:
    def __init__(self, seed: int, features: frozenset = DEFAULT_FEATURES, small: bool = False,
                 max_stmts: int = 10) -> None:
        self.rng = random.Random(seed)
        self.seed = seed
        self.features = features
        self.small = small
        self.max_stmts = max_stmts
        self.stmts: list[Stmt] = []
        self.helpers: dict[str, str] = {}
        self.n = 0
        self.used: set[str] = set()

    # -- helpers -------------------------------------------------------------------------------------
    def var(self) -> str:
        self.n += 1
        return f"v{self.n}"

    def dtypes(self) -> list:
        out = list(T.ALL)
        if "fp64" not in self.features:
            out = [d for d in out if d.name != "float64"]
        return out

    def pick(self, pred: Callable[[Stmt], bool]) -> Optional[Stmt]:
        pool = [s for s in self.stmts if s.tol == "exact" and pred(s)]
        if not pool:
            return None
        # prefer recent values so chains get deep
        w = [1 + i for i in range(len(pool))]
        return self.rng.choices(pool, w)[0]

    def add(self, s: Stmt) -> Stmt:
        self.stmts.append(s)
        self.used.update(s.args)
        return s

    def emit(self, dtype: str, shape: tuple, op: str, tmpl: str, args: list, **kw) -> Stmt:
        return self.add(Stmt(self.var(), dtype, shape, op, tmpl, list(args), **kw))

    def load(self, shape: tuple, d: Optional[T.DType] = None) -> Stmt:
        d = d or self.rng.choice(self.dtypes())
        if d.kind == "b":
            other = self.rng.choice(["0", "1"])
        elif d.is_int:
            other = self.rng.choice(["0", "1", "-1" if d.signed else "3"])
        else:
            other = self.rng.choice(["0.0", "1.5", "-0.0", "-2.5"])
        s = Stmt(self.var(), d.name, shape, "load", other)
        mask_var = None
        if self.rng.random() < 0.15:
            mask_var = self.pick(lambda x: x.dtype == "int1" and x.shape == shape)
        if mask_var is not None:
            s.args = [mask_var.out]
            s.tmpl = other
        return self.add(s)

    def operand(self, shape: tuple, pred: Callable[[T.DType], bool] = lambda d: True, fresh: float = 0.15) -> Stmt:
        """A value of ``shape`` whose type satisfies ``pred``: an earlier one (converted if need be, so that
        chains get deep) or a new load."""
        s = None
        choices = [d for d in self.dtypes() if pred(d)]
        if self.rng.random() > fresh:
            s = self.pick(lambda x: x.shape == shape and pred(T.get(x.dtype)))
            if s is None and self.rng.random() < 0.6:
                src = self.pick(lambda x: x.shape == shape)
                if src is not None:
                    try:
                        s = convert(self, src, self.rng.choice(choices))
                    except Skip:
                        s = None
        if s is None:
            s = self.load(shape, self.rng.choice(choices))
        return s

    def shape(self) -> tuple:
        have = [s.shape for s in self.stmts if s.tol == "exact" and s.shape]
        if have and self.rng.random() < 0.7:
            return self.rng.choice(have)
        # on clusters, a tile whose N does not follow the dot's ((N, M), or a vector along one of them) keeps the
        # kernel in its one-CTA form: fewer of them
        wide = 4 if CLUSTER_FEATURE not in self.features else 12
        return self.rng.choice([("M", "N")] * wide + [("M",), ("N",), ("N", "M")])

    # -- the kernel -----------------------------------------------------------------------------------
    def program(self) -> Program:
        p = Program(self.seed, self.stmts, self.sinks(), self.helpers, self.blocks, self.valid, grid=self.grid,
                    input_seed=self.rng.randrange(1 << 30))
        return p.live()

    def choose_blocks(self, has_dot: bool) -> None:
        rng = self.rng
        sizes = [16, 32] if self.small else [16, 32, 64]
        tiny = [1, 2, 4, 8, 16]
        self.blocks = {d: rng.choice(sizes if (has_dot or rng.random() < 0.7) else tiny) for d in "MNK"}
        if has_dot and CLUSTER_FEATURE in self.features:
            # M and K unlike N: CSE merges tl.arange(0, BK) with tl.arange(0, BN) when they are equal, which ties
            # the dot's K to its N and the split is refused
            self.blocks["N"] = rng.choice(WIDE_N)
            for d in "MK":
                self.blocks[d] = rng.choice([b for b in sizes if b != self.blocks["N"]])
        self.valid = {d: (b if rng.random() < 0.5 else rng.randint(1, b)) for d, b in self.blocks.items()}
        self.grid = rng.choice([1, 1, 2, 3])

    def sinks(self) -> list:
        out = []
        st = {s.out: s for s in self.stmts}
        for s in self.stmts:
            if s.tol not in ("exact", "aux"):
                out.append(Sink(s.out))
                if s.scale:
                    out.append(Sink(s.scale, kind="aux"))
        leaves = [s for s in self.stmts if s.out not in self.used and s.tol == "exact" and s.op != "load"]
        if not leaves:
            leaves = [s for s in self.stmts if s.tol == "exact" and s.op != "load"][-1:]
        for s in leaves:
            k = Sink(s.out)
            if self.rng.random() < 0.2 and s.shape:
                m = self.pick(lambda x: x.dtype == "int1" and x.shape == s.shape)
                k.mask = m.out if m is not None else None
            out.append(k)
        for s in self.atomics:
            out.append(s)
        seen, uniq = set(), []
        for k in out:
            if k.var not in seen and k.var in st:
                seen.add(k.var)
                uniq.append(k)
        return uniq

    def generate(self) -> Program:
        rng = self.rng
        OPS = ops_table()
        ops = list(OPS)
        weights = [OPS[o][1] for o in ops]
        if CLUSTER_FEATURE in self.features:
            weights = [CLUSTER_DOT_WEIGHT if o == "dot" else w for o, w in zip(ops, weights)]
        plan = rng.choices(ops, weights, k=rng.randint(2, self.max_stmts))
        if CLUSTER_FEATURE in self.features and "dot" not in plan:
            plan.insert(rng.randrange(len(plan) + 1), "dot")    # without a dot there is nothing to split
        self.choose_blocks("dot" in plan)
        self.atomics: list[Sink] = []
        for _ in range(rng.randint(1, 2)):
            self.load(self.shape())
        for op in plan:
            try:
                OPS[op][0](self)
            except Skip:
                pass
        return self.program()


def ops_table() -> dict:
    """Operation kind -> (generator function, weight)."""
    return {
        "binary": (E.g_binary, 10), "unary": (E.g_unary, 4), "where": (E.g_where, 3), "cast": (E.g_cast, 4),
        "bitcast": (E.g_bitcast, 1), "reduce": (O.g_reduce, 4), "scan": (O.g_scan, 2), "dot": (O.g_dot, 2),
        "shape": (O.g_shape, 3), "loop": (O.g_loop, 2), "call": (O.g_call, 2), "atomic": (O.g_atomic, 1),
        "extra": (X.g_extra, 4),
    }


def generate(seed: int, features: frozenset = DEFAULT_FEATURES, small: bool = False) -> Program:
    """The kernel of ``seed`` for targets offering ``features`` (capability names, dot input precisions)."""
    return Gen(seed, features, small).generate()
