"""``@jit``: kernels and device functions, their specialization, caches and launches."""
from __future__ import annotations

import ast
import inspect
import re
import textwrap
from types import MethodType
from typing import Any, Callable, Optional, Sequence

from .. import knobs
from ..language.constexpr_function import ConstexprFunction  # noqa: F401,E402  (Triton's home for the class)
from ..language.core import _ambient_semantic, const, constexpr
from ..language.device_function import DeviceFunction
from .annotations import annotation_type
from .dependencies import _MISSING, _same_value, dependencies_hash  # noqa: F401  (dependencies_hash: old path)
from .device_caches import DeviceCaches
from .specialize import MockTensor, TensorWrapper, reinterpret  # noqa: F401
from .triton_specialize import mangle_type, native_specialize_impl  # noqa: F401  (Triton's names, for inductor)


class KernelParam:
    def __init__(self, num: int, param: inspect.Parameter, do_not_specialize: bool,
                 do_not_specialize_on_alignment: bool) -> None:
        self.num = num
        self.name = param.name
        self._param = param
        self.do_not_specialize = do_not_specialize
        self.do_not_specialize_on_alignment = do_not_specialize_on_alignment
        ann = param.annotation
        self.is_constexpr = ann is constexpr or (isinstance(ann, str) and ann.split(".")[-1] == "constexpr")
        self.is_const = ann is const or (isinstance(ann, str) and ann.split(".")[-1] == "const")
        self.annotation = ann
        #: the signature type the annotation fixes ("u8", "fp16", "*fp16"...), "" if none (Triton's name)
        self.annotation_type = "" if self.is_constexpr else annotation_type(ann)
        if self.annotation_type.startswith("*k"):
            self.is_const = True
        self.default = param.default
        self.has_default = param.default is not inspect.Parameter.empty


class KernelInterface:
    """What can be launched as ``kernel[grid](*args)``: anything with ``run(*args, grid=, warmup=, **kwargs)``
    (Triton's name; libraries derive their own launchers from it)."""

    def run(self, *args: Any, grid: Any, warmup: bool = False, **kwargs: Any) -> Any:
        raise NotImplementedError

    def __getitem__(self, grid: Any) -> Callable[..., Any]:
        run = self.run
        return lambda *args, **kwargs: run(*args, grid=grid, warmup=False, **kwargs)


