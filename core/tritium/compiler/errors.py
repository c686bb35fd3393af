"""User-facing compilation errors: the kernel's name, its source line with a caret, and what to do."""
from __future__ import annotations

import ast
from typing import Optional


class CompilationError(Exception):
    """A kernel could not be compiled because of its source. ``str(err)`` is ready to show a user."""

    def __init__(self, kernel: str, src: Optional[str], node: Optional[ast.AST], message: str,
                 filename: str = "<unknown>", first_line: int = 1) -> None:
        self.kernel = kernel
        self.src = src
        self.node = node
        self.error_message = message
        self.filename = filename
        self.first_line = first_line
        self.lineno = (getattr(node, "lineno", 1) or 1) + first_line - 1 if node is not None else None
        super().__init__(self._format())

    def _format(self) -> str:
        head = f"in kernel `{self.kernel}`"
        node = self.node
        if node is None or self.src is None or not hasattr(node, "lineno"):
            return f"{head}: {self.error_message}"
        lines = self.src.splitlines()
        lineno = node.lineno  # relative to the function's source
        col = getattr(node, "col_offset", 0) or 0
        end_col = getattr(node, "end_col_offset", None)
        if getattr(node, "end_lineno", lineno) != lineno or end_col is None or end_col <= col:
            end_col = col + 1
        head += f", {self.filename}:{lineno + self.first_line - 1}:{col + 1}"
        text = lines[lineno - 1] if 0 < lineno <= len(lines) else ""
        context = lines[max(0, lineno - 3):lineno - 1]
        body = "\n".join("    " + ln for ln in context + [text])
        caret = "    " + " " * col + "^" * max(1, end_col - col)
        return f"{head}:\n{body}\n{caret}\n{self.error_message}"

    def __reduce__(self):
        return (type(self), (self.kernel, self.src, self.node, self.error_message, self.filename,
                             self.first_line))


class UnsupportedLanguageConstruct(CompilationError):
    pass


class CompileTimeAssertionFailure(CompilationError):
    """A ``static_assert`` failed."""


class OutOfResources(Exception):
    """A kernel needs more of a device resource than exists; the message names the meta-parameters to lower."""

    def __init__(self, required: int, limit: int, name: str, hint: str = "") -> None:
        self.required, self.limit, self.name = required, limit, name
        msg = f"out of resource: {name}, required: {required}, hardware limit: {limit}"
        msg += f". {hint}" if hint else ". Reducing block sizes or `num_stages` may help."
        super().__init__(msg)

    def __reduce__(self):
        return (type(self), (self.required, self.limit, self.name))
