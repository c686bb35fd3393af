"""The fuzzing loop: generate, run on the oracle and the targets, compare, shrink, write reproducers."""
from __future__ import annotations

import os
import random
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from . import check as chk
from . import gen, repro, shrink
from .program import Program
from .targets import Target, Worker, discover, oracle


@dataclass
class Finding:
    target: str
    seed: int
    kind: str
    detail: str
    path: str
    stmts: int
    also: list = field(default_factory=list)     # other targets the reproducer fails on
    repeats: int = 0                             # later kernels that failed the same way (not shrunk again)


@dataclass
class Stats:
    kernels: int = 0
    rejected: int = 0
    per_target: dict = field(default_factory=dict)      # name -> [kernels, seconds]
    findings: list = field(default_factory=list)
    reject_samples: list = field(default_factory=list)
    seen: dict = field(default_factory=dict)           # fingerprint -> Finding, to recognise repeats
    flaky: int = 0                                     # worker crashes a fresh worker did not repeat
    forms: dict = field(default_factory=dict)          # target -> {cluster form (runner.cluster_form): kernels}
    elapsed: float = 0.0


class Lane:
    """One oracle worker and one worker per target (each lane runs one kernel at a time)."""

    def __init__(self, targets: list, home: str, logdir: str, timeout: float) -> None:
        self.oracle = Worker(oracle(), home, logdir)
        self.workers = {t.name: Worker(t, home, logdir) for t in targets}
        self.timeout = timeout

    def features(self) -> None:
        for w in self.workers.values():
            if w.target.features is None:
                r = w.hello()
                w.target.features = frozenset(r.get("features") or gen.DEFAULT_FEATURES) if r.get("ok") else \
                    frozenset({"ieee"})

    def run(self, worker: Worker, p: Program, workdir: str) -> dict:
        t = self.timeout * (4 if worker.target.small else 1)
        return worker.call(chk.job(p, workdir), timeout=t)

    def outcome(self, target: Target, p: Program, workdir: str, ref: Optional[dict] = None) -> Optional[chk.Outcome]:
        """None when the oracle itself fails on ``p`` (not a finding about the target)."""
        if ref is None:
            ref = self.run(self.oracle, p, workdir)
        if not ref["ok"]:
            return None
        got = self.run(self.workers[target.name], p, workdir)
        if not got["ok"]:
            return chk.Outcome(target.name, "error", got["error"])
        bad = chk.compare(p, ref["arrays"], got["arrays"])
        form = got.get("form", "")
        if bad:
            return chk.Outcome(target.name, "mismatch", chk.describe(bad), [b[0] for b in bad],
                               tuple(sorted({b[5] for b in bad})), form)
        return chk.Outcome(target.name, "ok", form=form)

    def close(self) -> None:
        self.oracle.stop()
        for w in self.workers.values():
            w.stop()


def _choose(rng: random.Random, targets: list) -> list:
    """The targets of one kernel: each with its share of kernels, relative to the largest share present (a run
    of only the slow targets gives them every kernel)."""
    top = max(t.share for t in targets)
    return [t for t in targets if rng.random() < t.share / top]


