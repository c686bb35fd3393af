"""A @jit function as a plain Python function the interpreter can call.

The function's source is parsed and lightly rewritten (see :mod:`.runtime` for what each rewrite calls),
then compiled under the original file name with the original line numbers, and given the original
globals (live: a kernel sees module globals defined after it) and closure cells. Tracebacks, ``pdb``
listings and ``breakpoint()`` therefore show the user's own code; calls to ``breakpoint()`` and
``*.set_trace()`` are left alone so that the debugger stops in the kernel's frame, not in a helper.
"""
from __future__ import annotations

import ast
import sys
import types
from typing import Any, Callable

from ..compiler.errors import UNSUPPORTED_CONSTRUCTS

RT_NAME = "__tritium_rt"

#: code objects of rewritten functions (nested ones included) -> the JITFunction they come from
KERNEL_CODES: dict[types.CodeType, Any] = {}
#: code of @jit functions that run as they are (no source to rewrite), nested code included
RAW_CODES: set[types.CodeType] = set()


def _rt(attr: str) -> ast.expr:
    return ast.Attribute(value=ast.Name(id=RT_NAME, ctx=ast.Load()), attr=attr, ctx=ast.Load())


def _call(attr: str, *args: ast.expr, keywords: list | None = None) -> ast.Call:
    return ast.Call(func=_rt(attr), args=list(args), keywords=keywords or [])


def _is_debugger_call(node: ast.Call) -> bool:
    f = node.func
    return (isinstance(f, ast.Name) and f.id == "breakpoint") or (isinstance(f, ast.Attribute)
                                                                   and f.attr == "set_trace")


def calls_debugger(tree: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and _is_debugger_call(n) for n in ast.walk(tree))


def _NO_ARGS() -> ast.arguments:
    return ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])


