"""A fixed-seed slice of the differential fuzzer (``python -m tritium.testing.fuzz``): the same random kernels on
every run (about 75 s on the shared 2-core development host), on the interpreter and on every active backend and
variant. A mismatch fails with the path of a shrunk, standalone reproducer."""
from __future__ import annotations

import pytest

SEED = 20261201
KERNELS = 12          # a fixed number, so that a faster machine runs the same kernels, not more
BUDGET_S = 240.0      # a cap for a very slow machine


@pytest.mark.slow
def test_fixed_seed_fuzzing(tmp_path):
    from tritium.testing.fuzz.driver import fuzz, summary
    lines = []
    stats = fuzz(SEED, BUDGET_S, str(tmp_path / "fuzz"), log=lines.append, shrink_budget=60.0,
                 max_kernels=KERNELS)
    report = summary(stats)
    print(report)
    assert stats.kernels > 0, report
    assert stats.rejected <= max(1, stats.kernels // 10), f"the interpreter refused generated kernels:\n{report}"
    if stats.findings:
        # pytest removes old temporary folders: the failure message carries the reproducers themselves
        texts = []
        for f in stats.findings:
            with open(f.path) as fh:
                texts.append(f"----- {f.path}\n{fh.read()[:8000]}")
        pytest.fail("backends disagree with the interpreter:\n" + report + "\n" + "\n".join(texts))
