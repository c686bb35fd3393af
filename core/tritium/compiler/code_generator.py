"""Python AST of a @jit function to tile IR.

Every expression evaluates to a ``tl.tensor`` (a value in the IR), a ``tl.constexpr`` (known while
compiling), or a plain Python object (modules, functions, dtypes). Control flow on compile-time
values is resolved here; on run-time values it becomes ``scf`` operations (see :mod:`.control_flow`).

The code generator holds the state of one function and the statements that change it (assignments,
``return``, ``assert``); expressions, calls and run-time control flow are its collaborators, each given the
generator as a :class:`~.frontend.Generator`, and each node goes to the one that handles its class.
"""
from __future__ import annotations

import ast
from typing import Any, Callable, Optional, Sequence

from .. import knobs
from .._mlir import func as func_d
from .._mlir import ir
from ..language import core as tl
from ..language.aggregate import is_aggregate
from ..language.core import CompileTimeError, constexpr, tensor, tuple_value
from ..language.device_function import DeviceFunction
from . import calls
from .call_visitor import CallVisitor
from .comprehension import Comprehensions
from .control_flow import ControlFlow, contains_return
from .errors import (UNSUPPORTED_CONSTRUCTS, CompilationError, CompileTimeAssertionFailure,
                     UnsupportedLanguageConstruct)
from .expr_visitor import _BINOPS, ExpressionVisitor
from .frontend import Generator, ReturnSignal, Visitors, wrap_python
from .kernel_args import ArgSpec, build, flat_args
from .loops import Loops


