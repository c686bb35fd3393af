"""``python -m tritium.testing.fuzz --seed N --budget SECONDS --out DIR [--backend NAME] [--jobs N]``"""
from __future__ import annotations

import argparse
import sys

from .driver import fuzz, summary


def main(argv: list | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tritium.testing.fuzz",
                                 description="Differential fuzzing: random kernels on the interpreter (the oracle) "
                                             "and on every active backend and its variants.")
    ap.add_argument("--seed", type=int, default=0, help="first seed; the same seed generates the same kernels")
    ap.add_argument("--budget", type=float, default=60.0, help="seconds to fuzz (a kernel in flight finishes)")
    ap.add_argument("--out", default="fuzz-out", help="directory for reproducers and generated kernels")
    ap.add_argument("--backend", action="append", default=None,
                    help="only this backend or target (backend:variant); repeatable; default: all active")
    ap.add_argument("--jobs", type=int, default=1, help="kernels in flight at once (each with its own workers)")
    ap.add_argument("--kernels", type=int, default=None, help="stop after this many kernels")
    ap.add_argument("--kernel-seed", type=int, action="append", default=None,
                    help="run exactly this kernel (its seed as a log line names it); repeatable")
    ap.add_argument("--shrink-budget", type=float, default=180.0, help="seconds to shrink one mismatch")
    a = ap.parse_args(argv)
    stats = fuzz(a.seed, a.budget, a.out, a.backend, a.jobs, shrink_budget=a.shrink_budget, max_kernels=a.kernels, kernel_seeds=a.kernel_seed,
                 log=lambda s: print(s, flush=True))
    print(summary(stats), flush=True)
    return 1 if stats.findings else 0


if __name__ == "__main__":
    sys.exit(main())
