"""The AST walk the import checks share (test_layering, test_import_cycles): every node of a module that runs,
i.e. all but the bodies of ``if TYPE_CHECKING:`` (their ``else`` branches do run)."""
from __future__ import annotations

import ast
from typing import Iterator


def is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def runtime_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node except the bodies of ``if TYPE_CHECKING:``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and is_type_checking(child):
                stack.extend(child.orelse)
                continue
            stack.append(child)