class JITFunction(KernelInterface, DeviceFunction):
    """A Python function compiled for devices: a kernel (launched with ``fn[grid](...)``) or a device
    function (called from other @jit functions)."""
    # What every cached launch reads (jit's __getitem__, dispatch.py's frame) lives in slots: an attribute kept
    # in the instance dict costs ~300 instructions a read once that dict exists as a dict (any ``__dict__``
    # access makes it one, as __getitem__'s own does), a slot ~45 (callgrind, CPython 3.11).
    __slots__ = ("pre_run_hooks", "interpret", "debug", "used_globals", "device_caches", "_hot_path")

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
            src = textwrap.dedent("".join(lines))
            # as Triton's, the source starts at `def`: code generators (torch inductor) copy it under their own
            # decorator, or parse "def " + src; first_line stays the line of src's first line
            at = re.search(r"^def\s+\w+\s*\(", src, re.MULTILINE)
            if at is not None:
                start += src.count("\n", 0, at.start())
                src = src[at.start():]
            self._src: Optional[str] = src
            self.filename = inspect.getsourcefile(fn) or "<unknown>"
            self.first_line = start
        except (OSError, TypeError):
            # defined by exec() or at a prompt: the interpreter runs the function object itself, and the
            # compiler waits for _unsafe_update_src (Triton accepts such functions on the same terms)
            self._src = None
            code = getattr(fn, "__code__", None)
            self.filename = getattr(code, "co_filename", "<unknown>")
            self.first_line = getattr(code, "co_firstlineno", 1)
        self._tree: Optional[ast.Module] = None
        self._cache_key: Optional[str] = None
        #: driver -> KernelState (binder and compiled kernels); clearing it forgets the in-memory kernels. Indexed
        #: by a device, it reads as Triton's (kernel_cache, kernel_key_cache, target, backend, binder)
        self.device_caches: dict[Any, Any] = DeviceCaches(self)
        #: (namespace, name, value) of the globals this function and its callees read, checked on launch
        self.used_globals: list[tuple[dict, str, Any]] = []
        self.constexprs = [p.num for p in self.params if p.is_constexpr]
        self.__name__ = fn.__name__
        self.__qualname__ = fn.__qualname__
        self.__doc__ = fn.__doc__
        self.__globals__ = fn.__globals__
        self.__module__ = fn.__module__
        self.pre_run_hooks: list[Callable] = []
        #: run this kernel in the interpreter even when TRITON_INTERPRET is off
        self.interpret = False
        #: the generated cached launch (runtime/dispatch.py), made by the first compiled launch
        self._hot_path: Any = None

    def _indices(self, names: Optional[Sequence]) -> set[int]:
        out = set()
        for n in names or ():
            if isinstance(n, str):
                if n in self.arg_names:   # Triton ignores names that are not parameters (FlagGems has some)
                    out.add(self.arg_names.index(n))
            else:
                out.add(int(n))
        return out

    # -- source and identity ---------------------------------------------------------------------
    @property
    def src(self) -> Optional[str]:
        """The function's source (``None`` when Python kept none); replace it with ``_unsafe_update_src``."""
        return self._src

    @src.setter
    def src(self, value: Any) -> None:
        raise AttributeError(f"the source of @jit function {self.__name__} cannot be assigned: call "
                             f"{self.__name__}._unsafe_update_src(new_src) (and reset the callers' caches)")

    def _unsafe_update_src(self, new_src: str) -> None:
        """Replace the source this function compiles from (Triton's name: nothing checks that it still matches
        the Python function's signature). Forgets this function's parse, hash and compiled kernels; @jit
        functions that call it keep theirs until their own caches are cleared, as in Triton."""
        if not isinstance(new_src, str):
            raise TypeError(f"_unsafe_update_src of {self.__name__} takes the new source as a str, "
                            f"got {type(new_src).__name__}")
        self._src = textwrap.dedent(new_src)
        self._tree = None
        self._cache_key = None
        self.used_globals = []
        self.device_caches.clear()

    def parse(self) -> ast.Module:
        if self._tree is None:
            if self._src is None:
                raise ValueError(f"@jit function {self.__name__} ({self.filename}:{self.first_line}) has no source "
                                 "code: it was defined by exec() or at an interactive prompt. Define it in a file, "
                                 "give its source with "
                                 f"{self.__name__}._unsafe_update_src(source), or run it in the interpreter "
                                 "(TRITON_INTERPRET=1)")
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
            used: list[tuple[dict, str, Any]] = []
            self._cache_key = dependencies_hash(self, set(), used)
            self.used_globals = used
        return self._cache_key

    @property
    def hash(self) -> Optional[str]:
        """Triton's attribute for the computed ``cache_key`` (None until computed). Assigning None forgets it,
        as Triton's tests do after changing a called function's ``noinline``; callers' own keys stay until
        they are reset too, as in Triton."""
        return self._cache_key

    @hash.setter
    def hash(self, value: Optional[str]) -> None:
        self._cache_key = value
        if value is None:
            self.used_globals = []

    def check_globals(self) -> None:
        """Forget the compiled kernels when a global they were built from now has another value."""
        for namespace, name, value in self.used_globals:
            current = namespace.get(name, _MISSING)
            if current is not value and not _same_value(current, value):
                self._cache_key = None
                self.used_globals = []
                self.device_caches.clear()
                return

    def add_pre_run_hook(self, hook: Callable) -> None:
        """Call ``hook(*args, **kwargs)`` before every launch."""
        if not callable(hook):
            raise TypeError(f"pre-run hook of {self.__name__} must be callable, got {hook!r}")
        self.pre_run_hooks.append(hook)

    # -- use -------------------------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        ambient = _ambient_semantic.get()
        if ambient is not None and hasattr(ambient, "launch"):
            # a kernel the interpreter runs unrewritten (no source) calls this device function directly
            return ambient.launch.call_jit(self, args, kwargs)
        raise RuntimeError(f"{self.__name__} is a @jit function: launch it with {self.__name__}[grid](...) or "
                           "call it from another @jit function")

    def __getitem__(self, grid: Any) -> Callable[..., Any]:
        try:
            hot = self._hot_path
        except AttributeError:  # an instance made without __init__
            hot = None
        # the generated launch bound to the grid: one frame per launch. A run() patched onto the class or the
        # instance, and pre-run hooks (which see the arguments as given), take the general route.
        if hot is not None and hot.fn is self and not self.pre_run_hooks and type(self).run is _RUN and \
                "run" not in hot.attrs:
            seen = hot.bound
            if grid is seen[0]:
                return seen[1]
            if grid is not None:
                launch = MethodType(hot.call, grid)
                hot.bound = (grid, launch)
                return launch
        return _bound_run(self.run, grid)

    def run(self, *args: Any, grid: Any, warmup: bool = False, **kwargs: Any) -> Any:
        """Launch on ``grid`` (or only compile, with ``warmup=True``); returns the compiled kernel."""
        try:
            hot = self._hot_path
        except AttributeError:  # an instance made without __init__
            hot = None
        if hot is not None and hot.fn is self and not warmup and not self.pre_run_hooks:
            return hot.call(grid, *args, **kwargs)
        return self._run(args, kwargs, grid, warmup)

    def _hot_eligible(self) -> bool:
        """Whether launches may take a generated frame (runtime/dispatch.py): no parameter is called like one
        of run's keywords (``kernel[g](x, grid=...)`` must stay an error)."""
        return not {"grid", "warmup"} & set(self.arg_names)

    def _run(self, args: tuple, kwargs: dict, grid: Any, warmup: bool) -> Any:
        if self.interpret or knobs.runtime.interpret:
            from ..interpreter import run_interpreted  # type: ignore[import-not-found]
            return run_interpreted(self, args, kwargs, grid, warmup)
        return _launch(self, args, kwargs, grid, warmup)

    def warmup(self, *args: Any, grid: Any = None, **kwargs: Any) -> Any:
        """Compile for these arguments without launching; returns the compiled kernel. Arrays may be given as
        their element type (``torch.float32``, ``tl.float32``, ``"*fp32"``); a ``tl.constexpr`` parameter takes
        a dtype as itself."""
        by_name = {p.name: p for p in self.params}

        def wrap(p: Optional[KernelParam], a: Any) -> Any:
            return a if p is not None and p.is_constexpr else MockTensor.wrap_dtype(a)

        return self.run(*[wrap(self.params[i] if i < len(self.params) else None, a) for i, a in enumerate(args)],
                        grid=grid, warmup=True, **{k: wrap(by_name.get(k), v) for k, v in kwargs.items()})

    def preload(self, specialization_data: str) -> Any:
        """Compile the kernel that a ``jit_cache_hook``'s ``compile["specialization_data"]`` describes (written
        by this or another process) and keep it for this process's launches with arguments that specialize the
        same way, which then run without compiling; returns the CompiledKernel."""
        from .preload import preload
        return preload(self, specialization_data)

    def __repr__(self) -> str:
        # not the repr= given to @jit: that one names specializations (it reads .signature and .constants)
        return f"JITFunction({self.module}:{self.fn.__qualname__})"

    # -- Triton's attribute names, which torch inductor saves, clears and restores around pickling a kernel
    @property
    def repr(self) -> Callable[[Any], str]:
        """Triton's ``fn.repr(fn)``: the name profilers and hooks show (the ``repr=`` given to @jit, else the
        function's name)."""
        return self.__dict__.get("_repr_override") or (
            lambda _: self.__name__ if self._repr is None else self._repr(_))

    @repr.setter
    def repr(self, value: Callable[[Any], str]) -> None:
        self.__dict__["_repr_override"] = value

    @property
    def used_global_vals(self) -> dict:
        """Triton's view of ``used_globals``: ``{(name, id(namespace)): (value, namespace)}``."""
        return {(name, id(ns)): (value, ns) for ns, name, value in self.used_globals}

    @used_global_vals.setter
    def used_global_vals(self, vals: Optional[dict]) -> None:
        self.used_globals = [(ns, name, value) for (name, _), (value, ns) in (vals or {}).items()]


_RUN = JITFunction.run  # what __getitem__ compares with: a run() patched onto the class is called instead


def _bound_run(run: Callable[..., Any], grid: Any) -> Callable[..., Any]:
    """``kernel[grid]`` off the generated launch. A function of its own: a lambda in __getitem__ would make its
    ``grid`` and ``run`` closure cells, built on every call, the cached launch's too (~400 instructions)."""
    return lambda *args, **kwargs: run(*args, grid=grid, warmup=False, **kwargs)


def _launch(fn: JITFunction, args: tuple, kwargs: dict, grid: Any, warmup: bool) -> Any:
    global _launch
    from .launch import launch
    _launch = launch  # imported on first use: the runtime's launch path is not needed to define kernels
    return launch(fn, args, kwargs, grid, warmup)


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
