"""ARCHITECTURE.md's layers, checked: no module of core/tritium imports a module of a higher layer.

Every import counts, at module level and inside functions alike (a lazy import is still a dependency: it only
moves the cycle to run time), and so does ``importlib.import_module`` of a literal name. Imports under
``if TYPE_CHECKING:`` never run and are skipped. Exceptions are few and each says why (``ALLOWED``).
"""
from __future__ import annotations

import ast
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from astwalk import runtime_nodes  # noqa: E402  (tests use importlib mode: a sibling module needs its folder)

ROOT = pathlib.Path(__file__).resolve().parents[2] / "core" / "tritium"

# The layer of each module, by the longest matching prefix of its dotted name (ARCHITECTURE.md, "Layers").
# Modules of one layer may import each other; a module may import any lower layer.
LAYERS = {
    # 1: configuration and the extension surface
    "tritium.knobs": 1,
    "tritium.knob_types": 1,     # the knob machinery that knobs.py declares its groups with
    "tritium._version": 1,        # __version__, for the compiler's cache keys and the remote cache's records
    "tritium.hookspecs": 1,
    "tritium.plugins": 1,
    "tritium.plugin_registry": 1,  # the registry class (plugins.py: which one is in effect; discovery builds one)
    "tritium.plugin_discovery": 1,
    "tritium.errors": 1,          # the TritonError base class: imports nothing
    "tritium.debug_knobs": 1,     # warnings about knobs this build cannot honour (reads knobs)
    "tritium.op_registry": 1,     # the decorator-built op tables of the lowerings (imports nothing)
    # 2: wrappers and base types
    "tritium._mlir": 2,
    "tritium.dialect": 2,
    "tritium.cache": 2,
    "tritium.cache_manifest": 2,  # an entry's manifest format, for the local and the remote tier
    "tritium.cache_safety": 2,
    "tritium.cache_remote": 2,
    "tritium.cache_redis": 2,
    "tritium.backends": 2,
    "tritium.line_info": 2,       # LLVM line tables, for the backends' LLVM IR writers
    "tritium.llvm_debug": 2,      # LLVM's debugging switches around a backend's llvmlite work
    "tritium.llvmir": 2,          # LLVM IR text, types, fp8 formats, the scalar op emitter: every LLVM backend's
    # 3: passes, and core's own plugin (which registers them)
    "tritium.passes": 3,
    "tritium.builtin_plugin": 3,
    # 4, 5: the language, then the frontend and stages
    "tritium.language": 4,
    "tritium.compiler": 5,
    # 6: runtime, interpreter, the package root
    "tritium.runtime": 6,
    "tritium.interpreter": 6,
    "tritium": 6,
    # Triton's import paths for runtime helpers: the host-side TensorDescriptor (an argument type the runtime
    # specializes on and the interpreter reads) and triton.testing's benchmarking (do_bench, perf_report),
    # which the autotuner times configs with. They are runtime code in a folder named after Triton's.
    "tritium.tools.tensor_descriptor": 6,
    "tritium.testing": 6,
    # 7: tools, the GPU lowering library that GPU backends use, and the test kits that run kernels
    "tritium.tools": 7,
    "tritium.gpu": 7,
    "tritium.testing.fuzz": 7,
    "tritium.testing.conformance": 7,
    "tritium.testing.pytest_plugin": 7,
}

# (importer prefix, imported prefix): why this upward import stays.
# Each is Triton's public API reaching up by design.
ALLOWED = {
    ("tritium.compiler.compiler", "tritium.runtime.driver"):
        "compile(src, target=None) compiles for the active driver's target, as Triton's compile() does",
    ("tritium.compiler.kernel", "tritium.runtime"):
        "CompiledKernel is Triton's launchable object: its launch API (kernel[grid](*args), run, launcher, "
        "launch_metadata) is the runtime's (driver.active.make_launcher, compiled_launch.run_compiled, triton_run); "
        "none of those modules imports the compiler (test_import_cycles)",
    ("tritium.language.target_info", "tritium.runtime.driver"):
        "tl.target_info.current_target() is the active driver's target (Triton's); has_capability asks it "
        "only outside a compilation",
    ("tritium.backends.driver", "tritium.testing"):
        "DriverBase.get_benchmarker() returns testing.do_bench (Triton's driver API)",
}


