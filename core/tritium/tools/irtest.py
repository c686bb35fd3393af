"""Running IR test files: ``// RUN: tritium-opt %s -p PASSES [flags] | filecheck %s [flags]``.

Core's tests (tests/ir) and every plugin's IR tests use this, so a pass is tested the same way wherever it
lives. ``tritium-opt`` runs in this process, against the plugin registry in effect (a test installs an
explicit one with :func:`tritium.plugins.use`); filecheck is the ``filecheck`` package, run as a program.
``not tritium-opt ...`` expects the tool to fail and checks what it wrote to stderr.
"""
from __future__ import annotations

import contextlib
import io
import shlex
import subprocess
import sys
from pathlib import Path

from .opt import main


class IRTestFailure(AssertionError):
    pass


def run_lines(path: Path) -> list[str]:
    """The RUN lines of ``path`` (a line ending in ``\\`` continues on the next RUN line)."""
    lines, cur = [], ""
    for raw in Path(path).read_text().splitlines():
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
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse errors
            code = exc.code if isinstance(exc.code, int) else 2
    return code, out.getvalue(), err.getvalue()


def filecheck(check_file: Path, text: str, flags: list[str] = ()) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "filecheck", *flags, str(check_file)], input=text,
                          capture_output=True, text=True)


def run_line(path: Path, line: str) -> None:
    name = Path(path).name
    opt_part, bar, check_part = line.partition("|")
    if not bar:
        raise IRTestFailure(f"{name}: a RUN line must pipe into filecheck: {line}")
    opt_args = [str(path) if a == "%s" else a for a in shlex.split(opt_part) if a != "2>&1"]
    expect_failure = opt_args[:1] == ["not"]
    if expect_failure:
        opt_args = opt_args[1:]
    if opt_args[:1] != ["tritium-opt"]:
        raise IRTestFailure(f"{name}: a RUN line must start with tritium-opt: {line}")
    code, out, err = run_opt(opt_args[1:])
    if expect_failure:
        if code == 0:
            raise IRTestFailure(f"{name}: expected tritium-opt to fail, it printed:\n{out}")
        out = err
    elif code != 0:
        raise IRTestFailure(f"{name}: tritium-opt failed:\n{err}")
    fc = shlex.split(check_part)
    if fc[:1] != ["filecheck"]:
        raise IRTestFailure(f"{name}: a RUN line must pipe into filecheck: {line}")
    res = filecheck(Path(path), out, [a for a in fc[1:] if a != "%s"])
    if res.returncode != 0:
        raise IRTestFailure(f"{name}: filecheck failed\n{res.stdout}{res.stderr}\n--- tritium-opt output ---\n{out}")


def run_ir_file(path: Path) -> None:
    """Run every RUN line of ``path``; raise :class:`IRTestFailure` on the first that fails."""
    lines = run_lines(Path(path))
    if not lines:
        raise IRTestFailure(f"{Path(path).name} has no // RUN: line")
    for line in lines:
        run_line(Path(path), line)