class _Stores(ast.NodeVisitor):
    """Names a block of statements assigns, not looking into nested scopes."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Store) and node.id not in self.names and not node.id.startswith("__tritium"):
            self.names.append(node.id)

    def _skip(self, node: ast.AST) -> None:
        pass

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = _skip
    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _skip


def _assigned(stmts: list) -> list[str]:
    v = _Stores()
    for st in stmts:
        v.visit(st)
    return v.names


_DEBUGGERS = {"pdb", "ipdb", "pudb", "bdb"}


class _Rewriter(ast.NodeTransformer):
    def __init__(self, src: str) -> None:
        self.src = src
        self.counter = 0
        self.depth = 0

    def _unsupported(self, node: ast.AST, message: str = "") -> ast.AST:
        name = type(node).__name__
        text = message or f"unsupported Python construct in a kernel: {name}; {UNSUPPORTED_CONSTRUCTS[name]}"
        call = _call("unsupported", ast.Constant(value=text))
        if isinstance(node, ast.stmt):
            return self._on_first_line(ast.Expr(value=call), node)
        return self._located(call, node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        if self.depth:
            return self._unsupported(node)
        self.depth += 1
        self.generic_visit(node)
        return node

    def visit_Import(self, node: ast.AST) -> ast.AST:
        names = [a.name.split(".")[0] for a in node.names] if isinstance(node, ast.Import) else \
            [(node.module or "").split(".")[0]]
        if all(n in _DEBUGGERS for n in names):
            return node  # `import pdb; pdb.set_trace()` is the point of the interpreter
        return self._unsupported(node)

    visit_ImportFrom = visit_Import

    def _reject(self, node: ast.AST) -> ast.AST:
        return self._unsupported(node)

    visit_Lambda = visit_GeneratorExp = visit_DictComp = visit_SetComp = _reject
    visit_Try = visit_With = visit_Raise = visit_Global = visit_Nonlocal = visit_Delete = _reject
    visit_Dict = visit_Set = visit_Await = visit_Yield = visit_YieldFrom = visit_NamedExpr = _reject
    visit_ClassDef = visit_Match = visit_Break = visit_Continue = _reject

    def visit_Assign(self, node: ast.Assign) -> ast.AST:
        if any(isinstance(t, ast.Subscript) for t in node.targets):
            return self._unsupported(node, "tensors are immutable in kernels: build a new one (e.g. with tl.where) "
                                           "instead of assigning to an element")
        if any(isinstance(t, ast.Attribute) for target in node.targets for t in ast.walk(target)):
            # as compiled (CodeGenerator.assign_target): an aggregate changes only through its plain methods
            return self._unsupported(node, "Attribute assignment is not supported in triton: build a new aggregate, "
                                           "or change it in a method of its class that is not @jit")
        self.generic_visit(node)
        # as compiled (CodeGenerator.assigned_value): a number assigned to a name becomes a scalar tensor
        node.value = ast.copy_location(_call("assign", node.value), node.value)
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        self.generic_visit(node)
        if node.value is not None and not ast.unparse(node.annotation).endswith("constexpr"):
            node.value = ast.copy_location(_call("assign", node.value), node.value)
        return node

    def visit_AugAssign(self, node: ast.AugAssign) -> Any:
        if isinstance(node.target, ast.Attribute):
            return self._unsupported(node, "Attribute assignment is not supported in triton: build a new aggregate, "
                                           "or change it in a method of its class that is not @jit")
        if not isinstance(node.target, ast.Name):
            return self._unsupported(node, "augmented assignment needs a plain name on the left")
        self.generic_visit(node)
        again = ast.Assign(targets=[ast.Name(id=node.target.id, ctx=ast.Store())],
                           value=_call("assign", ast.Name(id=node.target.id, ctx=ast.Load())))
        return [node, ast.fix_missing_locations(ast.copy_location(again, node))]

    def _located(self, new: ast.AST, old: ast.AST) -> ast.AST:
        return ast.copy_location(new, old)

    def _on_first_line(self, new: ast.AST, old: ast.AST) -> ast.AST:
        """``new`` placed on the first line of a (compound) statement: that is the line errors show."""
        lines = self.src.splitlines()
        text = lines[old.lineno - 1] if 0 < old.lineno <= len(lines) else ""
        for sub in ast.walk(new):
            if isinstance(sub, (ast.stmt, ast.expr, ast.excepthandler)):
                sub.lineno = sub.end_lineno = old.lineno
                sub.col_offset = old.col_offset
                sub.end_col_offset = max(len(text.rstrip()), old.col_offset + 1)
        return new

    # Run-time control flow (an ``if`` on a tensor, loops over range()/tl.range, while loops) turns the
    # Python numbers it assigns into tensors when compiled (they become scf.if/scf.for results): ``x = 0``
    # then ``x += t`` in a loop is an int32 tensor throughout. The carry statements do the same here.
    def _temp(self, kind: str) -> str:
        self.counter += 1
        return f"__tritium_{kind}{self.counter}"

    def _carry(self, names: list[str], where: ast.AST, loop: str = "", entering: bool = True) -> list[ast.stmt]:
        """``name = rt.carry(name)`` for each bound name; in loops, ``rt.carry_loop`` also checks that the
        value keeps its type from one iteration to the next, as the compiler does."""
        out: list[ast.stmt] = []
        for n in names:
            if loop:
                value = _call("carry_loop", ast.Name(id=loop, ctx=ast.Load()), ast.Constant(value=n),
                              ast.Name(id=n, ctx=ast.Load()), ast.Constant(value=entering))
            else:
                value = _call("carry", ast.Name(id=n, ctx=ast.Load()))
            assign = ast.Assign(targets=[ast.Name(id=n, ctx=ast.Store())], value=value)
            unbound = ast.ExceptHandler(type=ast.Name(id="NameError", ctx=ast.Load()), name=None, body=[ast.Pass()])
            out.append(ast.Try(body=[assign], handlers=[unbound], orelse=[], finalbody=[]))
        for st in out:
            self._on_first_line(st, where)
        return out

    def visit_If(self, node: ast.If) -> Any:
        self.generic_visit(node)
        names = _assigned(node.body + node.orelse)
        if not names:
            node.test = self._located(_call("cond", node.test), node.test)
            return node
        flag = self._temp("if")
        first = self._located(ast.Assign(targets=[ast.Name(id=flag, ctx=ast.Store())],
                                         value=_call("cond_kind", node.test)), node)
        node.test = self._located(ast.BinOp(left=ast.Name(id=flag, ctx=ast.Load()), op=ast.BitAnd(),
                                            right=ast.Constant(value=1)), node.test)
        after = ast.If(test=ast.BinOp(left=ast.Name(id=flag, ctx=ast.Load()), op=ast.BitAnd(),
                                      right=ast.Constant(value=2)), body=self._carry(names, node), orelse=[])
        return [first, node, self._located(after, node)]

    def visit_While(self, node: ast.While) -> Any:
        self.generic_visit(node)
        node.test = self._located(_call("cond", node.test), node.test)
        names = _assigned(node.body)
        if not names:
            return node
        state = self._temp("while")
        first = self._located(ast.Assign(targets=[ast.Name(id=state, ctx=ast.Store())], value=_call("loop_state")),
                              node)
        node.body = node.body + self._carry(names, node, state, False)
        return [first] + self._carry(names, node, state, True) + [node]

    def visit_IfExp(self, node: ast.IfExp) -> ast.AST:
        self.generic_visit(node)

        def thunk(e: ast.expr) -> ast.expr:
            return self._located(ast.Lambda(args=_NO_ARGS(), body=e), e)
        return self._located(_call("pick", node.test, thunk(node.body), thunk(node.orelse)), node)

    def visit_For(self, node: ast.For) -> Any:
        self.generic_visit(node)
        targets = set(_assigned([ast.Assign(targets=[node.target], value=ast.Constant(value=None))]))
        names = [n for n in _assigned(node.body) if n not in targets]
        if not names:
            node.iter = self._located(_call("iterate", node.iter), node.iter)
            return node
        loop = self._temp("loop")
        first = self._located(ast.Assign(targets=[ast.Name(id=loop, ctx=ast.Store())],
                                         value=_call("iterate", node.iter)), node)
        node.iter = ast.copy_location(ast.Name(id=loop, ctx=ast.Load()), node.iter)

        def guarded(entering: bool) -> ast.stmt:
            test = ast.Attribute(value=ast.Name(id=loop, ctx=ast.Load()), attr="carries", ctx=ast.Load())
            return self._located(ast.If(test=test, body=self._carry(names, node, loop, entering), orelse=[]), node)
        node.body = node.body + [guarded(False)]
        return [first, guarded(True), node]

    def visit_ListComp(self, node: ast.ListComp) -> ast.AST:
        if any(g.is_async for g in node.generators):
            return self._unsupported(node, "async comprehensions are not supported in kernels")
        self.generic_visit(node)
        return node

    def visit_comprehension(self, node: ast.comprehension) -> ast.AST:
        # compiled, a comprehension is unrolled: compile-time items and conditions only (rt.comprehend)
        self.generic_visit(node)
        node.iter = self._located(_call("comprehend", node.iter), node.iter)
        node.ifs = [self._located(_call("comprehension_if", c), c) for c in node.ifs]
        return node

    def visit_Assert(self, node: ast.Assert) -> ast.AST:
        self.generic_visit(node)
        text = ast.get_source_segment(self.src, node.test) or ast.unparse(node.test)
        msg = node.msg if node.msg is not None else ast.Constant(value=None)
        return self._located(ast.Expr(value=_call("assert_", node.test, msg, ast.Constant(value=text))), node)

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        self.generic_visit(node)
        helper = "and_" if isinstance(node.op, ast.And) else "or_"
        result = node.values[0]
        for v in node.values[1:]:
            thunk = ast.Lambda(args=_NO_ARGS(), body=v)
            result = self._located(_call(helper, result, self._located(thunk, v)), node)
        return result

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return self._located(_call("not_", node.operand), node)
        return node

    def visit_Expr(self, node: ast.Expr) -> ast.AST:
        self.generic_visit(node)
        call = node.value
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "call" \
                and isinstance(call.func.value, ast.Name) and call.func.value.id == RT_NAME and call.args:
            # a result thrown away: rt.call_unused refuses it for @must_use_result functions, as compiled
            text = ast.unparse(call.args[0])
            node.value = self._located(ast.Call(func=_rt("call_unused"), args=[ast.Constant(value=text)] + call.args,
                                                keywords=call.keywords), call)
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if _is_debugger_call(node):
            return node
        return self._located(ast.Call(func=_rt("call"), args=[node.func] + node.args, keywords=node.keywords),
                             node)

    _CMP = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Is: "is",
            ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        if len(node.ops) != 1:
            return node
        op = ast.Constant(value=self._CMP[type(node.ops[0])])
        return self._located(_call("compare", op, node.left, node.comparators[0]), node)

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if node.attr == "T" and isinstance(node.ctx, ast.Load):
            return self._located(_call("transpose", node.value), node)
        return node


def _register(code: types.CodeType, fn: Any) -> None:
    KERNEL_CODES[code] = fn
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            _register(c, fn)


def _register_raw(code: types.CodeType) -> None:
    RAW_CODES.add(code)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            _register_raw(c)


def python_function(fn: Any, rt: Any) -> tuple[Callable[..., Any], bool]:
    """(the rewritten function, whether it calls a debugger) for JITFunction ``fn``."""
    if fn.src is None:
        # no source (exec()): run the function object as it is, as Triton's interpreter does; builtins find
        # the interpreter through the ambient semantic; Python's own `if`/`range` on a scalar tensor ask the
        # tensor for its value (values.V.python_scalar)
        _register_raw(fn.fn.__code__)
        return fn.fn, False
    tree = ast.parse(fn.src)
    fdef = tree.body[0]
    if not isinstance(fdef, ast.FunctionDef):
        raise ValueError(f"@jit expects a function definition, got {fn.src[:60]!r}")
    fdef.decorator_list = []
    debugger = calls_debugger(fdef)
    fdef = _Rewriter(fn.src).visit(fdef)
    original = fn.fn
    freevars = list(original.__code__.co_freevars)
    # the kernel becomes a closure of a factory whose parameters are the runtime and the original free
    # variables; the factory is never run: the nested code object is bound to the original cells below
    params = [ast.arg(arg=RT_NAME)] + [ast.arg(arg=n) for n in freevars]
    extra = {"type_params": []} if sys.version_info >= (3, 12) else {}
    factory = ast.FunctionDef(name="__tritium_factory",
                              args=ast.arguments(posonlyargs=[], args=params, kwonlyargs=[], kw_defaults=[],
                                                 defaults=[]),
                              body=[fdef, ast.Return(value=ast.Name(id=fdef.name, ctx=ast.Load()))],
                              decorator_list=[], returns=None, type_comment=None, **extra)
    for node in [factory, factory.body[-1], factory.body[-1].value, *params]:
        ast.copy_location(node, fdef)
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)
    ast.increment_lineno(module, fn.first_line - 1)
    code = compile(module, fn.filename, "exec", dont_inherit=True)
    factory_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    inner = next(c for c in factory_code.co_consts if isinstance(c, types.CodeType) and c.co_name == fdef.name)
    cells = dict(zip(freevars, original.__closure__ or ()))
    cells[RT_NAME] = types.CellType(rt)
    for name in inner.co_freevars:
        if name not in cells:
            # the function's own name (a recursive call): what the module holds under it, the JITFunction
            g = original.__globals__
            cells[name] = types.CellType(g[name]) if name in g else types.CellType()
    closure = tuple(cells[name] for name in inner.co_freevars)
    pyfn = types.FunctionType(inner, original.__globals__, fdef.name, original.__defaults__, closure)
    pyfn.__kwdefaults__ = original.__kwdefaults__
    _register(inner, fn)
    return pyfn, debugger
