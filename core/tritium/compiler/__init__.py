"""Compilation: ``tritium.compiler.ASTSource``, ``tritium.compile`` and the errors users see."""
from .compiler import ASTSource, IRSource, compile, make_backend  # noqa: F401
from .errors import CompilationError, CompileTimeAssertionFailure, OutOfResources  # noqa: F401
from .kernel import CompiledKernel  # noqa: F401
