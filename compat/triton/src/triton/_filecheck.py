"""Triton's FileCheck helpers for frontend tests (``triton._filecheck``), on tritium.

``run_parser`` runs tritium's frontend on a kernel for the given arguments (bound and specialized as a launch
would) and returns the module it builds; ``run_filecheck`` matches text against ``CHECK`` lines with the
``filecheck`` package (a Python clone of LLVM's FileCheck, which tritium's own IR tests use); ``filecheck_test``
wraps a kernel into a test that checks its IR against the ``CHECK`` comments in its own source.

The IR is tritium's tile IR, printed without locations: ``tt`` ops in MLIR's generic form
(``"tt.make_range"() {...}``), a kernel's arguments under their parameters' names (``%X``, as Triton's), called
@jit functions as ``func.call``/``func.func`` named ``<name>__<n>``. CHECK lines written against Triton's printer
(``tt.make_range {end = 4 ...}``, ``tt.call``, Triton's mangled callee names) do not match it; the helpers'
behaviour (what compiles, what is refused, the matching) is Triton's.
"""
from __future__ import annotations

import functools
import inspect
import os
import subprocess
import sys
import tempfile
from typing import Any, Optional

from tritium.compiler import ASTSource
from tritium.compiler.compiler import make_backend
from tritium.runtime.driver import driver
from tritium.runtime.jit import JITFunction
from tritium.runtime.signature import compile_inputs
from tritium.runtime.specialize import make_binder

from ._C.libtriton import ir

#: Triton parses for a stub GPU target; the frontend here does not depend on one, so the active driver's is used
stub_target: Optional[Any] = None


class MatchError(ValueError):

    def __init__(self, message: str, module_str: str) -> None:
        super().__init__(message)
        self.module_str = module_str

    def __str__(self) -> str:
        return f"{super().__str__()}\n{self.module_str}"


def run_filecheck(name: str, module_str: str, check_template: str) -> None:
    """Match ``module_str`` against the CHECK lines of ``check_template``; ValueError with FileCheck's report if
    they do not match."""
    with tempfile.TemporaryDirectory() as tempdir:
        module_path = os.path.join(tempdir, "module")
        expected_path = os.path.join(tempdir, "expected")
        with open(module_path, "w") as f:
            f.write(module_str)
        with open(expected_path, "w") as f:
            f.write(check_template)
        proc = subprocess.run([sys.executable, "-m", "filecheck", expected_path, "--input-file", module_path],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if proc.returncode != 0:
            raise ValueError(f"{name}: FileCheck failed\n" + proc.stdout.decode(errors="replace"))


def run_parser(kernel_fn: JITFunction, args: tuple = (), kwargs: Optional[dict] = None,
               target: Optional[Any] = None) -> Any:
    """The module the frontend builds for ``kernel_fn`` launched with ``args``/``kwargs`` (a
    ``triton._C.libtriton.ir.module``); frontend errors raise as they would at launch (CompilationError)."""
    kwargs = dict(kwargs or {})
    kwargs.setdefault("sanitize_overflow", False)
    target = target or stub_target or driver.active.get_current_target()
    backend = make_backend(target)
    key, _, bound, options = make_binder(kernel_fn)(*args, **kwargs)
    signature, constexprs, attrs, _ = compile_inputs(kernel_fn, key, bound)
    parsed = backend.parse_options(dict(options))
    context = ir.context()
    ir.load_dialects(context)
    return ASTSource(kernel_fn, signature, constexprs, attrs).make_ir(target, parsed, None, None, context)


def module_text(module: Any) -> str:
    """The module's text without locations (Triton's ``module.str_nodebug()``)."""
    mlir_module = getattr(module, "_module", module)
    return mlir_module.operation.get_asm(enable_debug_info=False, use_name_loc_as_prefix=True)


def run_filecheck_test(kernel_fn: JITFunction, args: tuple = (), kwargs: Optional[dict] = None) -> None:
    assert isinstance(kernel_fn, JITFunction)
    check_template = inspect.getsource(kernel_fn.fn)
    if check_template is None:
        raise ValueError("kernel function must have a docstring with FileCheck template")
    run_filecheck("placeholder", module_text(run_parser(kernel_fn, args=args, kwargs=kwargs)), check_template)


def filecheck_test(fn: JITFunction) -> Any:

    @functools.wraps(fn)
    def test_fn() -> None:
        run_filecheck_test(fn)

    return test_fn
