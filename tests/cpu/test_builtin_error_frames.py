"""A user error raised inside a builtin keeps the builtin's frames, and one of them is language/core.py's, as
Triton's test_compile_errors.py::test_err_in_builtin asserts (Triton's builtins run through core.py). The
language/core.py split (c64a31d) moved the @builtin wrapper, the frame every builtin call goes through, to
builtin_protocol.py, and that Triton test failed."""
import os
import traceback

import pytest

import tritium
import tritium.language as tl
from tritium.compiler import ASTSource
from tritium.compiler.errors import CompilationError


@tritium.jit
def _bad_expand():
    tl.expand_dims(None, -1)


def test_builtin_error_traceback_passes_through_language_core():
    with pytest.raises(CompilationError) as e:
        tritium.compile(ASTSource(fn=_bad_expand, signature={}, constexprs={}))
    inner = e.value.__cause__
    assert inner is not None
    frames = [f.filename for f in traceback.extract_tb(inner.__traceback__)]
    assert any(f.endswith(os.path.join("tritium", "language", "core.py")) for f in frames), frames
    text = "".join(traceback.format_exception(type(inner), inner, inner.__traceback__))
    assert "<source unavailable>" not in text
