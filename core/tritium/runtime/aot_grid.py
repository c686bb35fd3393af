"""Launch grids written as expressions of a kernel's arguments (``tritium compile --grid "cdiv(n, 1024), 1, 1"``).

Triton's AOT compiler pastes the grid into C, so ``n / 1024`` there is integer division; here ``/`` and ``//``
both divide integers rounding down, and ``cdiv(a, b)``, ``min``, ``max`` are available. Only names, integer
literals, ``+ - * / // %``, unary minus and those calls are accepted: an artifact's grid is data, never code.
"""
from __future__ import annotations

import ast
import operator
from typing import Any, Callable, Iterable

_BINOPS: dict[type, Callable[[int, int], int]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.floordiv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod}
_CALLS: dict[str, Callable[..., int]] = {"cdiv": lambda a, b: -(-a // b), "min": min, "max": max}


def parse(text: str, names: Iterable[str]) -> list[str]:
    """The grid ``text`` as 1 to 3 expressions (a ValueError says what is wrong); ``names`` are those it may use."""
    known = set(names)
    try:
        tree = ast.parse(f"({text},)", mode="eval").body
    except SyntaxError as exc:
        raise ValueError(f"grid {text!r} is not a comma-separated list of expressions: {exc.msg}") from None
    assert isinstance(tree, ast.Tuple)
    if not 1 <= len(tree.elts) <= 3:
        raise ValueError(f"grid {text!r} must have 1 to 3 expressions (x, y, z), got {len(tree.elts)}")
    for e in tree.elts:
        _check(e, text, known)
    return [ast.unparse(e) for e in tree.elts]


def _check(node: ast.AST, text: str, known: set[str]) -> None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return
    if isinstance(node, ast.Name):
        if node.id not in known:
            raise ValueError(f"grid {text!r} uses {node.id!r}, which is not an integer argument of the kernel "
                             f"(it may use: {', '.join(sorted(known)) or 'no names'})")
        return
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        _check(node.left, text, known)
        _check(node.right, text, known)
        return
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        _check(node.operand, text, known)
        return
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _CALLS and \
            not node.keywords:
        for a in node.args:
            _check(a, text, known)
        return
    raise ValueError(f"grid {text!r}: {ast.unparse(node)!r} is not allowed; use integer arguments and literals, "
                     f"+ - * / // %, and {', '.join(_CALLS)}(...)")


def evaluate(exprs: list[str], values: dict[str, Any]) -> tuple[int, ...]:
    out = []
    for text in exprs:
        out.append(_eval(ast.parse(text, mode="eval").body, values))
    return tuple(out)


def _eval(node: ast.AST, values: dict[str, Any]) -> int:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return operator.index(values[node.id])
    if isinstance(node, ast.BinOp):
        return _BINOPS[type(node.op)](_eval(node.left, values), _eval(node.right, values))
    if isinstance(node, ast.UnaryOp):
        v = _eval(node.operand, values)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.Call):
        return _CALLS[node.func.id](*(_eval(a, values) for a in node.args))  # type: ignore[attr-defined]
    raise ValueError(f"unsupported grid expression {ast.unparse(node)!r}")
