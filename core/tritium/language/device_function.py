"""The base class of ``@jit`` functions, as the frontend and the interpreter see a callee.

``JITFunction`` (Triton's ``triton.runtime.jit.JITFunction``) lives in the runtime, which compiles and launches
kernels and so sits above the frontend. The frontend recognizes a @jit callee by this base class and uses only
what it declares, so that neither the frontend nor the interpreter imports the runtime back.
"""
from __future__ import annotations

import ast
import inspect
from typing import Any, Optional


class DeviceFunction:
    """A Python function compiled for devices: what generating a call to it needs."""

    __name__: str
    signature: inspect.Signature
    arg_names: list[str]
    #: keep calls to it as calls (``@jit(noinline=True)``)
    noinline: bool
    filename: str
    #: the line of ``def`` in ``filename``; AST line numbers count from it
    first_line: int

    @property
    def src(self) -> Optional[str]:
        """The source from ``def`` on."""
        raise NotImplementedError

    @property
    def cache_key(self) -> str:
        """Changes whenever the function or anything it depends on changes."""
        raise NotImplementedError

    def parse(self) -> ast.Module:
        """The AST of ``src``: one FunctionDef."""
        raise NotImplementedError

    def get_globals(self) -> dict[str, Any]:
        """The names the body may read besides its parameters."""
        raise NotImplementedError

    def is_constexpr_param(self, name: str) -> bool:
        """Whether parameter ``name`` is annotated ``tl.constexpr``."""
        raise NotImplementedError
