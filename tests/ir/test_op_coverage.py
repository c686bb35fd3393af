"""Every op the frontend can emit is lowered, covered by a generic family, or refused with a reason, by every
lowering: the CPU backend, the GPU lowering and the interpreter (their ``OpTable``s, tritium/op_registry.py).

Marked ``ir``: importing the GPU and CPU handler modules loads the MLIR bindings (they import tritium._mlir at
module level). No GPU is needed: the GPU lowering runs on the host emulator.
"""
from __future__ import annotations

import importlib
import re
from pathlib import Path

import numpy as np
import pytest

import tritium
import tritium.language as tl
from tritium.dialect.ops import OPS

pytestmark = pytest.mark.ir

ROOT = Path(__file__).resolve().parents[2]

#: lowering -> (module declaring its table, the table's name, the module whose import registers every handler)
LOWERINGS = {
    "cpu": ("tritium_cpu.codegen.optable", "CPU_OPS", "tritium_cpu.codegen.lower"),
    "gpu": ("tritium.gpu.lower.optable", "GPU_OPS", "tritium.gpu.lower"),
    "interpreter": ("tritium.interpreter.optable", "INTERPRETER_OPS", "tritium.interpreter.launcher"),
}

#: ops outside ``tt`` that the frontend emits and no generic family is meant to cover: each lowering names them
STRUCTURAL = ("arith.constant", "scf.for", "scf.if", "scf.while", "func.return")

#: ops outside ``tt`` the frontend writes that never reach a lowering's dispatch, and why
NOT_DISPATCHED = {
    "scf.yield": "terminator: read by the scf.for / scf.if / scf.while that owns its region",
    "scf.condition": "terminator of scf.while's first region: read by scf.while",
    "gpu.yield": "terminator of the regions of tt.reduce, tt.scan, tt.map_elementwise: read by that op",
    "func.call": "inlined by tt-inline before lowering (the backends' make_ttir drop no_inline first)",
    "func.func": "the kernel itself, not an op of its body",
    "scf.execute_region": "scratch op the frontend builds and erases while reading a while loop's body",
}

FRONTEND = [ROOT / "core/tritium/compiler", ROOT / "core/tritium/language"]


def table(lowering: str):
    module, name, fill = LOWERINGS[lowering]
    if lowering == "cpu":
        try:
            importlib.import_module(module)
        except ImportError as exc:
            pytest.skip(f"{module} (the CPU backend's op table) is not importable: {exc}")
    importlib.import_module(fill)
    return getattr(importlib.import_module(module), name)


def dialect_ops() -> list[str]:
    return [f"tt.{name}" for name in OPS] + list(STRUCTURAL)


def uncovered(t, names) -> list[str]:
    """The names ``t`` neither handles (a handler or a family) nor refuses with a reason."""
    return [n for n in names if t.handles(n) is None and not (t.refusal(n) or "").strip()]


def frontend_op_names() -> set[str]:
    """Op names written as string literals in the frontend (compiler/ and language/)."""
    found: set[str] = set()
    for folder in FRONTEND:
        for path in folder.rglob("*.py"):
            found |= set(re.findall(r'"((?:arith|math|scf|func|gpu|cf|ub|index)\.[a-z0-9_]+)"', path.read_text()))
    return found


@pytest.mark.parametrize("lowering", sorted(LOWERINGS))
def test_every_dialect_op_is_lowered_or_refused(lowering):
    t = table(lowering)
    missing = uncovered(t, dialect_ops())
    _, name, _ = LOWERINGS[lowering]
    assert not missing, (
        f"{t.lowering} neither lowers nor refuses {', '.join(missing)}: put @{name}.lowers(\"<op>\") on the "
        f"handler, or {name}.refuse(\"<op>\", \"why, and what to do instead\") (ARCHITECTURE.md, 'Add a tl op')")


@pytest.mark.parametrize("lowering", sorted(LOWERINGS))
def test_refusals_say_why_and_are_not_lowered_after_all(lowering):
    t = table(lowering)
    for name, reason in t.refusals.items():
        assert reason.strip(), f"{t.lowering} refuses {name} without a reason"
        assert t.handles(name) is None, f"{t.lowering} refuses {name} but also covers it: {t.handles(name)}"


@pytest.mark.parametrize("lowering", sorted(LOWERINGS))
def test_a_new_op_without_handler_is_reported(lowering):
    """Families must not swallow ops they do not know: a new tt op is missing until someone handles it."""
    t = table(lowering)
    assert uncovered(t, ["tt.not_declared_yet"]) == ["tt.not_declared_yet"]


@pytest.mark.parametrize("lowering", sorted(LOWERINGS))
def test_frontend_arith_and_math_ops_are_covered(lowering):
    t = table(lowering)
    names = sorted(n for n in frontend_op_names() if n.startswith(("arith.", "math.")))
    assert len(names) > 30, names     # the scan finds the frontend's op names
    missing = uncovered(t, names)
    assert not missing, f"{t.lowering} has no handler or family for {', '.join(missing)}, which the frontend emits"


