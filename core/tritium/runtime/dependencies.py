"""What a @jit function's cache key is made of: its source and every global it reads that can change its code
(called @jit functions, constexprs, dtypes, aggregates, @constexpr_functions), and which of those globals a launch
watches so that rebinding one forgets the compiled kernels.

Kept apart from ``jit.py`` (the JITFunction object and its launch entry points): this is the hashing policy, the
part that decides when a cached kernel is stale. A callee is recognized by ``DeviceFunction`` (JITFunction's
base) so that this module does not import ``jit.py`` back.
"""
from __future__ import annotations

import ast
import hashlib
import inspect
from typing import TYPE_CHECKING, Any, Optional

from .. import knobs
from ..language.core import constexpr
from ..language.device_function import DeviceFunction
from ..language.dtypes import dtype

if TYPE_CHECKING:
    from .jit import JITFunction


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


_MISSING = _Missing()


def _same_value(a: Any, b: Any) -> bool:
    if isinstance(a, constexpr) and isinstance(b, constexpr):
        a, b = a.value, b.value
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return False


def _constexpr_function_key(obj: Any) -> str:
    """A @constexpr_function's part of a kernel's key: its source, and its code with the constants (bytecode
    alone is the same for ``return 64`` and ``return 128``)."""
    code = obj.__code__
    text = f"{getattr(obj, 'src', '')}\n{code.co_code.hex()}\n{code.co_consts!r}\n{code.co_names!r}"
    return hashlib.sha256(text.encode()).hexdigest()


class _Cell:
    """A closure variable read like a namespace entry (``get``), so that launches notice when it changes."""
    __slots__ = ("name", "cell")

    def __init__(self, name: str, cell: Any) -> None:
        self.name, self.cell = name, cell

    def get(self, name: str, default: Any = None) -> Any:
        try:
            return self.cell.cell_contents if name == self.name else default
        except ValueError:  # an empty cell
            return default


def dependencies_hash(fn: "JITFunction", seen: set, used: Optional[list] = None) -> str:
    """Hash the function's source with the identity of every global it reads that can change its code;
    ``used`` collects (namespace, name, value) of those globals, so that a launch can notice a change."""
    seen.add(id(fn))
    used = [] if used is None else used
    # the first line too, as Triton: compiled code carries line numbers (locations, device_assert messages)
    parts = [fn.src, repr(fn.version), str(fn.noinline), str(fn.first_line)]
    g = fn.get_globals()
    module_globals = fn.fn.__globals__
    cells = {n: _Cell(n, c) for n, c in zip(fn.fn.__code__.co_freevars, fn.fn.__closure__ or ())}
    allow_any = knobs.compilation.allow_non_constexpr_globals
    for node in ast.walk(fn.parse()):
        namespace: Optional[dict] = None
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
                if len(chain) == 1 and inspect.ismodule(obj) and not obj.__name__.startswith("tritium."):
                    namespace = vars(obj)  # mod.NAME of a user module: watch it like a global
                obj = getattr(obj, attr, None)
                if obj is None:
                    break
            name = cur.id + "." + ".".join(reversed(chain))
            key_name = chain[0]
        elif isinstance(node, ast.Name) and node.id in g:
            obj, name = g[node.id], node.id
            key_name = name
            if module_globals.get(name, _MISSING) is obj:
                namespace = module_globals
            elif name in cells:
                namespace = cells[name]
        else:
            continue
        if isinstance(obj, DeviceFunction):
            if id(obj) not in seen:
                parts.append(f"{name}:{dependencies_hash(obj, seen, used)}")
        elif isinstance(obj, type) and getattr(obj, "__triton_aggregate__", False):
            # an aggregate class's fields and methods are part of the kernel's code (its @jit methods hashed as
            # called functions are): editing one must not serve the old compiled kernel from the cache
            parts.append(f"{name}:{_aggregate_key(obj, seen, used)}")
        elif isinstance(obj, constexpr):
            parts.append(f"{name}={obj.value!r}")
        elif isinstance(obj, dtype):
            parts.append(f"{name}={obj}")
        elif getattr(obj, "__triton_constexpr_function__", False) and hasattr(obj, "__code__"):
            parts.append(f"{name}:{_constexpr_function_key(obj)}")
        elif allow_any and isinstance(obj, (int, float, bool, str)):
            parts.append(f"{name}={obj!r}")
        else:
            continue
        if namespace is not None and not any(ns is namespace and n == key_name for ns, n, _ in used):
            used.append((namespace, key_name, obj))
            if isinstance(obj, constexpr) and hasattr(obj, "__dict__"):
                # assigning its `.value` in place changes the kernel too: watched like a global, at the cost of
                # one more dictionary lookup per launch
                used.append((vars(obj), "value", obj.value))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _aggregate_key(cls: type, seen: set, used: list) -> str:
    from ..language.aggregate import cache_key
    return cache_key(cls, lambda f: "" if id(f) in seen else dependencies_hash(f, seen, used))
