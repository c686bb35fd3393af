"""IR tests: every ``tests/ir/<pass>.mlir`` runs its ``// RUN:`` lines, ``tritium-opt`` then ``filecheck``.

A RUN line reads ``tritium-opt %s -p PASSES [flags] | filecheck %s [flags]``; ``not tritium-opt ...`` expects
the tool to fail and checks what it wrote to stderr. ``tritium-opt`` runs in this process, against the
explicit plugin registry of tests/conftest.py (so installed plugins cannot change the result); filecheck is
the ``filecheck`` package, run as a program.
"""
from __future__ import annotations

import contextlib
import io
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.ir

HERE = Path(__file__).parent
FILES = sorted(HERE.glob("*.mlir"))


def run_lines(path: Path) -> list[str]:
    lines, cur = [], ""
    for raw in path.read_text().splitlines():
        s = raw.strip()
        if not s.startswith("// RUN:"):
            continue
        cur += s[len("// RUN:"):].strip()
        if cur.endswith("\\"):
            cur = cur[:-1] + " "
            continue
        lines.append(cur)
        cur = ""
    return lines


def run_opt(argv: list[str]) -> tuple[int, str, str]:
    """tritium-opt in process: (exit status, stdout, stderr)."""
    from tritium.tools.opt import main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse errors
            code = exc.code if isinstance(exc.code, int) else 2
    return code, out.getvalue(), err.getvalue()


def filecheck(check_file: Path, text: str, flags: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "filecheck", *flags, str(check_file)], input=text,
                          capture_output=True, text=True)


def run_line(path: Path, line: str) -> None:
    opt_part, bar, check_part = line.partition("|")
    assert bar, f"{path.name}: RUN line must pipe into filecheck: {line}"
    opt_args = [str(path) if a == "%s" else a for a in shlex.split(opt_part)]
    expect_failure = opt_args[0] == "not"
    if expect_failure:
        opt_args = opt_args[1:]
    opt_args = [a for a in opt_args if a != "2>&1"]
    assert opt_args[0] == "tritium-opt", f"{path.name}: RUN line must start with tritium-opt: {line}"
    code, out, err = run_opt(opt_args[1:])
    if expect_failure:
        assert code != 0, f"{path.name}: expected tritium-opt to fail, it printed:\n{out}"
        out = err
    else:
        assert code == 0, f"{path.name}: tritium-opt failed:\n{err}"
    fc = shlex.split(check_part)
    assert fc[0] == "filecheck", f"{path.name}: RUN line must pipe into filecheck: {line}"
    flags = [a for a in fc[1:] if a != "%s"]
    res = filecheck(path, out, flags)
    assert res.returncode == 0, f"{path.name}: filecheck failed\n{res.stdout}{res.stderr}\n--- output ---\n{out}"


@pytest.mark.parametrize("path", FILES, ids=[f.name for f in FILES])
def test_ir_file(path: Path) -> None:
    lines = run_lines(path)
    assert lines, f"{path.name} has no // RUN: line"
    for line in lines:
        run_line(path, line)


def test_every_core_python_pass_has_its_ir_test() -> None:
    """House style: one pass, one file, one name, one IR test."""
    from tritium.passes import PYTHON
    for name, (target, _) in PYTHON.items():
        module = target.split(":")[0].rsplit(".", 1)[1]
        assert module == name.replace("-", "_"), f"pass {name} lives in {module}.py"
        path = HERE / f"{name}.mlir"
        assert path.exists(), f"pass {name} has no IR test {path.name}"
        assert any(f"-p {name}" in line for line in run_lines(path)), f"{path.name} does not run {name}"


def test_a_wrong_check_fails() -> None:
    """The harness can fail: a CHECK that does not match is reported."""
    bad = HERE / "tt-dce.mlir"
    code, out, _ = run_opt([str(bad), "-p", "tt-dce", "--split-input-file"])
    assert code == 0
    res = filecheck(bad, out.replace('"tt.store"', '"tt.stored_elsewhere"'), [])
    assert res.returncode != 0
