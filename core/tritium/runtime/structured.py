"""Tuple and host tensor-descriptor arguments: their specialization keys, signatures and run-time values.

A tuple argument is specialized element by element with the rules of plain arguments (an int equal to 1
or a ``tl.constexpr`` element is compiled in, arrays and ints get their divisibility); its key entry is
``("()", element keys, field names or None)`` and its run-time value the tuple of its elements' values.
As in Triton, the signature of a tuple parameter is a tuple of type strings (``("*fp32", "i32",
"constexpr")``) and its compile-time elements are keyed by their path (``(param, element, ...)``).

A host ``TensorDescriptor`` travels as its base address, its shape (int32) and all strides but the last
(int64; the last is 1 by construction); its key is ``("TD", dtype, location, block shape, padding, innermost extent a multiple of 16)`` and
its signature Triton's ``tensordesc<fp16[64, 64]>`` (``tensordesc<fp32[16, 16],padding=nan>`` for NaN
padding, which changes the compiled code here). The frontend rebuilds the descriptor from those values
with the same operation ``tl.make_tensor_descriptor`` emits, so backends see nothing new.

Only launches that pass such arguments reach this module: the binder's fast paths never do.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from ..language.core import constexpr
from .specialize import MockTensor, dtype_name, specialize_arg


def descriptor_signature(dtype: Any, block: tuple, padding: str) -> str:
    text = f"tensordesc<{dtype_name(dtype)}[{', '.join(map(str, block))}]"
    return text + (",padding=nan>" if padding == "nan" else ">")


def structured_inputs(p: Any, k: tuple, v: Any, path: tuple, rpath: tuple, constexprs: dict, attrs: dict,
                      keep: list) -> Any:
    """Signature of one argument (or tuple element) at ``path``; fills ``constexprs``, ``attrs`` and the
    run-time paths the kernel takes (``keep``)."""
    tag = k[0]
    if tag == "C":
        constexprs[path] = v.value if isinstance(v, constexpr) else v
        return "constexpr"
    if tag == "()":
        sig = tuple(structured_inputs(p, sk, sv, path + (j, ), rpath + (j, ), constexprs, attrs, keep)
                    for j, (sk, sv) in enumerate(zip(k[1], v)))
        if k[2] is not None and hasattr(type(v), "_make"):
            sig = type(v)._make(sig)  # a namedtuple's signature keeps its fields, as Triton's
        return sig
    if tag == "TD":
        nparts = 2 * len(k[3])  # base, ndim shape entries, ndim - 1 strides
        keep.extend(rpath + (j, ) for j in range(nparts))
        if len(k) > 5 and k[5]:     # the innermost extent, a multiple of 16 (kernel_args.flat_args' path)
            attrs[path + (len(k[3]), )] = [["tt.divisibility", 16]]
        return descriptor_signature(k[1], k[3], k[4])
    keep.append(rpath)
    if tag == "*":
        if k[3]:
            attrs[path] = [["tt.divisibility", 16]]
        return ("*k" if p.is_const and len(path) == 1 else "*") + dtype_name(k[1])
    if k[1] == "D":
        attrs[path] = [["tt.divisibility", 16]]
    return k[0]


def structured_locations(name: str, k: tuple, v: Any, out: list) -> None:
    """(argument name, location) of the arrays inside a tuple or descriptor argument."""
    if k[0] == "()":
        for j, (sk, sv) in enumerate(zip(k[1], v)):
            structured_locations(f"{name}[{j}]", sk, sv, out)
    elif k[0] == "TD" and not isinstance(v.base, MockTensor):
        out.append((f"{name}.base", k[2]))
    elif k[0] == "*" and not isinstance(v, MockTensor):
        out.append((name, k[2]))


def path_selector(keep: tuple) -> Callable[[tuple], tuple]:
    """A function picking the run-time values at ``keep`` (ints and paths into tuples) as one flat tuple;
    generated, since it runs on every launch of a kernel taking tuples or descriptors."""
    parts = []
    for item in keep:
        path = (item, ) if isinstance(item, int) else item
        parts.append("r" + "".join(f"[{i}]" for i in path))
    src = f"lambda r: ({', '.join(parts)}{',' if len(parts) == 1 else ''})"
    return eval(src)  # noqa: S307 - built from integers only


def bind_error(fn: Any, args: tuple, kwargs: dict, exc: Exception) -> Optional[Exception]:
    """The same error naming the kernel and the argument it is about, or None when no single argument is
    at fault (Python's own binding errors already name the function)."""
    try:
        bound = fn.signature.bind(*args, **{k: v for k, v in kwargs.items() if k in fn.arg_names})
    except TypeError:
        return None
    for p in fn.params:
        if p.is_constexpr or p.name not in bound.arguments:
            continue
        v = bound.arguments[p.name]
        try:
            specialize_arg(v, not p.do_not_specialize, True)
        except (TypeError, ValueError, OverflowError) as e:
            what = "a tuple" if isinstance(v, tuple) else type(v).__name__
            return type(e)(f"argument `{p.name}` ({what}) of kernel `{fn.__name__}`: {e}")
    return None


def flatten_for_signature(sig: Any, value: Any) -> list:
    """The IR arguments a compiled kernel takes for one tuple or descriptor argument, by its signature
    entry (a direct launch of a CompiledKernel has no specialization key to go by)."""
    if isinstance(sig, tuple):
        out: list = []
        for s, v in zip(sig, value):
            out += flatten_for_signature(s, v)
        return out
    if sig == "constexpr":
        return []
    return list(value) if isinstance(sig, str) and sig.startswith("tensordesc") else [value]