def layer_of(name: str) -> int:
    parts = name.split(".")
    for n in range(len(parts), 0, -1):
        prefix = ".".join(parts[:n])
        if prefix in LAYERS:
            return LAYERS[prefix]
    raise AssertionError(f"{name}: no layer in LAYERS (add it, and to ARCHITECTURE.md)")


def module_name(path: pathlib.Path) -> tuple[str, bool]:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts.pop()
    return ".".join(parts), is_package


def imports_of(path: pathlib.Path) -> list[tuple[str, int]]:
    """(imported module, line) for every tritium import in the file."""
    name, is_package = module_name(path)
    package = name if is_package else name.rpartition(".")[0]
    found = []
    for node in runtime_nodes(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                # ``from tritium import knobs`` imports the module tritium.knobs, not the package root
                sub = f"{target}.{alias.name}"
                is_module = (ROOT.parent / (sub.replace(".", "/") + ".py")).exists() or (
                    ROOT.parent / sub.replace(".", "/") / "__init__.py").exists()
                found.append((sub if is_module else target, node.lineno))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "import_module" and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            found.append((node.args[0].value, node.lineno))
    return [(t, line) for t, line in found if t == "tritium" or t.startswith("tritium.")]


def _allowed(importer: str, imported: str) -> bool:
    def covers(prefix, name):
        return name == prefix or name.startswith(prefix + ".")
    return any(covers(a, importer) and covers(b, imported) for a, b in ALLOWED)


def upward_imports() -> list[str]:
    bad = []
    for path in sorted(ROOT.rglob("*.py")):
        importer, _ = module_name(path)
        mine = layer_of(importer)
        for imported, line in imports_of(path):
            theirs = layer_of(imported)
            if theirs > mine and not _allowed(importer, imported):
                bad.append(f"{path.relative_to(ROOT.parent)}:{line}: {importer} (layer {mine}) imports "
                           f"{imported} (layer {theirs})")
    return bad


def test_no_upward_imports():
    bad = upward_imports()
    assert not bad, "upward imports (see ARCHITECTURE.md, Layers):\n" + "\n".join(bad)


def test_allow_list_is_not_stale():
    """Every exception still matches an import, so that a fixed one is taken off the list."""
    used = set()
    for path in sorted(ROOT.rglob("*.py")):
        importer, _ = module_name(path)
        for imported, _line in imports_of(path):
            if layer_of(imported) > layer_of(importer):
                used |= {(a, b) for a, b in ALLOWED
                         if (importer == a or importer.startswith(a + "."))
                         and (imported == b or imported.startswith(b + "."))}
    assert set(ALLOWED) == used, f"exceptions that match no import: {set(ALLOWED) - used}"


def test_only_the_mlir_wrapper_imports_mlir():
    """ARCHITECTURE.md: ``_mlir.py`` is the only importer of the MLIR bindings (private modules included)."""
    bad = []
    for path in sorted(ROOT.rglob("*.py")):
        if path == ROOT / "_mlir.py":
            continue
        for node in runtime_nodes(ast.parse(path.read_text(), str(path))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            bad += [f"{path.relative_to(ROOT.parent)}:{node.lineno}: {n}" for n in names
                    if n == "mlir" or n.startswith("mlir.")]
    assert not bad, "import MLIR through tritium._mlir:\n" + "\n".join(bad)


def test_checker_sees_function_level_imports(tmp_path):
    """The checker itself: an import inside a function counts, one under TYPE_CHECKING does not."""
    pkg = tmp_path / "tritium"
    (pkg / "runtime").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "runtime" / "__init__.py").write_text("")
    (pkg / "knobs.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from .runtime import jit\n"
        "def f():\n    from tritium import runtime\n")
    global ROOT
    saved, ROOT = ROOT, pkg
    try:
        assert imports_of(pkg / "knobs.py") == [("tritium.runtime", 5)]
    finally:
        ROOT = saved
