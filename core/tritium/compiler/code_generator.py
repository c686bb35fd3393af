"""Python AST of a @jit function to tile IR.

Every expression evaluates to a ``tl.tensor`` (a value in the IR), a ``tl.constexpr`` (known while
compiling), or a plain Python object (modules, functions, dtypes). Control flow on compile-time
values is resolved here; on run-time values it becomes ``scf`` operations (see :mod:`.control_flow`).
"""
from __future__ import annotations

import ast
import builtins
import types
from typing import Any, Callable, Optional, Sequence

from .. import knobs
from ..language import core as tl
from ..language.core import CompileTimeError, constexpr, tensor, tuple_value
from .call_visitor import _STATIC_BUILTINS, CallMixin, _is_jit, _wrap_python
from .control_flow import ControlFlowMixin
from .errors import CompilationError, CompileTimeAssertionFailure, UnsupportedLanguageConstruct

_BINOPS = {
    ast.Add: "__add__", ast.Sub: "__sub__", ast.Mult: "__mul__", ast.Div: "__truediv__", ast.FloorDiv: "__floordiv__",
    ast.Mod: "__mod__", ast.Pow: "__pow__", ast.LShift: "__lshift__", ast.RShift: "__rshift__", ast.BitAnd: "__and__",
    ast.BitOr: "__or__", ast.BitXor: "__xor__",
}
_CMPOPS = {
    ast.Eq: "__eq__", ast.NotEq: "__ne__", ast.Lt: "__lt__", ast.LtE: "__le__", ast.Gt: "__gt__", ast.GtE: "__ge__",
}
_REFLECT = {"__lt__": "__gt__", "__le__": "__ge__", "__gt__": "__lt__", "__ge__": "__le__", "__eq__": "__eq__",
            "__ne__": "__ne__"}


class ReturnSignal(Exception):
    pass


