"""The per-kernel generated code that turns a launch's arguments into the specialization key.

:func:`binder_code` writes, once per kernel, the Python statements that key every parameter (the common
argument types -- int, float, torch tensor, numpy array -- inline, without a call; anything else through
:func:`.specialize.specialize_arg`, passed in with the other helpers). :func:`make_binder` wraps them into
``binder(*args, **kwargs) -> (key, runtime, bound, options)``; :mod:`.dispatch` wraps the same statements into
the cached launch itself.

The statements name the parameters ``a0, a1, ...`` (a parameter may be called like one of the helpers the
code uses); :func:`rename` gives the compiled function the real names back, so that Python's own binding
errors ("store() missing 1 required positional argument: 'value'") and keyword arguments use them.
"""
from __future__ import annotations

import inspect
import sys
import types
from typing import Any, Callable, Optional

from ..backends.driver import PINNED_HOST
from .annotations import annotated_binder


class BinderCode:
    """The pieces of a kernel's argument binding: ``sig`` the parameters (``a0``, ``a1=_d1``, ``*`` before the
    keyword-only ones), ``body`` statements computing ``keys[i]`` and ``runtime[j]`` (expressions over the
    parameters), ``ns`` the names they read, ``pre`` a prefix no parameter name starts with (for locals)."""
    __slots__ = ("ns", "sig", "body", "keys", "runtime", "names", "pre")

    def __init__(self, ns: dict, sig: list, body: list, keys: list, runtime: list, names: list, pre: str) -> None:
        self.ns, self.sig, self.body, self.keys, self.runtime, self.names, self.pre = \
            ns, sig, body, keys, runtime, names, pre


#: the constexpr types whose key holds the value itself, ``('C', type, value)``; others go through ``_const``
CONSTEXPR_VALUE_TYPES = frozenset((int, float, bool, str, type(None)))


def own_type_test(tensor: Any, device_type: Optional[str]) -> bool:
    """Whether the binder tests a torch tensor's location with ``x.is_<device_type>`` first (exactly when
    ``device.type`` is that type) instead of building ``x.device``."""
    return bool(device_type and device_type != "cpu" and device_type.isidentifier() and
                isinstance(getattr(tensor, f"is_{device_type}", None), types.GetSetDescriptorType))


def binder_code(fn: Any, helpers: dict, device_type: Optional[str] = None, pinned_apart: bool = False) -> BinderCode:
    """The binding statements of ``fn``'s parameters. ``helpers``: :func:`.specialize.binder_helpers` (passed
    in: specialize builds binders, and must not be imported from here). ``device_type``: the active driver's,
    whose torch tensors get a cheap location test (``x.is_<type>``) instead of ``x.device.type`` (which
    builds a device object). ``pinned_apart``: a pinned CPU tensor's location is ``PINNED_HOST``
    (backends.driver.tells_pinned_apart: the driver reaches pinned host memory only)."""
    ns = dict(helpers)
    numpy_address, numpy_words = ns.pop("_numpy_address"), ns.pop("_numpy_words")
    torch, np = sys.modules.get("torch"), sys.modules.get("numpy")
    # pinned or not (is_pinned is a call, paid only by CPU tensors on a driver that tells them apart)
    host = f"({PINNED_HOST!r} if {{n}}.is_pinned() else 'cpu')" if pinned_apart else "'cpu'"
    location = f"{host} if {{n}}.is_cpu else {{n}}.device.type"
    if torch is not None and getattr(torch, "Tensor", None) is not None:
        ns["_Tensor"] = torch.Tensor
        if own_type_test(torch.Tensor, device_type):
            # torch's is_<type> is true exactly when device.type is <type>; the driver's own type first, as
            # its tensors are the ones launches take
            location = f"{device_type!r} if {{n}}.is_{device_type} else {location}"
    np_address = "_np_addr({n})"
    if np is not None and getattr(np, "ndarray", None) is not None:
        ns["_ndarray"], ns["_np_addr"] = np.ndarray, numpy_address()
        words = numpy_words()
        if words is not None:  # the data pointer read in place, without a call (see specialize.numpy_words)
            ns["_np_words"], ns["_np_off"] = words
            np_address = "_np_words[(id({n}) + _np_off) >> 3]"
    sig: list[str] = []
    body: list[str] = []
    keys: list[str] = []
    runtime: list[str] = []
    pre = "__"
    while any(p.name.startswith(pre) for p in fn.params):
        pre += "_"
    ns["_simple"] = CONSTEXPR_VALUE_TYPES
    for p in fn.params:
        n = f"a{p.num}"
        kind = p._param.kind
        if kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise TypeError(f"kernel `{fn.__name__}` takes {'*' if kind == inspect.Parameter.VAR_POSITIONAL else '**'}"
                            f"{p.name}: @jit kernels need every parameter named (give meta-parameters as "
                            "`NAME: tl.constexpr`)")
        if kind == inspect.Parameter.KEYWORD_ONLY and "*" not in sig:
            sig.append("*")
        if p.has_default:
            ns[f"_d{p.num}"] = p.default
            sig.append(f"{n}=_d{p.num}")
        else:
            sig.append(n)
        if p.is_constexpr:
            keys.append(f"(('C', type({n}), {n}) if type({n}) in _simple else _const({n}))")
            continue
        spec, align = not p.do_not_specialize, not p.do_not_specialize and not p.do_not_specialize_on_alignment
        k, r = f"{pre}k{p.num}", f"{pre}r{p.num}"
        keys.append(k)
        runtime.append(r)
        if p.annotation_type:
            ns[f"_a{p.num}"] = annotated_binder(fn, p, spec, align, ns["_spec"])
            body.append(f"{k}, {r} = _a{p.num}({n})")
            continue
        ns[f"_k{p.num}_D"], ns[f"_k{p.num}_"] = ("i32", "D" if align else ""), ("i32", "")
        int_fast = (f"_k{p.num}_ if {n} != 1 and {n} & 15 else _ONE if {n} == 1 else _k{p.num}_D"
                    if spec else f"_k{p.num}_")
        body += [
            f"{pre}t = type({n})",
            f"if {pre}t is int and -0x80000000 <= {n} <= 0x7fffffff:",
            f"    {k} = {int_fast}; {r} = {n}",
        ]
        # arrays of the libraries already loaded get a branch of their own: no call, no dispatch
        if "_Tensor" in ns:
            body += [
                f"elif {pre}t is _Tensor:",
                f"    {r} = {n}.data_ptr()",
                f"    {k} = ('*', {n}.dtype, {location.format(n=n)}, {_aligned(r, align)})",
            ]
        if "_ndarray" in ns:
            body += [
                f"elif {pre}t is _ndarray:",
                f"    {r} = {np_address.format(n=n)}",
                f"    {k} = ('*', {n}.dtype, 'cpu', {_aligned(r, align)})",
            ]
        body += [
            "else:",
            f"    {pre}h = _H.get({pre}t)",
            f"    {k}, {r} = {pre}h({n}, {align}) if {pre}h is not None else _spec({n}, {spec}, {align})",
        ]
    return BinderCode(ns, sig, body, keys, runtime, [f"a{p.num}" for p in fn.params], pre)


