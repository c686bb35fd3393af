"""``JITFunction.preload(specialization_data)``: compile a kernel from the text a cache hook got, into the cache
the launches of this process look in.

The text (:mod:`tritium.compiler.specialization`) carries the launch's specialization key. Arguments that key
the same way are rebuilt from it (an int divisible by 16 or not, an array stand-in of the right element type,
place and alignment, the compile-time values themselves) and go through the ordinary warmup, so that the
kernel is stored under exactly the entry a later launch with real arguments computes, and that launch does not
compile. The rebuilt arguments are checked to key as the text says before anything is compiled.
"""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from ..compiler.specialization import launch_inputs, read
from ..language.core import constexpr
from .driver import driver

# ints that key as each scalar type (not 1, which is compiled in), divisible by 16 ("D") or not ("")
_INTS = {"i64": 2**32, "u64": 2**63}


class _ArrayStandIn:
    """What the binder sees of an array it keys: element type, place and address (aligned or not)."""

    def __init__(self, dtype: Any, place: str, aligned: bool) -> None:
        self.dtype = dtype
        self.device = SimpleNamespace(type=place)
        self._address = 0 if aligned else 8

    def data_ptr(self) -> int:
        return self._address


def _argument(fn: Any, name: str, k: tuple) -> Any:
    tag = k[0]
    if tag == "C":
        if k[1] is not type(k[2]) and k[1] is not type(None) and isinstance(k[2], str):
            raise ValueError(f"{fn.__name__}.preload: the compile-time value of `{name}` ({k[2]}) was not hashable "
                             "and is known only by its repr: pass it to a warmup instead")
        return constexpr(k[2])  # keys as compile-time wherever it sits (a plain 2 in a tuple would be an i32)
    if tag == "*":
        return _ArrayStandIn(k[1], k[2], bool(k[3]))
    if tag == "()":
        if k[2] is not None:
            raise ValueError(f"{fn.__name__}.preload: `{name}` is a namedtuple ({', '.join(k[2])}), whose class the "
                             "specialization data does not name: compile it with a warmup instead")
        return tuple(_argument(fn, f"{name}[{i}]", sk) for i, sk in enumerate(k[1]))
    if tag == "TD":
        raise ValueError(f"{fn.__name__}.preload: `{name}` is a host TensorDescriptor, which preload does not "
                         "rebuild: compile it with a warmup instead")
    ty, spec = tag, k[1]
    if ty in ("u1", "i1"):
        return False
    if ty.startswith(("fp", "bf")):
        return 0.5
    base = _INTS.get(ty, 0)
    return base + (16 if spec == "D" else 2)


def preload(fn: Any, data: str) -> Any:
    """The CompiledKernel that ``data`` describes, compiled (or found) and stored for this process's launches
    on the active driver; None when a cache hook took the compilation over, as for a warmup."""
    obj = read(fn, data)
    key, launch_options = launch_inputs(obj)
    if len(key) != len(fn.params):
        raise ValueError(f"{fn.__name__}.preload: the specialization data has {len(key)} arguments, the kernel "
                         f"{len(fn.params)} parameters: it was written for another version of the kernel")
    kwargs = {p.name: _argument(fn, p.name, k) for p, k in zip(fn.params, key)}
    kwargs.update(launch_options)
    from .specialize import make_binder
    rebuilt = make_binder(fn, getattr(driver.active, "device_type", None))(**kwargs)[0]
    if tuple(rebuilt) != tuple(key):
        raise ValueError(f"{fn.__name__}.preload: the specialization data's key {key} cannot be rebuilt here (got "
                         f"{rebuilt}): was it written for another version of the kernel?")
    return fn.run(grid=None, warmup=True, **kwargs)
