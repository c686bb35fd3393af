"""``@jit``: kernels and device functions, their specialization, caches and launches."""
from __future__ import annotations

import ast
import hashlib
import inspect
import textwrap
from typing import Any, Callable, Optional, Sequence

from .. import knobs
from .specialize import ArgSpecializer, MockTensor, TensorWrapper, reinterpret  # noqa: F401


class KernelParam:
    def __init__(self, num: int, param: inspect.Parameter, do_not_specialize: bool,
                 do_not_specialize_on_alignment: bool) -> None:
        self.num = num
        self.name = param.name
        self._param = param
        self.do_not_specialize = do_not_specialize
        self.do_not_specialize_on_alignment = do_not_specialize_on_alignment
        ann = param.annotation
        from ..language.core import const, constexpr
        self.is_constexpr = ann is constexpr or (isinstance(ann, str) and ann.split(".")[-1] == "constexpr")
        self.is_const = ann is const or (isinstance(ann, str) and ann.split(".")[-1] == "const")
        self.annotation = ann
        self.default = param.default
        self.has_default = param.default is not inspect.Parameter.empty


class JITFunction:
    """A Python function compiled for devices: a kernel (launched with ``fn[grid](...)``) or a device
    function (called from other @jit functions)."""

    def __init__(self, fn: Callable, version: Any = None, do_not_specialize: Optional[Sequence] = None,
                 do_not_specialize_on_alignment: Optional[Sequence] = None, debug: Optional[bool] = None,
                 noinline: Optional[bool] = None, repr: Optional[Callable] = None,
                 launch_metadata: Optional[Callable] = None) -> None:
        self.fn = fn
        self.module = fn.__module__
        self.version = version
        self.signature = inspect.signature(fn)
        self.arg_names = list(self.signature.parameters)
        dns = self._indices(do_not_specialize)
        dnsa = self._indices(do_not_specialize_on_alignment)
        self.params = [KernelParam(i, p, i in dns, i in dnsa) for i, p in enumerate(self.signature.parameters.values())]
        self.constexpr_names = {p.name for p in self.params if p.is_constexpr}
        self.debug = debug
        self.noinline = bool(noinline)
        self._repr = repr
        self.launch_metadata = launch_metadata
        try:
            lines, start = inspect.getsourcelines(fn)
            self.src = textwrap.dedent("".join(lines))
            self.filename = inspect.getsourcefile(fn) or "<unknown>"
            self.first_line = start
        except (OSError, TypeError) as exc:
            raise ValueError(f"@jit needs the source code of {fn.__qualname__} (it was defined where Python "
                             f"keeps no source, e.g. an interactive prompt): {exc}") from None
        self._tree: Optional[ast.Module] = None
        self._cache_key: Optional[str] = None
        self.device_caches: dict[Any, dict] = {}
        self._specializer = ArgSpecializer(self)
        self.__name__ = fn.__name__
        self.__qualname__ = fn.__qualname__
        self.__doc__ = fn.__doc__
        self.__globals__ = fn.__globals__
        self.__module__ = fn.__module__
        self.pre_run_hooks: list[Callable] = []
        #: run this kernel in the interpreter even when TRITON_INTERPRET is off
        self.interpret = False

    def _indices(self, names: Optional[Sequence]) -> set[int]:
        out = set()
        for n in names or ():
            if isinstance(n, str):
                if n not in self.arg_names:
                    raise ValueError(f"{self.fn.__name__} has no parameter {n!r}")
                out.add(self.arg_names.index(n))
            else:
                out.add(int(n))
        return out

    # -- source and identity ---------------------------------------------------------------------
    def parse(self) -> ast.Module:
        if self._tree is None:
            tree = ast.parse(self.src)
            if not tree.body or not isinstance(tree.body[0], ast.FunctionDef):
                raise ValueError(f"@jit expects a function definition, got {self.src[:60]!r}")
            self._tree = tree
        return self._tree

    def get_globals(self) -> dict:
        g = dict(self.fn.__globals__)
        closure = self.fn.__closure__ or ()
        for name, cell in zip(self.fn.__code__.co_freevars, closure):
            try:
                g[name] = cell.cell_contents
            except ValueError:
                pass
        return g

    def is_constexpr_param(self, name: str) -> bool:
        return name in self.constexpr_names

    @property
    def cache_key(self) -> str:
        """Hash of this function's source and of everything it depends on (called @jit functions, constexpr
        globals)."""
        if self._cache_key is None:
            self._cache_key = dependencies_hash(self, set())
        return self._cache_key

    # -- use -------------------------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"{self.__name__} is a @jit function: launch it with {self.__name__}[grid](...) or "
                           "call it from another @jit function")

    def __getitem__(self, grid: Any) -> Callable[..., Any]:
        return lambda *args, **kwargs: self.run(*args, grid=grid, warmup=False, **kwargs)

    def run(self, *args: Any, grid: Any, warmup: bool = False, **kwargs: Any) -> Any:
        if knobs.runtime.interpret or self.interpret:
            from ..interpreter import run_interpreted  # type: ignore[import-not-found]
            return run_interpreted(self, args, kwargs, grid, warmup)
        from .launch import launch
        return launch(self, args, kwargs, grid, warmup)

    def warmup(self, *args: Any, grid: Any, **kwargs: Any) -> Any:
        """Compile for these arguments (types or tensors) without launching; returns the compiled kernel."""
        return self.run(*[MockTensor.wrap_dtype(a) for a in args], grid=grid, warmup=True, **kwargs)

    def __repr__(self) -> str:
        return self._repr(self) if self._repr else f"JITFunction({self.module}:{self.fn.__qualname__})"


