"""IR tests: every ``tests/ir/*.mlir`` runs its ``// RUN:`` lines (``tritium-opt`` then ``filecheck``), through
:mod:`tritium.tools.irtest`, against the explicit plugin registry of tests/conftest.py."""
from __future__ import annotations

from pathlib import Path

import pytest

from tritium.tools.irtest import IRTestFailure, filecheck, run_ir_file, run_lines, run_opt

pytestmark = pytest.mark.ir

HERE = Path(__file__).parent
FILES = sorted(HERE.glob("*.mlir"))


@pytest.mark.parametrize("path", FILES, ids=[f.name for f in FILES])
def test_ir_file(path: Path) -> None:
    run_ir_file(path)


def test_every_core_python_pass_has_its_ir_test() -> None:
    """House style: one pass, one file, one name, one IR test."""
    from tritium.passes import PYTHON
    for name, (target, _) in PYTHON.items():
        module = target.split(":")[0].rsplit(".", 1)[1]
        assert module == name.replace("-", "_"), f"pass {name} lives in {module}.py"
        path = HERE / f"{name}.mlir"
        assert path.exists(), f"pass {name} has no IR test {path.name}"
        assert any(f"-p {name}" in line for line in run_lines(path)), f"{path.name} does not run {name}"


def test_a_wrong_check_fails(tmp_path: Path) -> None:
    """The harness can fail: output that does not match the CHECK lines is reported."""
    code, out, _ = run_opt([str(HERE / "tt-dce.mlir"), "-p", "tt-dce", "--split-input-file"])
    assert code == 0
    assert filecheck(HERE / "tt-dce.mlir", out.replace('"tt.store"', '"tt.other"')).returncode != 0
    # a file whose pass does not do what its CHECK lines say fails as a whole
    bad = tmp_path / "bad.mlir"
    bad.write_text("// RUN: tritium-opt %s -p tt-dce | filecheck %s\n// CHECK: tt.splat\n"
                   "func.func @f(%x: f32) {\n  %s = \"tt.splat\"(%x) : (f32) -> tensor<4xf32>\n  return\n}\n")
    with pytest.raises(IRTestFailure, match="filecheck failed"):
        run_ir_file(bad)
