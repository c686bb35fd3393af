"""The README's two walkthroughs, run as written: "Write an out-of-tree pass in 30 lines" and "Integrate a
backend". Every code block whose first line names a file is written to a temporary folder, and every
``$ `` command of the section runs there in a fresh process (``pip install .`` installs into a temporary
target folder, so nothing is left installed). Only the plugins a section is about, plus core and the CPU
backend, may load, whatever else is installed."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
FILE_LINE = re.compile(r"^(?:#|//) ([\w.-]+\.(?:py|mlir|toml))\b")


def section(title: str) -> str:
    text = README.read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else len(text)]


def blocks(text: str) -> list[tuple[str, str]]:
    return re.findall(r"```(\w*)\n(.*?)```", text, re.S)


def files_of(text: str) -> dict[str, str]:
    out = {}
    for _, body in blocks(text):
        m = FILE_LINE.match(body)
        if m:
            out[m.group(1)] = body
    return out


def commands_of(text: str) -> list[str]:
    return [line[2:].split("  #")[0].strip() for lang, body in blocks(text) if lang == "console"
            for line in body.splitlines() if line.startswith("$ ")]


def run_section(title: str, tmp_path: Path, enable: str) -> list[tuple[str, subprocess.CompletedProcess]]:
    text = section(title)
    for name, body in files_of(text).items():
        (tmp_path / name).write_text(body)
    env = {k: v for k, v in os.environ.items()
           if k not in ("TRITIUM_PLUGIN_PATHS", "TRITON_PLUGIN_PATHS", "PYTHONPATH", "TRITIUM_PLUGINS_DISABLE")}
    env.update(TRITIUM_HOME=str(tmp_path / "home"), TRITIUM_PLUGINS_ENABLE=enable,
               PATH=os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", ""))
    results = []
    for cmd in commands_of(text):
        if cmd == "pip install .":
            site = tmp_path / "site"
            cmd = f"{sys.executable} -m pip install -q --no-deps --no-build-isolation --target {site} ."
            env["PYTHONPATH"] = str(site)
        res = subprocess.run(["bash", "-c", cmd], cwd=tmp_path, env=env, capture_output=True, text=True)
        assert res.returncode == 0, f"README command failed: {cmd}\n{res.stdout}\n{res.stderr}"
        results.append((cmd, res))
    return results


def test_the_pass_walkthrough_is_30_lines():
    code = files_of(section("Write an out-of-tree pass in 30 lines"))["div_to_mul.py"]
    assert len([line for line in code.splitlines() if line.strip()]) <= 30


@pytest.mark.slow
def test_hook_passes_and_pipeline_walkthrough_runs_as_written(tmp_path):
    results = dict(run_section("Write an out-of-tree pass in 30 lines", tmp_path, "core,cpu,div_to_mul"))
    listing = next(r.stdout for c, r in results.items() if c.endswith("tritium plugins") and "DISABLE" not in c)
    assert "div_to_mul" in listing and "tt-combine, div-to-mul" in listing
    opt = next(r.stdout for c, r in results.items() if "tritium-opt" in c)
    assert "arith.mulf" in opt and "arith.divf" not in opt
    disabled = next(r.stdout for c, r in results.items() if "DISABLE" in c)
    assert "div-to-mul" not in disabled
    assert (tmp_path / "site" / "div_to_mul.py").exists()  # the pyproject really made a distribution
    # the IR test of the walkthrough, through the same runner as core's IR tests
    env = {**os.environ, "TRITIUM_PLUGIN_PATHS": str(tmp_path / "div_to_mul.py"),
           "TRITIUM_PLUGINS_ENABLE": "core,cpu,div_to_mul", "TRITIUM_HOME": str(tmp_path / "home")}
    # (elsewhere than the project folder, whose build left an egg-info that would register the plugin twice)
    (tmp_path / "ir").mkdir()
    (tmp_path / "ir" / "div-to-mul.mlir").write_text((tmp_path / "div-to-mul.mlir").read_text())
    res = subprocess.run([sys.executable, "-c", "from tritium.tools.irtest import run_ir_file; "
                          "run_ir_file('div-to-mul.mlir')"], cwd=tmp_path / "ir", env=env, capture_output=True,
                         text=True)
    assert res.returncode == 0, res.stderr


@pytest.mark.slow
def test_hook_backends_walkthrough_backend_runs_kernels(tmp_path):
    results = dict(run_section("Integrate a backend", tmp_path, "core,cpu,toy_backend"))
    listing = next(r.stdout for c, r in results.items() if c.endswith("tritium plugins"))
    assert "toy  from plugin toy_backend" in listing and "priority 10" in listing
    assert "toy: ttir -> llir -> obj" in listing
