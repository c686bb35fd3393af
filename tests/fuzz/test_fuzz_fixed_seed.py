"""A fixed-seed slice of the differential fuzzer (``python -m tritium.testing.fuzz``): about 75 seconds of random
kernels on the interpreter and on every active backend and variant. A mismatch fails with the path of a
shrunk, standalone reproducer."""
from __future__ import annotations

import pytest

SEED = 20261201
BUDGET_S = 75.0


@pytest.mark.slow
def test_fixed_seed_fuzzing(tmp_path):
    from tritium.testing.fuzz.driver import fuzz, summary
    lines = []
    stats = fuzz(SEED, BUDGET_S, str(tmp_path / "fuzz"), log=lines.append, shrink_budget=60.0)
    report = summary(stats)
    print(report)
    assert stats.kernels > 0, report
    assert stats.rejected <= max(1, stats.kernels // 10), f"the interpreter refused generated kernels:\n{report}"
    assert not stats.findings, f"backends disagree with the interpreter:\n{report}"
