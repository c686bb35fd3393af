"""Refusing array arguments that a kernel cannot address safely.

A kernel sees an array as its data pointer and addresses memory forward from it, so two kinds of host arrays
would make native code read or write memory it must not: views with a negative stride (``x[::-1]``: the
pointer is at the last element in memory, and the kernel walks past the end), and read-only memory that the
kernel stores to (``flags.writeable=False``, ``np.frombuffer`` of a ``bytes`` object, a ``np.memmap`` opened
with ``mode="r"``, which faults). Which arguments a kernel may store to is in its metadata (``written_args``,
see :mod:`tritium.compiler.written`); an array the kernel only loads may be read-only.

Non-contiguous views with positive strides are accepted: as in Triton, the kernel takes the layout the user
passes (its strides as arguments). Torch tensors cannot have negative strides and do not record being
read-only, so they pass unchecked. Objects seen only through DLPack are checked when their producer speaks
DLPack 1.0 (which carries a read-only flag); older producers' memory counts as writable.

The check runs on every launch (the specialization key does not tell these arrays apart), as a function
generated per compiled kernel that looks only at its numpy-like array arguments.
"""
from __future__ import annotations

import linecache
from typing import Any, Callable, Optional

from .dlpack import dlpack_layout


class UnsafeArgumentError(ValueError):
    """An array argument the kernel cannot use safely (a negative stride, or read-only memory it writes)."""


def negative_stride_message(kernel: str, name: str, strides: Any) -> str:
    return (f"argument `{name}` of kernel `{kernel}` is a view with a negative stride (strides {tuple(strides)} "
            "in bytes, e.g. x[::-1]): a kernel addresses memory forward from the data pointer and would go "
            f"outside the array. Pass a copy in memory order: np.ascontiguousarray({name}) or {name}.copy()")


def read_only_message(kernel: str, name: str, where: Optional[str] = None) -> str:
    """``where``: "file:line:column" (1-based column) of a store to the argument, shown with a caret."""
    msg = (f"argument `{name}` of kernel `{kernel}` is read-only memory (its writeable flag is off: e.g. "
           "np.frombuffer of a bytes object, a np.memmap opened with mode='r', or flags.writeable=False) and the "
           f"kernel stores to it. Pass a writable array: {name}.copy(), a bytearray-backed buffer, or a memmap "
           "opened with mode='r+'")
    return msg + _source_excerpt(where)


def _source_excerpt(where: Optional[str]) -> str:
    if not where:
        return ""
    path, _, rest = where.rpartition(":")
    path, _, line = path.rpartition(":")
    try:
        lineno, col = int(line), int(rest)
    except ValueError:
        return ""
    text = linecache.getline(path, lineno).rstrip("\n")
    if not text.strip():
        return f"\nit is written at {path}:{lineno}"
    indent = len(text) - len(text.lstrip())
    caret = " " * (4 + max(col - 1 - indent, 0)) + "^"
    return f"\nit is written at {path}:{lineno}:\n    {text.strip()}\n{caret}"


def _layout(obj: Any) -> tuple[tuple, bool]:
    """(strides in bytes, read-only?) of a numpy-like array; ((), False) for what cannot be told."""
    if type(obj).__name__ == "TensorWrapper":
        obj = obj.base
    if type(obj).__module__.startswith("torch") or hasattr(obj, "data_ptr"):
        return (), False
    flags = getattr(obj, "flags", None)
    if flags is not None and hasattr(obj, "strides") and hasattr(flags, "writeable"):
        return tuple(obj.strides), not flags.writeable
    iface = getattr(obj, "__array_interface__", None)
    if not isinstance(iface, dict):
        if hasattr(obj, "__dlpack__"):
            return dlpack_layout(obj)
        return (), False
    data = iface.get("data")
    return tuple(iface.get("strides") or ()), bool(data[1]) if isinstance(data, tuple) and len(data) > 1 else False


def is_read_only(obj: Any) -> bool:
    return _layout(obj)[1]


def check_array(kernel: str, name: str, obj: Any, written: bool, where: Optional[str] = None) -> None:
    """Raise :class:`UnsafeArgumentError` if ``obj`` (an array argument) cannot be passed safely; ``where`` is
    the source location of a store to it, for the message."""
    strides, readonly = _layout(obj)
    if any(s < 0 for s in strides):
        raise UnsafeArgumentError(negative_stride_message(kernel, name, strides))
    if readonly and written:
        raise UnsafeArgumentError(read_only_message(kernel, name, where))


def _is_torch_dtype(dt: Any) -> bool:
    return type(dt).__module__.startswith("torch")


def array_leaves(fn: Any, key: tuple) -> list[tuple[int, str, tuple, Any]]:
    """(IR argument index, display name, path into the parameter's value, element dtype) of every array in a
    specialization key, in the kernel's argument order; a path step "base" is a tensor descriptor's base."""
    out: list[tuple[int, str, tuple, Any]] = []
    j = 0

    def walk(k: tuple, name: str, path: tuple) -> None:
        nonlocal j
        tag = k[0]
        if tag == "C":
            return
        if tag == "()":
            for e, sk in enumerate(k[1]):
                walk(sk, f"{name}[{e}]", path + (e, ))
            return
        if tag == "TD":
            out.append((j, f"{name}.base", path + ("base", ), k[1]))
            j += 2 * len(k[3])
            return
        if tag == "*":
            out.append((j, name, path, k[1]))
        j += 1

    for i, (p, k) in enumerate(zip(fn.params, key)):
        walk(k, p.name, (i, ))
    return out


def make_guard(fn: Any, key: tuple, kernel: Any) -> Optional[Callable[[tuple], None]]:
    """``guard(bound)`` checking the numpy-like array arguments of one specialization, or None when it has
    none. Arrays the kernel never writes (by its metadata) may be read-only."""
    leaves = [leaf for leaf in array_leaves(fn, key) if not _is_torch_dtype(leaf[3])]
    if not leaves:
        return None
    md = getattr(kernel, "metadata_dict", None) or {}
    recorded = md.get("written_args")
    writes = None if recorded is None else set(recorded)
    at = md.get("written_at") or {}
    import numpy as np
    ns: dict[str, Any] = {"_nd": np.ndarray, "_check": check_array, "_kernel": fn.__name__}
    lines = ["def guard(b):"]
    for n, (j, name, path, _) in enumerate(leaves):
        written = writes is None or j in writes
        ns[f"_n{n}"] = name
        ns[f"_w{n}"] = at.get(str(j))
        expr = f"b[{path[0]}]"
        for step in path[1:]:
            expr = f"{expr}.base" if step == "base" else f"{expr}[{step}]"
        # the common case (a contiguous, writable ndarray) costs one flags lookup
        ok = "f.writeable and f.forc" if written else "f.forc"  # forc: C- or Fortran-contiguous
        lines += [f"    a = {expr}",
                  "    if type(a) is _nd:",
                  "        f = a.flags",
                  f"        if not ({ok}):",
                  f"            _check(_kernel, _n{n}, a, {written}, _w{n})",
                  "    else:",
                  f"        _check(_kernel, _n{n}, a, {written}, _w{n})"]
    exec(compile("\n".join(lines), f"<argument checks of {fn.__name__}>", "exec"), ns)
    return ns["guard"]
