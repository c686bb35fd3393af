"""The builtin protocol: what marks a Python function as a Triton builtin, and the error builtins raise.

A *builtin* is a Python function the code generator calls while it compiles a kernel, passing the semantic
layer as ``_semantic`` (and itself as ``_generator`` when the builtin asks for it). Calling a builtin outside
a kernel is an error that says so, unless an engine that runs kernels as Python (the interpreter) has set the
ambient semantic layer. The ``@builtin`` decorator itself is core.py's: its wrapper is the frame every builtin
call passes through, and Triton's tests look for core.py in a builtin's error traceback
(test_compile_errors.py::test_err_in_builtin). Nothing here knows the language's values.
"""
from __future__ import annotations

import contextvars
from typing import Any, Optional

TRITON_BUILTIN = "__triton_builtin__"


class CompileTimeError(Exception):
    """Raised by builtins for user errors; the code generator adds the kernel, line and caret.

    ``str(err)`` says what is wrong, in Triton's words where Triton has them: code written for Triton (its own
    tests among it) compares the cause of a CompilationError whole. ``hint``, the details and what to do
    about it, follows that in the message the user sees (:meth:`described`)."""

    def __init__(self, message: str = "", hint: str = "") -> None:
        super().__init__(message)
        self.hint = hint

    def described(self) -> str:
        return f"{self}; {self.hint}" if self.hint else str(self)


#: set by an execution engine that runs kernels as Python (the interpreter): builtins called without
#: ``_semantic`` then use this one
_ambient_semantic: contextvars.ContextVar[Any] = contextvars.ContextVar("tritium_ambient_semantic", default=None)


def must_use_result(fn: Any, message: Any = True) -> Any:
    """Make a call whose result is thrown away (a bare expression statement) a compile error;
    ``@must_use_result("why")`` adds the reason to the error. Triton's ``triton.must_use_result``."""
    if isinstance(fn, str):
        return lambda f: must_use_result(f, fn)
    fn._must_use_result = message
    return fn


def unused_result_error(fn: Any, call_text: str) -> Optional[str]:
    """The error for a discarded result of ``fn`` (None when it may be discarded)."""
    why = getattr(fn, "_must_use_result", False)
    if not why:
        return None
    text = f"The result of {call_text} is not being used."
    return f"{text} {why}" if isinstance(why, str) else text


def is_builtin(fn: Any) -> bool:
    return getattr(fn, TRITON_BUILTIN, False)

