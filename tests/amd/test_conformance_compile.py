"""The conformance suite's kernels compiled for AMD GPUs (TRITIUM_AMD_COMPILE_ONLY: every launch compiles a code
object, checks it and runs nothing), in a fresh process per chip. A test may fail only by a refusal tritium-amd
documents (a math function with no device code, an extern_elementwise call: both need ROCm's device library);
anything else raised while compiling fails here.

Default: the dot (MFMA) and atomics kernels for gfx942. With
TRITIUM_AMD_TEST_ALL=1: the whole suite for gfx90a, gfx942 and gfx950 (about three minutes per chip on one core)."""
from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

pytest.importorskip("tritium_amd", reason="tritium-amd is not installed")
from tritium_amd.chips import CDNA  # noqa: E402
from tritium_amd.knobs import amd as amd_knobs  # noqa: E402

REFUSALS = ("tritium-amd has no device code for", "tritium-amd links no device library")
SUBSET = ["test_dot.py", "test_atomics.py"]


def _runs():
    if amd_knobs.test_all:
        return [pytest.param(chip, None, id=f"{chip}-all") for chip in CDNA]
    return [pytest.param("gfx942", SUBSET, id="gfx942-subset")]


@pytest.mark.slow
@pytest.mark.parametrize("chip,files", _runs())
def test_conformance_kernels_compile_for_amd(tmp_path, chip, files):
    import tritium.testing.conformance as conf
    folder = os.path.dirname(conf.__file__)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_", "TRITIUM_AMD_", "TRITON_", "TRITIUM_"))}
    env.update(TRITIUM_AMD_COMPILE_ONLY="1", TRITIUM_AMD_ARCH=chip, TRITIUM_HOME=str(tmp_path / "home"))
    report = tmp_path / "report.xml"
    targets = [os.path.join(folder, f) for f in files] if files else ["--pyargs", "tritium.testing.conformance"]
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider",
           "-p", "tritium_amd.compile_only_pytest", "--backend=amd", f"--junitxml={report}", "-o",
           "junit_logging=no", "--rootdir", folder, *targets]
    run = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1500, cwd=tmp_path)
    tail = "\n".join((run.stdout + run.stderr).splitlines()[-30:])
    assert report.exists(), f"the conformance run for {chip} did not finish:\n{tail}"
    passed, refused, wrong = 0, [], []
    for case in ET.parse(report).getroot().iter("testcase"):
        bad = case.find("failure")
        if bad is None:
            bad = case.find("error")
        if bad is None:
            passed += case.find("skipped") is None
            continue
        text = (bad.get("message") or "") + (bad.text or "")
        (refused if any(r in text for r in REFUSALS) else wrong).append(f"{case.get('name')}: "
                                                                        f"{(bad.get('message') or '')[:300]}")
    assert not wrong, f"{len(wrong)} conformance kernels failed to compile for {chip}:\n" + "\n".join(wrong[:20])
    assert passed >= (30 if files else 450), tail
    print(f"{chip}: {passed} compiled, {len(refused)} refused (documented)")
