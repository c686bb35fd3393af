"""``@constexpr_function``: a plain Python function that kernels may call on compile-time values (it runs while
the kernel compiles). As in Triton it is a ``ConstexprFunction`` object (``triton.runtime.jit.ConstexprFunction``)
with the function's source: code generators that copy a kernel's helpers into generated source (torch inductor,
for user-written Triton kernels) recognise it by class and re-emit ``src`` under ``@triton.constexpr_function``."""
from __future__ import annotations

import functools
import inspect
import re
import textwrap
from typing import Any, Callable, Optional


class ConstexprFunction:
    __triton_constexpr_function__ = True

    def __init__(self, fn: Callable) -> None:
        self.fn = fn
        functools.update_wrapper(self, fn)
        # the dependency hash and the launch-time check of globals read these, as on a function
        self.__code__ = fn.__code__
        self.__globals__ = fn.__globals__
        self._src: Optional[str] = None

    @property
    def src(self) -> str:
        """The source from ``def`` on (decorators stripped), dedented; empty where Python kept none."""
        if self._src is None:
            try:
                text = textwrap.dedent(inspect.getsource(self.fn))
            except (OSError, TypeError):
                text = ""
            m = re.search(r"^def\s+\w+\s*\(", text, re.MULTILINE)
            self._src = text[m.start():] if m else text
        return self._src

    def _unsafe_update_src(self, new_src: str) -> None:
        """Replace the function by the one ``new_src`` defines (Triton's name; it keeps running the old Python
        function and changes only the source its cache key reads, so a kernel compiled with the old result would
        be stored under the new key). Defined in the function's module namespace: closure variables are lost.
        Kernels that call it compile again at their next launch once their ``hash`` is reset, as in Triton."""
        src = textwrap.dedent(new_src)
        namespace = dict(self.fn.__globals__)
        exec(compile(src, self.fn.__code__.co_filename, "exec"), namespace)
        fn = namespace.get(self.fn.__name__)
        if not callable(fn):
            raise ValueError(f"_unsafe_update_src of constexpr function {self.fn.__name__}: the new source must "
                             f"define a function named {self.fn.__name__}")
        self.fn = fn
        self.__code__ = fn.__code__
        m = re.search(r"^def\s+\w+\s*\(", src, re.MULTILINE)
        self._src = src[m.start():] if m else src

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        # a method of a class (an aggregate's): bound to the instance, still run at compile time
        return self if obj is None else BoundConstexprFunction(obj, self)

    def __repr__(self) -> str:
        return f"ConstexprFunction({self.__module__}:{self.__qualname__})"


class BoundConstexprFunction:
    """``instance.method`` for a ``@constexpr_function`` method (Triton's name)."""
    __triton_constexpr_function__ = True

    def __init__(self, instance: Any, fn: ConstexprFunction) -> None:
        self.__self__ = instance
        self.__func__ = fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.__func__.fn(self.__self__, *args, **kwargs)


def constexpr_function(fn: Callable) -> ConstexprFunction:
    """Allow a plain Python function to be called from kernels on compile-time values."""
    return fn if isinstance(fn, ConstexprFunction) else ConstexprFunction(fn)
