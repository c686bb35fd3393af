"""Names of the functions generated for called @jit functions, mangled as Triton mangles them.

Triton names a callee ``<module>.<qualname>__<argument types>__<compile-time values>`` (``mangle_fn`` in its code
generator): ``test.anchor__i32S4S__``, ``test.anchor____(0,)cconstexpr_4_``. Tools and tests that read the IR find
the callee by those names. Here every character MLIR would have to quote in a symbol name (``(``, ``,``, ``<``,
spaces, ``-``) becomes ``_``, so that the names stay plain identifiers through every stage; a name that two
different specializations would share (functions of the same qualified name made in a loop) gets a suffix.
"""
from __future__ import annotations

import hashlib
import re
from typing import Any, Container

from ..language.aggregate import is_aggregate
from ..language.core import base_value, constexpr, tuple_value

_NOT_BARE = re.compile(r"[^A-Za-z0-9_$.]")
#: longer names (many compile-time values) end in a digest of the rest
_MAX = 200


def _leaves(v: Any, path: tuple, types: list, consts: list) -> None:
    if isinstance(v, tuple_value) and not is_aggregate(v):
        for j, x in enumerate(v.values):
            _leaves(x, path + (j, ), types, consts)
        return
    if isinstance(v, base_value) and not isinstance(v, constexpr):
        types.append(v.type.mangle())
        return
    consts.append((path, "None" if v is None else repr(v if isinstance(v, constexpr) else constexpr(v))))


def callee_name(fn: Any, args: list[Any], taken: Container[str]) -> str:
    """The function name for a call of ``fn`` with ``args`` (its parameters' values, in order); ``taken``: the
    names already given to other specializations."""
    types: list[str] = []
    consts: list[tuple[tuple, str]] = []
    for i, v in enumerate(args):
        _leaves(v, (i, ), types, consts)
    cst = "_".join(f"{p}c{r}" for p, r in sorted(consts))
    cst = cst.replace(".", "_d_").replace("'", "_sq_").replace("[", "_").replace("]", "_")
    base = f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', fn.__name__)}".lstrip(".")
    name = _NOT_BARE.sub("_", f"{base}__{'_'.join(types)}__{cst}")
    if len(name) > _MAX:
        name = f"{name[:_MAX - 18]}__{hashlib.sha256(name.encode()).hexdigest()[:16]}"
    if name in taken:
        n = 1
        while f"{name}__{n}" in taken:
            n += 1
        name = f"{name}__{n}"
    return name