class CodeGenerator(ast.NodeVisitor):
    def __init__(self, fn: DeviceFunction, semantic: Any, module: Any, function_cache: dict, *,
                 arg_values: Sequence[Any], func_name: str, is_kernel: bool, call_stack: tuple = (),
                 options: Any = None) -> None:
        self.fn = fn
        self.semantic = semantic
        self.builder = semantic.builder
        self.module = module
        self.function_cache = function_cache
        self.arg_values = list(arg_values)
        self.func_name = func_name
        self.is_kernel = is_kernel
        self.call_stack = call_stack + (fn, )
        self.options = options
        self.lscope: dict[str, Any] = {}
        self.local_defs: dict[str, Any] = {}
        self.gscope = dict(fn.get_globals())
        self.ret_values: Optional[list[Any]] = None
        self.ret_is_tuple = False
        self.ret_fields: Optional[list[str]] = None
        self.returned = False
        self.filename = fn.filename
        self.first_line = fn.first_line
        self.src = fn.src
        self.func_op: Any = None
        #: generate called @jit functions in place (set inside the regions of tile ops)
        self.inline_calls = False
        self.last_node: Optional[ast.AST] = None
        self.expressions = ExpressionVisitor(self)
        self.calls = CallVisitor(self)
        self.control = ControlFlow(self)
        self.loops = Loops(self, self.control)
        self.comprehensions = Comprehensions(self)
        self._visitors: Visitors = {**self.expressions.visitors(), **self.calls.visitors(), **self.control.visitors(),
                                   **self.loops.visitors(), **self.comprehensions.visitors()}

    def spawn(self, fn: DeviceFunction, func_name: str) -> Generator:
        return CodeGenerator(fn, self.semantic, self.module, self.function_cache, arg_values=[], func_name=func_name,
                             is_kernel=False, call_stack=self.call_stack, options=self.options)

    # -- what the collaborators call on each other (Generator) ------------------------------------
    def binary(self, method: str, lhs: Any, rhs: Any, node: ast.AST) -> Any:
        return self.expressions.binary(method, lhs, rhs, node)

    def call(self, fn: Any, args: list[Any], kwargs: dict[str, Any], node: ast.AST) -> Any:
        return self.calls.call(fn, args, kwargs, node)

    def call_jit_function(self, fn: Any, args: Sequence[Any], kwargs: dict[str, Any], node: Any = None,
                          inline: bool = False) -> Any:
        return calls.call_jit_function(self, fn, args, kwargs, node, inline)

    def if_expression(self, node: ast.IfExp, cond: tensor) -> tensor:
        return self.control.if_expression(node, cond)

    # -- errors ------------------------------------------------------------------------------------
    def error(self, node: Optional[ast.AST], message: str, cls: type = CompilationError) -> CompilationError:
        return cls(self.fn.__name__, self.src, node, message, self.filename, self.first_line)

    def visit(self, node: Optional[ast.AST]) -> Any:
        if node is None:
            return None
        visitor = self._visitors.get(type(node))
        if visitor is not None:
            return self._visit_node(node, lambda: visitor(node))
        return self._visit_node(node, lambda: super(CodeGenerator, self).visit(node))

    def _visit_node(self, node: ast.AST, run: Callable[[], Any]) -> Any:
        last = self.last_node
        if hasattr(node, "lineno"):
            self.last_node = node
            self.builder.set_loc(self.filename, node.lineno + self.first_line - 1, node.col_offset + 1)
        try:
            return run()
        except (CompilationError, ReturnSignal):
            raise
        except Exception as exc:
            if knobs.compilation.front_end_debugging:
                raise
            err = self._as_compilation_error(node, exc)
            if isinstance(err, CompileTimeAssertionFailure):
                raise err from None  # the assertion is the whole story, as in Triton (test_err_static_assert)
            raise err from exc
        finally:
            self.last_node = last
            if last is not None and hasattr(last, "lineno"):
                self.builder.set_loc(self.filename, last.lineno + self.first_line - 1, last.col_offset + 1)

    def _as_compilation_error(self, node: ast.AST, exc: Exception) -> CompilationError:
        if isinstance(exc, CompileTimeError) and "static_assert" in str(exc):
            return self.error(node, str(exc), CompileTimeAssertionFailure)
        if isinstance(exc, (CompileTimeError, TypeError, ValueError, NameError, IndexError, KeyError,
                            ZeroDivisionError, AttributeError, NotImplementedError)):
            msg = exc.described() if isinstance(exc, CompileTimeError) else f"{type(exc).__name__}: {exc}"
            return self.error(node, msg)
        return self.error(node, f"internal compiler error ({type(exc).__name__}: {exc}); set "
                                "TRITON_FRONT_END_DEBUGGING=1 to see where, and please report it")

    def generic_visit(self, node: ast.AST) -> Any:
        name = type(node).__name__
        hint = UNSUPPORTED_CONSTRUCTS.get(name, "rewrite it with the supported subset of Python")
        raise self.error(node, f"unsupported Python construct in a kernel: {name}; {hint}",
                         UnsupportedLanguageConstruct)

    # -- entry -------------------------------------------------------------------------------------
    def generate(self, arg_types: Sequence[Any]) -> Any:
        """Build ``func.func`` for this function; ``arg_types`` are tl types (None for constexpr params)."""
        tree = self.fn.parse()
        fdef = tree.body[0]
        if self.is_kernel:
            for p in getattr(self.fn, "params", ()):
                if p.is_constexpr and p.do_not_specialize:
                    at = next((a for a in fdef.args.args if a.arg == p.name), fdef)
                    raise self.error(at, f"{p.name} marked as constexpr and listed in do_not_specialize; a "
                                         "tl.constexpr is always specialized: drop one of the two")
        return self.visit_function(fdef, arg_types)

    def visit_function(self, node: ast.FunctionDef, arg_types: Sequence[Any]) -> Any:
        b = self.builder
        flat, names = [], []
        for i, t in enumerate(arg_types):
            if isinstance(t, ArgSpec):
                parts = [f[0] for f in flat_args(t, (i, ))]
                flat += parts
                names += [self.fn.arg_names[i]] * len(parts)
            elif t is not None:
                flat.append(t)
                names.append(self.fn.arg_names[i])
        ir_args = [self.semantic.ir_type(t) for t in flat]
        with b.context, b.loc:
            ftype = ir.FunctionType.get(ir_args, [])
            with ir.InsertionPoint(self.module.body):
                fop = func_d.FuncOp(self.func_name, ftype, visibility="public" if self.is_kernel else "private")
            # arguments carry their parameter's name, so that stages print them as Triton's do (%n, not %arg1)
            entry = fop.add_entry_block([ir.Location.name(n) for n in names])
        self.func_op = fop
        params = self.fn.arg_names
        ir_args_iter = iter(entry.arguments)
        with b.at(entry):
            for name, ty, val in zip(params, arg_types, self.arg_values):
                if ty is None:
                    self.lscope[name] = val if isinstance(val, (constexpr, tuple_value)) else wrap_python(val)
                elif isinstance(ty, ArgSpec):
                    try:
                        self.lscope[name] = build(ty, ir_args_iter, self.semantic)
                    except CompileTimeError as exc:  # a host descriptor the language refuses
                        raise self.error(node, f"argument `{name}`: {exc.described()}") from None
                else:
                    self.lscope[name] = tensor(next(ir_args_iter), ty)
            try:
                self.visit_compound(node.body)
            except ReturnSignal:
                pass
            ret_handles = self._finish_returns()
            b.op("func.return", ret_handles, [])
        with b.context:
            fop.attributes["function_type"] = ir.TypeAttr.get(
                ir.FunctionType.get(ir_args, [h.type for h in ret_handles]))
        return fop

    def _finish_returns(self) -> list[Any]:
        if not self.ret_values:
            return []
        return [v.handle for v in self.ret_values if isinstance(v, tensor)]

    # -- statements ------------------------------------------------------------------------------
    def visit_compound(self, stmts: Sequence[ast.stmt]) -> None:
        for i, stmt in enumerate(stmts):
            if self.returned:
                raise self.error(stmt, "code after `return` is not supported; move it before the return")
            if isinstance(stmt, ast.If) and contains_return(stmt):
                # an early return: the rest of the body runs on the paths that do not return
                self._visit_node(stmt, lambda: self.control.visit_If(stmt, rest=stmts[i + 1:]))
                return
            self.visit(stmt)

    def visit_Module(self, node: ast.Module) -> Any:
        self.visit_compound(node.body)

    def visit_Pass(self, node: ast.Pass) -> None:
        return None

    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return None  # docstring
        if isinstance(node.value, ast.Call):
            node.value._tritium_unused = True  # type: ignore[attr-defined]  # see CallVisitor.call: must_use_result
        self.visit(node.value)

    def assign_target(self, target: ast.AST, value: Any) -> None:
        if isinstance(target, ast.Name):
            if isinstance(value, (int, float, bool)) or value is None:
                value = constexpr(value)
            self.lscope[target.id] = value
            self.local_defs[target.id] = value
            if isinstance(value, tensor):
                self.builder.name_value(value.handle, target.id)
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            if is_aggregate(value):
                raise self.error(target, f"cannot unpack an aggregate ({type(value).__name__}); read its fields by "
                                         "name")
            vals = value.values if isinstance(value, tuple_value) else (
                list(value.value) if isinstance(value, constexpr) else list(value))
            if len(vals) != len(target.elts):
                raise self.error(target, f"cannot unpack {len(vals)} values into {len(target.elts)} names")
            for t, v in zip(target.elts, vals):
                self.assign_target(t, wrap_python(v))
            return
        if isinstance(target, ast.Subscript):
            raise self.error(target, "tensors are immutable in kernels: build a new one (e.g. with tl.where) "
                                     "instead of assigning to an element")
        if isinstance(target, ast.Attribute):
            # Triton's words first; an aggregate changes through a method that runs at compile time
            raise self.error(target, f"Attribute assignment is not supported in triton (`{ast.unparse(target)} = "
                                     "...`): build a new aggregate, or change it in a method of its class that is "
                                     "not @jit (it runs while compiling and may set fields)")
        raise self.error(target, f"cannot assign to {type(target).__name__}")

    def assigned_value(self, value: Any) -> Any:
        """What a name gets from ``x = value`` without a ``tl.constexpr`` annotation: as in Triton, a number
        (even a constexpr one) becomes a scalar tensor (``acc = 0`` is an int32 tensor, so ``x_int8 + acc`` is
        int32 and ``acc.to(...)``/``acc.dtype`` work); tuples are converted element by element."""
        if isinstance(value, tuple_value):
            return value.mapped(self.assigned_value)
        raw = value.value if isinstance(value, constexpr) else value
        if type(raw) in (int, float, bool):
            return self.semantic.to_tensor(raw)
        return value

    def visit_Assign(self, node: ast.Assign) -> None:
        value = self.assigned_value(self.visit(node.value))
        for target in node.targets:
            self.assign_target(target, value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        ann = self.visit(node.annotation)
        value = self.visit(node.value) if node.value is not None else None
        if ann is tl.constexpr or (isinstance(ann, constexpr) and ann.value is tl.constexpr):
            if not isinstance(value, tensor):   # Triton binds a run-time value as it is (FlagGems relies on it)
                value = constexpr(value)
        else:
            value = self.assigned_value(value)
        self.assign_target(node.target, value)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if isinstance(node.target, ast.Attribute):
            self.assign_target(node.target, None)   # refused with the words of attribute assignment
        if not isinstance(node.target, ast.Name):
            raise self.error(node.target, "augmented assignment needs a plain name on the left")
        lhs = self.visit(ast.Name(id=node.target.id, ctx=ast.Load(), lineno=node.lineno, col_offset=node.col_offset))
        rhs = self.visit(node.value)
        self.assign_target(node.target, self.assigned_value(self.binary(_BINOPS[type(node.op)], lhs, rhs, node)))

    def visit_Return(self, node: ast.Return) -> None:
        value = self.visit(node.value) if node.value is not None else None
        if self.is_kernel and value is not None and not (isinstance(value, constexpr) and value.value is None):
            raise self.error(node, "a kernel cannot return a value; store results through a pointer argument")
        vals: list[Any]
        if value is None:
            vals = []
        elif isinstance(value, tuple_value) and not is_aggregate(value):
            vals = list(value.values)
        else:
            vals = [value]
        vals = [self.semantic.to_tensor(v) if isinstance(v, constexpr) and isinstance(v.value, (int, float, bool))
                else v for v in vals]
        self.ret_values = vals
        self.ret_is_tuple = isinstance(value, tuple_value) and not is_aggregate(value)
        self.ret_fields = getattr(value.type, "fields", None) if self.ret_is_tuple else None
        self.returned = True
        raise ReturnSignal()

    def visit_Assert(self, node: ast.Assert) -> None:
        cond = self.visit(node.test)
        msg = self.visit(node.msg) if node.msg is not None else constexpr("")
        msg = tl._unwrap(msg)
        if not isinstance(cond, tensor):
            # as Triton: even a condition known now is a device assert, left out without debug (a false one
            # fails when the kernel runs); tl.static_assert is the check that fails the compile
            cond = self.semantic.to_tensor(constexpr(bool(tl._unwrap(cond))))
        text = msg or f"Assertion `{ast.unparse(node.test)}` failed"
        self.semantic.device_assert(cond, str(text))