def dependencies_hash(fn: JITFunction, seen: set) -> str:
    """Hash the function's source with the identity of every global it reads that can change its code."""
    from ..language.core import constexpr
    from ..language.dtypes import dtype
    seen.add(id(fn))
    parts = [fn.src, repr(fn.version), str(fn.noinline)]
    g = fn.get_globals()
    for node in ast.walk(fn.parse()):
        if isinstance(node, ast.Attribute):
            chain = []
            cur: Any = node
            while isinstance(cur, ast.Attribute):
                chain.append(cur.attr)
                cur = cur.value
            if not isinstance(cur, ast.Name) or cur.id not in g:
                continue
            obj = g[cur.id]
            for attr in reversed(chain):
                obj = getattr(obj, attr, None)
                if obj is None:
                    break
            name = cur.id + "." + ".".join(reversed(chain))
        elif isinstance(node, ast.Name) and node.id in g:
            obj, name = g[node.id], node.id
        else:
            continue
        if isinstance(obj, JITFunction):
            if id(obj) not in seen:
                parts.append(f"{name}:{dependencies_hash(obj, seen)}")
        elif isinstance(obj, constexpr):
            parts.append(f"{name}={obj.value!r}")
        elif isinstance(obj, dtype):
            parts.append(f"{name}={obj}")
        elif getattr(obj, "__triton_constexpr_function__", False) and hasattr(obj, "__code__"):
            parts.append(f"{name}:{hashlib.sha256(obj.__code__.co_code).hexdigest()}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def jit(fn: Optional[Callable] = None, *, version: Any = None, repr: Optional[Callable] = None,
        launch_metadata: Optional[Callable] = None, do_not_specialize: Optional[Sequence] = None,
        do_not_specialize_on_alignment: Optional[Sequence] = None, debug: Optional[bool] = None,
        noinline: Optional[bool] = None) -> Any:
    """Decorate a function written in the Triton language (``@jit`` or ``@jit(...)``)."""

    def decorator(f: Callable) -> JITFunction:
        if not callable(f):
            raise TypeError("@jit decorates functions")
        return JITFunction(f, version=version, do_not_specialize=do_not_specialize,
                           do_not_specialize_on_alignment=do_not_specialize_on_alignment, debug=debug,
                           noinline=noinline, repr=repr, launch_metadata=launch_metadata)

    return decorator(fn) if fn is not None else decorator