def test_every_other_op_the_frontend_writes_is_accounted_for():
    names = {n for n in frontend_op_names() if not n.startswith(("arith.", "math."))}
    assert {"scf.for", "scf.yield", "func.return"} <= names     # the scan sees them
    unknown = names - set(STRUCTURAL) - set(NOT_DISPATCHED)
    assert not unknown, (f"the frontend emits {', '.join(sorted(unknown))}: add each to STRUCTURAL (and handle it "
                         "in every lowering) or to NOT_DISPATCHED with the reason no lowering sees it")


# -- the error for a refused op names the kernel and its line ---------------------------------------------------
@tl.core.builtin
def _raw_dot_scaled(a, b, c, _semantic=None):
    """Emits tt.dot_scaled itself (the frontend never does: tl.dot_scaled is emulated with ordinary ops)."""
    op = _semantic.builder.tt("dot_scaled", {"a": a.handle, "b": b.handle, "c": c.handle}, [_semantic.ir_type(c.type)])
    return tl.core.tensor(op.result, c.type)


@tritium.jit
def _scaled_kernel(x_ptr, out_ptr):
    offs = tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :]
    x = tl.load(x_ptr + offs)
    d = _raw_dot_scaled(x, x, x)
    tl.store(out_ptr + offs, d)


DOT_LINE = _scaled_kernel.first_line + 3     # the line of `d = _raw_dot_scaled(x, x, x)`


def _check_message(text: str) -> None:
    assert "_scaled_kernel" in text, text
    assert f"{Path(__file__).name}:{DOT_LINE}" in text, text
    assert "tt.dot_scaled" in text and "language/scaled.py" in text, text   # the refusal's reason
    lines = text.splitlines()
    i = next(k for k, line in enumerate(lines) if "d = _raw_dot_scaled(x, x, x)" in line)
    assert lines[i + 1].strip().startswith("^") and lines[i + 1].index("^") == lines[i].index("_raw"), text


@pytest.mark.parametrize("variables", [False, True], ids=["plain", "named-values"])
def test_gpu_refusal_names_the_kernel_and_line(isolated_tritium, variables):
    """With LLVM_EXTRACT_DI_LOCAL_VARIABLES the op's location is wrapped in its value's name (loc("d"(...)))."""
    from tritium import knobs, plugins
    from tritium.gpu.lower import LoweringError
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "gpu-emu": "tritium.gpu.emulator"})
    x = np.ones((16, 16), np.float32)
    with plugins.use(reg), knobs.runtime.scope(), knobs.compilation.scope():
        knobs.runtime.default_backend = "gpu-emu"
        knobs.compilation.dump_ir_extract_di_local_variables = variables
        with pytest.raises(LoweringError) as info:
            _scaled_kernel[(1, )](x, np.empty_like(x))
    _check_message(str(info.value))


def test_cpu_refusal_names_the_kernel_and_line(isolated_tritium):
    table("cpu")
    from tritium_cpu.codegen.opinfo import LoweringError
    x = np.ones((16, 16), np.float32)
    with pytest.raises(LoweringError) as info:
        _scaled_kernel[(1, )](x, np.empty_like(x))
    _check_message(str(info.value))


def test_interpreter_refusal_names_the_kernel_and_line(isolated_tritium):
    from tritium import knobs
    from tritium.compiler.errors import CompilationError
    x = np.ones((16, 16), np.float32)
    with knobs.runtime.scope():
        knobs.runtime.interpret = True
        with pytest.raises(CompilationError) as info:
            _scaled_kernel[(1, )](x, np.empty_like(x))
    _check_message(str(info.value))


# -- the guide ----------------------------------------------------------------------------------------------------
def guide_section() -> str:
    text = (ROOT / "ARCHITECTURE.md").read_text()
    m = re.search(r"^## Add a tl op\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert m, "ARCHITECTURE.md has no '## Add a tl op' section"
    return m.group(1)


def test_the_guide_names_paths_that_exist():
    section = guide_section()
    paths = [p for p in re.findall(r"`([^`\s]+)`", section) if "/" in p and re.search(r"\.(py|md)$|/$", p)]
    assert len(paths) >= 8, paths
    missing = [p for p in paths if not (ROOT / p).exists()]
    assert not missing, f"ARCHITECTURE.md 'Add a tl op' names paths that do not exist: {missing}"
    # every lowering's table is in the guide, and so is this test
    for module, _, _ in LOWERINGS.values():
        rel = module.replace(".", "/") + ".py"
        assert any(p.endswith(rel) for p in paths), f"the guide does not name {rel}"
    assert "tests/ir/test_op_coverage.py" in paths