def tuple_expr(items: list[str]) -> str:
    return f"({', '.join(items)}{',' if len(items) == 1 else ''})"


def make_binder(fn: Any, helpers: dict, device_type: Optional[str] = None,
                pinned_apart: bool = False) -> Callable[..., tuple]:
    """``binder(*args, **kwargs) -> (key, runtime, bound, options)`` for one JITFunction (called as
    :func:`.specialize.make_binder`).

    ``runtime`` holds one value per non-constexpr parameter (an address for arrays), ``bound`` every
    parameter's value, ``options`` the keyword arguments that are not parameters (``num_warps``...).
    Python's own argument binding gives the TypeErrors for missing or repeated arguments.
    """
    code = binder_code(fn, helpers, device_type, pinned_apart)
    pre = code.pre
    src = "\n".join([
        f"def binder({', '.join(code.sig + [f'**{pre}options'])}):",
        *("    " + line for line in code.body),
        f"    return {tuple_expr(code.keys)}, {tuple_expr(code.runtime)}, {tuple_expr(code.names)}, {pre}options",
    ])
    exec(compile(src, f"<binder of {fn.__name__}>", "exec"), code.ns)
    return rename(code.ns["binder"], fn)


def _aligned(addr: str, align: bool) -> str:
    return f"not {addr} & 15" if align else "False"


def rename(inner: Callable, fn: Any, lead: int = 0) -> Callable:
    """``inner`` with its parameters ``a0, a1, ...`` (after ``lead`` others) called as ``fn``'s, and named
    after ``fn``."""
    code = inner.__code__
    names = tuple(p.name for p in fn.params)
    varnames = code.co_varnames[:lead] + names + code.co_varnames[lead + len(names):]
    if len(set(varnames)) != len(varnames):
        clash = sorted(set(names) & set(code.co_varnames[:lead] + code.co_varnames[lead + len(names):]))
        raise ValueError(f"parameter name(s) {clash} of {fn.__name__} clash with the launcher's own")
    new = code.replace(co_varnames=varnames, co_name=fn.__name__, co_qualname=fn.__name__)
    out = types.FunctionType(new, inner.__globals__, fn.__name__, inner.__defaults__, inner.__closure__)
    if inner.__kwdefaults__:
        out.__kwdefaults__ = {fn.params[int(k[1:])].name: v for k, v in inner.__kwdefaults__.items()}
    return out
