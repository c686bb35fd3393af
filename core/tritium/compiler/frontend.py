"""What the parts of the frontend share: the :class:`Generator` interface they call each other through.

The code generator (:mod:`.code_generator`) owns the state of the function being generated and dispatches each
AST node to the collaborator that handles it: expressions (:mod:`.expr_visitor`), calls (:mod:`.call_visitor`,
:mod:`.calls`) and run-time control flow (:mod:`.control_flow`). A collaborator holds the generator as a
:class:`Generator` and reaches the others only through the methods declared here.
"""
from __future__ import annotations

import ast
import builtins
from typing import Any, Callable, Optional, Protocol, Sequence

from ..language import core as tl
from ..language.core import constexpr, tensor, tuple_value
from ..language.device_function import DeviceFunction
from .errors import CompilationError


class ReturnSignal(Exception):
    """Unwinds the visit of a function body at ``return`` (the returned values are on the generator)."""


def wrap_python(v: Any) -> Any:
    """A plain Python value as a compile-time value: numbers, strings, None and dtypes become constexprs,
    tuples tuple_values; anything else (tensors, modules, functions) stays as it is."""
    if isinstance(v, (int, float, bool, str, type(None), tl.dtype)) and not isinstance(v, constexpr):
        return constexpr(v)
    if isinstance(v, builtins.tuple) and not isinstance(v, tuple_value):
        return tuple_value([wrap_python(x) for x in v])
    return v


class Generator(Protocol):
    """One function being generated (a kernel, a called @jit function, or one inlined into a tile op's region)."""

    fn: DeviceFunction
    semantic: Any               # language.semantic.Semantic: type checking, talks to the builder
    builder: Any                # compiler.builder.Builder: creates MLIR ops
    module: Any                 # the MLIR module every generated function goes into
    function_cache: dict        # (callee, argument specs) -> (func name, return spec), shared by the whole kernel
    call_stack: tuple           # the @jit functions on the way here, this one last
    options: Any
    func_name: str
    is_kernel: bool
    src: Optional[str]
    filename: str
    first_line: int
    #: names visible in the body: parameters and assigned variables (swapped while a block is generated)
    lscope: dict[str, Any]
    #: names assigned in the block being generated (what a branch or loop body changes)
    local_defs: dict[str, Any]
    gscope: dict[str, Any]
    #: what ``return`` returned (None: no return yet), whether it returned a tuple, whether it has returned
    ret_values: Optional[list[Any]]
    ret_is_tuple: bool
    #: the field names of a returned namedtuple
    ret_fields: Optional[list[str]]
    returned: bool
    #: generate called @jit functions in place (set inside the regions of tile ops)
    inline_calls: bool
    #: the innermost node being visited that has a source line (builtins' calls report errors there)
    last_node: Optional[ast.AST]

    def visit(self, node: Optional[ast.AST]) -> Any: ...

    def visit_compound(self, stmts: Sequence[ast.stmt]) -> None: ...

    def error(self, node: Optional[ast.AST], message: str, cls: type = CompilationError) -> CompilationError: ...

    def assign_target(self, target: ast.AST, value: Any) -> None: ...

    def binary(self, method: str, lhs: Any, rhs: Any, node: ast.AST) -> Any: ...

    def call(self, fn: Any, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any: ...

    def call_jit_function(self, fn: Any, args: Sequence[Any], kwargs: dict[str, Any], node: Any = None,
                          inline: bool = False) -> Any: ...

    def if_expression(self, node: ast.IfExp, cond: tensor) -> tensor: ...

    def spawn(self, fn: DeviceFunction, func_name: str) -> "Generator":
        """A generator for a @jit function this one calls (same module, semantic, cache; call stack + fn)."""
        ...


#: a collaborator's table: AST node class -> the method that visits it
Visitors = dict[type, Callable[..., Any]]