def fuzz(seed: int, budget: float, out: str, backends: Optional[list] = None, jobs: int = 1,
         log: Callable[[str], None] = print, shrink_budget: float = 180.0, timeout: float = 300.0,
         targets: Optional[list] = None, max_kernels: Optional[int] = None,
         kernel_seeds: Optional[list] = None) -> Stats:
    """Fuzz for ``budget`` seconds; reproducers of every mismatch go to ``out``."""
    os.makedirs(out, exist_ok=True)
    targets = discover(backends) if targets is None else targets
    if not targets:
        raise SystemExit(f"fuzz: no active backend{' named ' + ', '.join(backends) if backends else ''} to test")
    stats = Stats(per_target={t.name: [0, 0.0] for t in targets})
    home = tempfile.mkdtemp(prefix="tritium-fuzz-home-")
    workdir = os.path.join(out, "kernels")
    logdir = os.path.join(out, "workers")
    os.makedirs(workdir, exist_ok=True)
    os.makedirs(logdir, exist_ok=True)
    start = time.monotonic()
    end = start + budget
    counter = iter(range(1 << 62))
    lock = threading.Lock()
    log(f"fuzz: seed {seed}, budget {budget:.0f} s, targets: {', '.join(t.name for t in targets)}")

    def lane_main() -> None:
        lane = Lane(targets, home, logdir, timeout)
        try:
            lane.features()
            while time.monotonic() < end:
                with lock:
                    i = next(counter)
                    if max_kernels is not None and i >= max_kernels:
                        return
                    if kernel_seeds is not None and i >= len(kernel_seeds):
                        return
                kseed = seed * 1_000_003 + i if kernel_seeds is None else kernel_seeds[i]
                rng = random.Random(kseed)
                chosen = _choose(rng, targets)
                feats = frozenset.intersection(*[t.features for t in chosen]) if chosen else gen.DEFAULT_FEATURES
                p = gen.generate(kseed, feats, small=any(t.small for t in chosen))
                _one(lane, p, chosen, workdir, out, stats, lock, log, shrink_budget)
        finally:
            lane.close()

    threads = [threading.Thread(target=lane_main, daemon=True) for _ in range(max(1, jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stats.elapsed = time.monotonic() - start
    shutil.rmtree(home, ignore_errors=True)
    return stats


def _one(lane: Lane, p: Program, chosen: list, workdir: str, out: str, stats: Stats, lock: threading.Lock,
         log: Callable[[str], None], shrink_budget: float) -> None:
    p = shrink.freeze(p)
    ref = lane.run(lane.oracle, p, workdir)
    with lock:
        stats.kernels += 1
    if not ref["ok"]:
        with lock:
            stats.rejected += 1
            if len(stats.reject_samples) < 20:
                stats.reject_samples.append((p.seed, ref["error"][:300]))
        return
    bad = []
    for t in chosen:
        t0 = time.monotonic()
        o = lane.outcome(t, p, workdir, ref)
        with lock:
            stats.per_target[t.name][0] += 1
            stats.per_target[t.name][1] += time.monotonic() - t0
            if o is not None and o.form:
                forms = stats.forms.setdefault(t.name, {})
                forms[o.form] = forms.get(o.form, 0) + 1
        if o is not None and o.bad:
            log(f"fuzz: {t.name}: kernel seed {p.seed}: {o.kind}: {o.detail[:300]}")
            bad.append((t, o))
    # one shrink per distinct failure: a reproducer of one target is tried on the others that failed alike
    while bad:
        t, o = bad.pop(0)
        sig = o.signature()
        if o.kind == "error" and o.detail.startswith(("WorkerCrash", "Timeout")):
            lane.workers[t.name].stop()   # a crash must happen again in a fresh worker to count
            again = lane.outcome(t, p, workdir)
            if again is None or not again.matches(sig):
                log(f"fuzz: {t.name}: kernel seed {p.seed}: the crash did not happen again in a fresh worker")
                with lock:
                    stats.flaky += 1
                continue
        # a subnormal flush, a zero sign or a NaN difference already shrunk on this target: the same bug again
        early = tuple(k for k in o.kinds if not k.endswith(":value"))
        if early and len(early) == len(o.kinds):
            key = (t.name, "pattern", early)
            with lock:
                if key in stats.seen:
                    stats.seen[key].repeats += 1
                    log(f"fuzz: {t.name}: kernel seed {p.seed}: same failure as {stats.seen[key].path}")
                    continue

        def still_bad(q: Program, t: Target = t, sig: tuple = sig) -> bool:
            r = lane.outcome(t, q, workdir)
            return r is not None and r.matches(sig)

        small, tried = shrink.shrink(p, still_bad, deadline=shrink_budget)
        final = lane.outcome(t, small, workdir)
        final = final if final is not None and final.matches(sig) else o
        also = []
        for u, uo in list(bad):
            r = lane.outcome(u, small, workdir)
            if uo.signature() == sig and r is not None and r.matches(sig):
                also.append(u.name)
                bad.remove((u, uo))
        shape = (t.name, "ops", tuple(sorted({x.op for x in small.stmts if x.op not in ("load", "aux")})), sig)
        with lock:
            dup = stats.seen.get(shape)
        if dup is not None:
            dup.repeats += 1
            log(f"fuzz: {t.name}: kernel seed {p.seed}: shrinks to the same operations as {dup.path}")
            continue
        path = repro.write(small, t, final, out, tried, also)
        log(f"fuzz: {t.name}: shrunk to {len(small.stmts)} statements in {tried} tries"
            f"{' (also fails on ' + ', '.join(also) + ')' if also else ''}: {path}")
        finding = Finding(t.name, p.seed, o.kind, final.detail, path, len(small.stmts), also)
        with lock:
            stats.findings.append(finding)
            stats.seen[shape] = finding
            if early and len(early) == len(o.kinds):
                stats.seen[(t.name, "pattern", early)] = finding
                for u in also:
                    stats.seen[(u, "pattern", early)] = finding


def summary(stats: Stats) -> str:
    mins = max(stats.elapsed, 1e-9) / 60
    lines = [f"fuzz: {stats.kernels} kernels in {stats.elapsed:.0f} s ({stats.kernels / mins:.1f} kernels/minute), "
             f"{stats.rejected} rejected by the interpreter, {len(stats.findings)} findings"
             + (f", {stats.flaky} crashes not repeated in a fresh worker" if stats.flaky else "")]
    for name, (n, secs) in sorted(stats.per_target.items()):
        rate = n / (secs / 60) if secs else 0.0
        lines.append(f"  {name}: {n} kernels, {rate:.1f} kernels/minute of its own time")
        forms = stats.forms.get(name, {})
        if forms:
            # how often the cluster split was exercised, and why it was refused
            split = forms.get("split", 0)
            lines.append(f"    cluster split: {split} kernels, one-CTA form: {sum(forms.values()) - split}")
            for why, c in sorted(forms.items(), key=lambda kv: -kv[1]):
                if why != "split":
                    lines.append(f"      {c:5d}  {why}")
    for seed, err in stats.reject_samples[:5]:
        lines.append(f"  rejected kernel seed {seed}: {err}")
    for f in stats.findings:
        also = f", also {', '.join(f.also)}" if f.also else ""
        also += f", seen again {f.repeats} times" if f.repeats else ""
        lines.append(f"  FINDING {f.target}{also} seed {f.seed} ({f.kind}, {f.stmts} statements): {f.path}\n"
                     f"    {f.detail[:400]}")
    return "\n".join(lines)
