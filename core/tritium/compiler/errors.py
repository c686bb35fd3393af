"""User-facing compilation errors: the kernel's name, its source line with a caret, and what to do."""
from __future__ import annotations

import ast
import os
from typing import Optional

from ..errors import TritonError

#: Python constructs kernels cannot use, with what to write instead: the compiler rejects them, and the
#: interpreter raises the same error where one is reached
UNSUPPORTED_CONSTRUCTS = {
    "Lambda": "define a @triton.jit function instead",
    "GeneratorExp": "use a list comprehension (unrolled while compiling) or tl.static_range",
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
    "YieldFrom": "kernels are not generators",
    "NamedExpr": "assign on its own line instead of using :=",
    "ClassDef": "classes cannot be defined inside kernels",
    "FunctionDef": "define helper functions at module level with @triton.jit",
    "Match": "use if/elif",
    "Break": "`break` is not supported; restructure the loop condition (while loops work)",
    "Continue": "`continue` is not supported; guard the rest of the body with an if",
    "Import": "import modules at module level",
    "ImportFrom": "import modules at module level",
    "Starred": "star-unpacking is only supported in calls",
}

#: why a list comprehension is refused (it is unrolled while compiling, so it needs compile-time items)
COMPREHENSION_ITEMS = ("a comprehension is unrolled while compiling, so it cannot iterate over run-time values; it "
                       "needs compile-time items: a tuple, tl.static_range or range() of constexpr bounds (use a for "
                       "loop for run-time ranges)")
COMPREHENSION_IF = "the `if` of a comprehension must be a compile-time condition, not a tensor"


class CompilationError(TritonError):
    """A kernel could not be compiled because of its source. ``str(err)`` is ready to show a user."""

    def __init__(self, kernel: str, src: Optional[str], node: Optional[ast.AST], message: str,
                 filename: str = "<unknown>", first_line: int = 1, function: Optional[str] = None,
                 callers: tuple[str, ...] = ()) -> None:
        self.kernel = kernel
        self.src = src
        self.node = node
        self.error_message = message
        self.filename = filename
        self.first_line = first_line
        #: the @jit function the error is in, when it is not the kernel itself
        self.function = function if function != kernel else None
        #: "called from" frames, innermost first, each a location line and the call with a caret
        self.callers = callers
        self.lineno = (getattr(node, "lineno", 1) or 1) + first_line - 1 if node is not None else None
        super().__init__(self._format())

    def called_from(self, caller: str, src: Optional[str], node: Optional[ast.AST], filename: str,
                    first_line: int) -> "CompilationError":
        """The same error seen from the @jit function ``caller``, whose ``node`` made the failing call."""
        frame = f"called from `{caller}`"
        if src is not None and node is not None and hasattr(node, "lineno"):
            loc, body, caret = _excerpt(src, node, filename, first_line, context=0)
            frame = f"{frame}, {loc}:\n{body}\n{caret}"
        return type(self)(caller, self.src, self.node, self.error_message, self.filename, self.first_line,
                          self.function or self.kernel, self.callers + (frame, ))

    def _format(self) -> str:
        head = f"in kernel `{self.kernel}`"
        if self.function:
            head += f", in @jit function `{self.function}`"
        node = self.node
        if node is None or self.src is None or not hasattr(node, "lineno"):
            text = f"{head}: {self.error_message}"
        else:
            loc, body, caret = _excerpt(self.src, node, self.filename, self.first_line, context=2)
            text = f"{head}, {loc}:\n{body}\n{caret}\n{self.error_message}"
        return "\n".join([text, *self.callers])

    def __reduce__(self):
        return (type(self), (self.kernel, self.src, self.node, self.error_message, self.filename,
                             self.first_line, self.function, self.callers))


def _excerpt(src: str, node: ast.AST, filename: str, first_line: int, context: int) -> tuple[str, str, str]:
    """``file:line:col, at l:c``, the node's source line (after ``context`` lines before it) and a caret line."""
    lines = src.splitlines()
    lineno = node.lineno  # relative to the function's source
    col = getattr(node, "col_offset", 0) or 0
    end_col = getattr(node, "end_col_offset", None)
    if getattr(node, "end_lineno", lineno) != lineno or end_col is None or end_col <= col:
        end_col = col + 1
    text = lines[lineno - 1] if 0 < lineno <= len(lines) else ""
    before = lines[max(0, lineno - 1 - context):lineno - 1]
    body = "\n".join("    " + ln for ln in before + [text])
    caret = "    " + " " * col + "^" * max(1, end_col - col)
    # then Triton's "at line:col" (both relative to the function's source, column from 0), which tools grep for
    return f"{filename}:{lineno + first_line - 1}:{col + 1}, at {lineno}:{col}", body, caret


def without_frontend_frames(exc: BaseException) -> BaseException:
    """Drop the frontend's own frames (this package) from the tracebacks of ``exc`` and of its causes: the
    message already shows the kernel's line, so a Python traceback shows the user's call and the library code
    that raised, not the code generator's recursion (Triton filters its tracebacks the same way)."""
    here = os.path.dirname(os.path.abspath(__file__)) + os.sep
    seen: set[int] = set()
    e: Optional[BaseException] = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        kept = []
        tb = e.__traceback__
        while tb is not None:
            if not tb.tb_frame.f_code.co_filename.startswith(here):
                kept.append(tb)
            tb = tb.tb_next
        for a, b in zip(kept, kept[1:]):
            a.tb_next = b
        if kept:
            kept[-1].tb_next = None
        e.__traceback__ = kept[0] if kept else None
        e = e.__cause__
    return exc


class UnsupportedLanguageConstruct(CompilationError):
    pass


class CompileTimeAssertionFailure(CompilationError):
    """A ``static_assert`` failed."""


class OutOfResources(TritonError):
    """A kernel needs more of a device resource than exists; the message names the meta-parameters to lower."""

    def __init__(self, required: int, limit: int, name: str, hint: str = "") -> None:
        self.required, self.limit, self.name = required, limit, name
        msg = f"out of resource: {name}, required: {required}, hardware limit: {limit}"
        msg += f". {hint}" if hint else ". Reducing block sizes or `num_stages` may help."
        super().__init__(msg)

    def __reduce__(self):
        return (type(self), (self.required, self.limit, self.name))
