"""A pytest plugin, ``-p conformance_shard --shard=I/N``: keeps collected tests I, I+N, I+2N, ... (0-based)
and deselects the rest. N processes, one per I, run a suite exactly once between them; every N-th test, not a
block of files, spreads a parametrized test's heavy cases over all of them, so that the shards take about the
same time (tests/cpu/test_cross_aarch64.py runs them as N items that xdist can balance)."""
from __future__ import annotations

from typing import Any


def parse(spec: str) -> tuple[int, int]:
    i, _, n = spec.partition("/")
    index, count = int(i), int(n)
    if not 0 <= index < count:
        raise ValueError(f"--shard={spec}: want I/N with 0 <= I < N")
    return index, count


def pytest_addoption(parser: Any) -> None:
    parser.addoption("--shard", default=None, help="I/N: run collected tests I, I+N, I+2N, ... (0-based)")


def pytest_collection_modifyitems(config: Any, items: list) -> None:
    spec = config.getoption("--shard")
    if not spec:
        return
    index, count = parse(spec)
    keep = [item for k, item in enumerate(items) if k % count == index]
    drop = [item for k, item in enumerate(items) if k % count != index]
    if drop:
        config.hook.pytest_deselected(items=drop)
    items[:] = keep