class CodeGenerator(ast.NodeVisitor, ControlFlowMixin, CallMixin):
    def __init__(self, fn: Any, semantic: Any, module: Any, function_cache: dict, *, arg_values: Sequence[Any],
                 func_name: str, is_kernel: bool, call_stack: tuple = (), options: Any = None) -> None:
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
        self.ret_types: Optional[list[Any]] = None
        self.returned = False
        self.filename = fn.filename
        self.first_line = fn.first_line
        self.src = fn.src
        self.func_op: Any = None
        #: generate called @jit functions in place (set inside the regions of tile ops)
        self.inline_calls = False
        self._last_node: Optional[ast.AST] = None

    # -- errors ------------------------------------------------------------------------------------
    def error(self, node: Optional[ast.AST], message: str, cls: type = CompilationError) -> CompilationError:
        return cls(self.fn.__name__, self.src, node, message, self.filename, self.first_line)

    def visit(self, node: ast.AST) -> Any:
        if node is None:
            return None
        return self._visit_node(node, lambda: super(CodeGenerator, self).visit(node))

    def _visit_node(self, node: ast.AST, run: Callable[[], Any]) -> Any:
        last = self._last_node
        if hasattr(node, "lineno"):
            self._last_node = node
            self.builder.set_loc(self.filename, node.lineno + self.first_line - 1, node.col_offset + 1)
        try:
            return run()
        except (CompilationError, ReturnSignal):
            raise
        except Exception as exc:
            if knobs.compilation.front_end_debugging:
                raise
            raise self._as_compilation_error(node, exc) from exc
        finally:
            self._last_node = last
            if last is not None and hasattr(last, "lineno"):
                self.builder.set_loc(self.filename, last.lineno + self.first_line - 1, last.col_offset + 1)

    def _as_compilation_error(self, node: ast.AST, exc: Exception) -> CompilationError:
        if isinstance(exc, CompileTimeError) and "static_assert" in str(exc):
            return self.error(node, str(exc), CompileTimeAssertionFailure)
        if isinstance(exc, (CompileTimeError, TypeError, ValueError, NameError, IndexError, KeyError,
                            ZeroDivisionError, AttributeError, NotImplementedError)):
            msg = str(exc) if isinstance(exc, CompileTimeError) else f"{type(exc).__name__}: {exc}"
            return self.error(node, msg)
        return self.error(node, f"internal compiler error ({type(exc).__name__}: {exc}); set "
                                "TRITON_FRONT_END_DEBUGGING=1 to see where, and please report it")

    def generic_visit(self, node: ast.AST) -> Any:
        name = type(node).__name__
        hints = {
            "Lambda": "define a @triton.jit function instead",
            "ListComp": "use tl.static_range and build values explicitly",
            "GeneratorExp": "use tl.static_range",
            "DictComp": "dictionaries are not supported in kernels",
            "SetComp": "sets are not supported in kernels",
            "Try": "kernels cannot catch exceptions; check conditions with tl.device_assert",
            "With": "`with` blocks are not supported in kernels",
            "Raise": "use tl.static_assert (compile time) or tl.device_assert (run time)",
            "Global": "kernels cannot rebind globals",
            "Nonlocal": "kernels cannot rebind enclosing variables",
            "Delete": "`del` is not supported in kernels",
            "Dict": "dictionaries are not supported in kernels",
            "Set": "sets are not supported in kernels",
            "Await": "kernels are not coroutines",
            "Yield": "kernels are not generators",
            "NamedExpr": "assign on its own line instead of using :=",
            "ClassDef": "classes cannot be defined inside kernels",
            "FunctionDef": "define helper functions at module level with @triton.jit",
            "Match": "use if/elif",
            "Break": "`break` is not supported; restructure the loop condition (while loops work)",
            "Continue": "`continue` is not supported; guard the rest of the body with an if",
            "Starred": "star-unpacking is only supported in calls",
        }
        hint = hints.get(name, "rewrite it with the supported subset of Python")
        raise self.error(node, f"unsupported Python construct in a kernel: {name}; {hint}",
                         UnsupportedLanguageConstruct)

    # -- entry -------------------------------------------------------------------------------------
    def generate(self, arg_types: Sequence[Any]) -> Any:
        """Build ``func.func`` for this function; ``arg_types`` are tl types (None for constexpr params)."""
        tree = self.fn.parse()
        fdef = tree.body[0]
        return self.visit_function(fdef, arg_types)

    def visit_function(self, node: ast.FunctionDef, arg_types: Sequence[Any]) -> Any:
        from ..language.core import tensor as T
        b = self.builder
        ir_args = [self.semantic.ir_type(t) for t in arg_types if t is not None]
        from mlir.dialects import func as func_d  # noqa: lazy, the bindings are loaded already here
        from .._mlir import ir
        with b.context, b.loc:
            ftype = ir.FunctionType.get(ir_args, [])
            with ir.InsertionPoint(self.module.body):
                fop = func_d.FuncOp(self.func_name, ftype, visibility="public" if self.is_kernel else "private")
            entry = fop.add_entry_block()
        self.func_op = fop
        params = self.fn.arg_names
        ir_i = 0
        for name, ty, val in zip(params, arg_types, self.arg_values):
            if ty is None:
                self.lscope[name] = val if isinstance(val, (constexpr, tuple_value)) else _wrap_python(val)
            else:
                self.lscope[name] = T(entry.arguments[ir_i], ty)
                ir_i += 1
        with b.at(entry):
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
        from .control_flow import contains_return
        for i, stmt in enumerate(stmts):
            if self.returned:
                raise self.error(stmt, "code after `return` is not supported; move it before the return")
            if isinstance(stmt, ast.If) and contains_return(stmt):
                # an early return: the rest of the body runs on the paths that do not return
                self._visit_node(stmt, lambda: self.visit_If(stmt, rest=stmts[i + 1:]))
                return
            self.visit(stmt)

    def visit_Module(self, node: ast.Module) -> Any:
        self.visit_compound(node.body)

    def visit_Pass(self, node: ast.Pass) -> None:
        return None

    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return None  # docstring
        self.visit(node.value)

    def _assign_target(self, target: ast.AST, value: Any) -> None:
        if isinstance(target, ast.Name):
            if isinstance(value, (int, float, bool)) or value is None:
                value = constexpr(value)
            self.lscope[target.id] = value
            self.local_defs[target.id] = value
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            vals = value.values if isinstance(value, tuple_value) else (
                list(value.value) if isinstance(value, constexpr) else list(value))
            if len(vals) != len(target.elts):
                raise self.error(target, f"cannot unpack {len(vals)} values into {len(target.elts)} names")
            for t, v in zip(target.elts, vals):
                self._assign_target(t, _wrap_python(v))
            return
        if isinstance(target, ast.Subscript):
            raise self.error(target, "tensors are immutable in kernels: build a new one (e.g. with tl.where) "
                                     "instead of assigning to an element")
        raise self.error(target, f"cannot assign to {type(target).__name__}")

    def visit_Assign(self, node: ast.Assign) -> None:
        value = self.visit(node.value)
        for target in node.targets:
            self._assign_target(target, value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        ann = self.visit(node.annotation)
        value = self.visit(node.value) if node.value is not None else None
        if ann is tl.constexpr or (isinstance(ann, constexpr) and ann.value is tl.constexpr):
            if isinstance(value, tensor):
                raise self.error(node.value, f"{ast.unparse(node.target)} is annotated tl.constexpr but its value "
                                             "is only known at run time")
            value = constexpr(value)
        self._assign_target(node.target, value)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if not isinstance(node.target, ast.Name):
            raise self.error(node.target, "augmented assignment needs a plain name on the left")
        lhs = self.visit(ast.Name(id=node.target.id, ctx=ast.Load(), lineno=node.lineno, col_offset=node.col_offset))
        rhs = self.visit(node.value)
        self._assign_target(node.target, self._binary(_BINOPS[type(node.op)], lhs, rhs, node))

    def visit_Return(self, node: ast.Return) -> None:
        value = self.visit(node.value) if node.value is not None else None
        if self.is_kernel and value is not None and not (isinstance(value, constexpr) and value.value is None):
            raise self.error(node, "a kernel cannot return a value; store results through a pointer argument")
        vals: list[Any]
        if value is None:
            vals = []
        elif isinstance(value, tuple_value):
            vals = list(value.values)
        else:
            vals = [value]
        vals = [self.semantic.to_tensor(v) if isinstance(v, constexpr) and isinstance(v.value, (int, float, bool))
                else v for v in vals]
        self.ret_values = vals
        self.ret_is_tuple = isinstance(value, tuple_value)
        self.returned = True
        raise ReturnSignal()

    def visit_Assert(self, node: ast.Assert) -> None:
        cond = self.visit(node.test)
        msg = self.visit(node.msg) if node.msg is not None else constexpr("")
        msg = tl._unwrap(msg)
        if not isinstance(cond, tensor):
            if not tl._unwrap(cond):
                raise self.error(node, f"assertion failed at compile time: {msg or ast.unparse(node.test)}",
                                 CompileTimeAssertionFailure)
            return
        text = msg or f"Assertion `{ast.unparse(node.test)}` failed"
        self.semantic.device_assert(cond, str(text))

    # -- expressions -----------------------------------------------------------------------------
    def visit_Constant(self, node: ast.Constant) -> Any:
        return constexpr(node.value)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> Any:
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                parts.append(str(v.value))
            elif isinstance(v, ast.FormattedValue):
                val = self.visit(v.value)
                if isinstance(val, tensor):
                    raise self.error(v, "f-strings can only format compile-time values; pass tensors to "
                                        "tl.device_print as arguments")
                val = tl._unwrap(val)
                spec = tl._unwrap(self.visit(v.format_spec)) if v.format_spec is not None else ""
                conv = {115: str, 114: repr, 97: ascii}.get(v.conversion, lambda x: x)
                parts.append(format(conv(val), spec))
        return constexpr("".join(parts))

    def visit_FormattedValue(self, node: ast.FormattedValue) -> Any:
        return self.visit_JoinedStr(ast.JoinedStr(values=[node]))

    def visit_Name(self, node: ast.Name) -> Any:
        name = node.id
        if name in self.lscope:
            return self.lscope[name]
        if name in self.gscope:
            return self._global(node, name, self.gscope[name])
        if hasattr(builtins, name):
            obj = getattr(builtins, name)
            if name in ("range", "min", "max", "print") or name in _STATIC_BUILTINS or name in ("True", "False",
                                                                                                    "None"):
                return obj
            raise self.error(node, f"the Python builtin `{name}` cannot be used in a kernel")
        raise self.error(node, f"name `{name}` is not defined")

    def _global(self, node: ast.AST, name: str, val: Any) -> Any:
        if isinstance(val, (constexpr, types.ModuleType, type, tl.dtype)) or callable(val) or _is_jit(val):
            return val
        if val is None or isinstance(val, (tl.base_value, )):
            return _wrap_python(val)
        if knobs.compilation.allow_non_constexpr_globals:
            return _wrap_python(val)
        if getattr(val, "__triton_constexpr__", False):
            return _wrap_python(val)
        raise self.error(node, f"cannot read the global variable `{name}` from a kernel: only globals created as "
                               f"`{name} = tl.constexpr(...)` (and modules, functions, dtypes) are compile-time "
                               "constants. Wrap it in tl.constexpr, or pass it as an argument "
                               "(TRITON_ALLOW_NON_CONSTEXPR_GLOBALS=1 lifts the check)")

    def visit_Tuple(self, node: ast.Tuple) -> Any:
        vals = []
        for e in node.elts:
            if isinstance(e, ast.Starred):
                v = self.visit(e.value)
                vals += list(v.values if isinstance(v, tuple_value) else tl._unwrap(v))
            else:
                vals.append(self.visit(e))
        return tuple_value(vals)

    visit_List = visit_Tuple

    def visit_Slice(self, node: ast.Slice) -> Any:
        lo = tl._unwrap(self.visit(node.lower)) if node.lower else None
        hi = tl._unwrap(self.visit(node.upper)) if node.upper else None
        st = tl._unwrap(self.visit(node.step)) if node.step else None
        return slice(lo, hi, st)

    def visit_Subscript(self, node: ast.Subscript) -> Any:
        value = self.visit(node.value)
        idx = self.visit(node.slice)
        if isinstance(value, tensor):
            return self.semantic.subscript(value, idx)
        if isinstance(value, tuple_value):
            i = tl._unwrap(idx)
            if isinstance(i, tensor):
                raise self.error(node.slice, "tuples can only be indexed with compile-time integers")
            return value[i]
        raw = tl._unwrap(value)
        return _wrap_python(raw[tl._unwrap(idx)])

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        value = self.visit(node.value)
        attr = node.attr
        if isinstance(value, tensor):
            if attr == "T":
                return self.semantic.permute(value, list(range(len(value.shape)))[:-2] +
                                             [len(value.shape) - 1, len(value.shape) - 2])
            if attr in ("dtype", "type", "shape", "numel", "handle"):
                return _wrap_python(getattr(value, attr))
            return getattr(value, attr)
        if isinstance(value, constexpr) and not isinstance(value.value, (types.ModuleType, )):
            return _wrap_python(getattr(value.value, attr))
        if isinstance(value, tuple_value):
            return getattr(value, attr)
        if isinstance(value, tl.dtype):
            return _wrap_python(getattr(value, attr))
        return _wrap_python(getattr(value, attr))

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Any:
        operand = self.visit(node.operand)
        op = type(node.op)
        if isinstance(operand, tensor):
            fn = {ast.USub: "__neg__", ast.UAdd: "__pos__", ast.Invert: "__invert__", ast.Not: "__not__"}[op]
            return getattr(operand, fn)(_semantic=self.semantic)
        v = tl._unwrap(operand)
        return constexpr({ast.USub: lambda: -v, ast.UAdd: lambda: +v, ast.Invert: lambda: ~v,
                          ast.Not: lambda: not v}[op]())

    def _binary(self, method: str, lhs: Any, rhs: Any, node: ast.AST) -> Any:
        if isinstance(lhs, tensor):
            return getattr(lhs, method)(rhs, _semantic=self.semantic)
        if isinstance(rhs, tensor):
            rmethod = _REFLECT.get(method, "__r" + method[2:])
            return getattr(rhs, rmethod)(lhs, _semantic=self.semantic)
        a, b = tl._unwrap(lhs), tl._unwrap(rhs)
        if isinstance(a, tuple_value) or isinstance(b, tuple_value):
            return getattr(lhs, method)(rhs)
        return _wrap_python(getattr(a, method)(b) if hasattr(a, method) else NotImplemented) \
            if not _py_num(a, b) else constexpr(_py_binop(method, a, b))

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        lhs = self.visit(node.left)
        rhs = self.visit(node.right)
        method = _BINOPS.get(type(node.op))
        if method is None:
            raise self.error(node, f"operator {type(node.op).__name__} is not supported")
        return self._binary(method, lhs, rhs, node)

    def visit_Compare(self, node: ast.Compare) -> Any:
        if len(node.comparators) != 1:
            raise self.error(node, "chained comparisons (a < b < c) are not supported; write (a < b) & (b < c)")
        lhs = self.visit(node.left)
        rhs = self.visit(node.comparators[0])
        op = type(node.ops[0])
        if op in (ast.Is, ast.IsNot):
            if isinstance(lhs, tensor) or isinstance(rhs, tensor):
                raise self.error(node, "`is` compares compile-time values only; use == for tensors")
            res = tl._unwrap(lhs) is tl._unwrap(rhs)
            return constexpr(res if op is ast.Is else not res)
        if op in (ast.In, ast.NotIn):
            res = tl._unwrap(lhs) in tl._unwrap(rhs)
            return constexpr(res if op is ast.In else not res)
        return self._binary(_CMPOPS[op], lhs, rhs, node)

    def visit_BoolOp(self, node: ast.BoolOp) -> Any:
        is_and = isinstance(node.op, ast.And)
        result = self.visit(node.values[0])
        for v in node.values[1:]:
            if not isinstance(result, tensor):
                # short-circuit on compile-time values, like Python
                if bool(tl._unwrap(result)) != is_and:
                    return result
                result = self.visit(v)
                continue
            rhs = self.visit(v)
            result = self.semantic.logical_and(result, rhs) if is_and else self.semantic.logical_or(result, rhs)
        return result

    def visit_IfExp(self, node: ast.IfExp) -> Any:
        cond = self.visit(node.test)
        if not isinstance(cond, tensor):
            return self.visit(node.body if tl._unwrap(cond) else node.orelse)
        return self.if_expression(node, cond)

    # -- calls -----------------------------------------------------------------------------------
def _py_num(a: Any, b: Any) -> bool:
    return isinstance(a, (int, float, bool)) and isinstance(b, (int, float, bool))


def _py_binop(method: str, a: Any, b: Any) -> Any:
    r = getattr(a, method)(b)
    if r is NotImplemented:
        r = getattr(b, _REFLECT.get(method, "__r" + method[2:]))(a)
    return r
