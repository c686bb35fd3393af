"""Kernel arguments in the interpreter: binding, what each becomes (compile-time value, scalar tensor or
pointer), and the memory an array argument spans."""
from __future__ import annotations

import contextlib
from typing import Any, Iterator

import numpy as np

from ..language import core as tl
from ..language.device_function import DeviceFunction
from ..runtime.annotations import converter, describe
from ..runtime.specialize import dtype_name
from ..tools.tensor_descriptor import validate
from .memory import Memory, Region


def make_binder(fn: Any) -> Any:
    """``binder(*args, **kwargs) -> (values, options)`` with the kernel's own signature, so that Python itself
    words the errors (``axpy() missing 1 required positional argument: 'n'``), as for compiled launches;
    keyword arguments that are not parameters are launch options (num_warps...)."""
    names = [p.name for p in fn.params]
    params = [f"{n}=__d[{i}]" if p.has_default else n for i, (n, p) in enumerate(zip(names, fn.params))]
    src = (f"def {fn.__name__}({', '.join(params + ['**__tritium_options'])}):\n"
           f"    return [{', '.join(names)}], __tritium_options\n")
    ns: dict[str, Any] = {"__d": [p.default for p in fn.params]}
    exec(compile(src, f"<arguments of {fn.__name__}>", "exec"), ns)
    return ns[fn.__name__]


def classify(p: Any, v: Any) -> tuple[str, Any]:
    """What the compiled path makes of argument ``v`` for parameter ``p``: ("C", value) for a compile-time
    value, (type string, value) for a scalar, ("*T", array) for an array, ("()", ([elements], namedtuple fields or None)) for a tuple,
    ("TD", (base type, base, shape, strides, block shape, padding)) for a host tensor descriptor."""
    if isinstance(v, tl.constexpr):
        return "C", v.value  # tl.constexpr(4) passed (inside a tuple too) is compile-time (test_serialize)
    if p.is_constexpr or v is None or isinstance(v, (str, tl.dtype)) or type(v).__name__ == "dtype":
        return "C", v
    if isinstance(v, DeviceFunction):
        return "C", v  # a @jit function passed as an argument is compile-time, as in Triton (test_namedtuple)
    ann = getattr(p, "annotation_type", "")
    if ann:
        return _annotated(p, ann, v)
    if isinstance(v, (bool, np.bool_)):
        return "i1", bool(v)
    if isinstance(v, (int, np.integer)):
        v = int(v)
        if v == 1 and not p.do_not_specialize:
            return "C", 1  # specialized to a compile-time 1, as when compiled
        if -2**31 <= v < 2**31:
            return "i32", v
        if -2**63 <= v < 2**63:
            return "i64", v
        if 2**63 <= v < 2**64:
            return "u64", v
        raise OverflowError(f"integer argument {p.name}={v} does not fit in 64 bits")
    if isinstance(v, (float, np.floating)):
        return "fp32", float(v)
    if isinstance(v, tuple):
        # element by element, with the compiled path's rules (see runtime/structured.py)
        return "()", ([classify(p, x) for x in v], getattr(type(v), "_fields", None))
    if isinstance(v, list):
        raise TypeError(f"cannot pass a list to parameter `{p.name}`, which is not a tl.constexpr: pass a tuple")
    if type(v).__name__ == "TensorDescriptor" and hasattr(v, "block_shape"):
        shape, strides, block, padding = validate(v)
        base_ty, base = classify(p, v.base)
        return "TD", (base_ty, base, shape, strides, block, padding)
    return "*" + ("k" if p.is_const else "") + dtype_name(v.dtype), v


def _annotated(p: Any, ann: str, v: Any) -> tuple[str, Any]:
    """An argument of a parameter whose annotation fixes its type, converted as the compiled path converts it
    (runtime/annotations.py)."""
    if ann.startswith("*"):
        if not (hasattr(v, "data_ptr") or hasattr(v, "__array_interface__")):
            raise TypeError(f"parameter `{p.name}` is annotated {describe(p)} ({ann}): expected an array, got "
                            f"{v!r}")
        return ("*k" + ann[2:] if p.is_const and not ann.startswith("*k") else ann), v
    try:
        return ann, converter(ann)(v)
    except (TypeError, ValueError, OverflowError) as exc:
        raise type(exc)(f"parameter `{p.name}` is annotated {describe(p)} ({ann}), got {v!r}: {exc}") from None


def _array_layout(obj: Any) -> tuple[int, tuple[int, ...], tuple[int, ...], int]:
    """(data address, shape, strides in bytes, element size) of an array argument."""
    base = getattr(obj, "base", None) if type(obj).__name__ == "TensorWrapper" else None
    if base is not None:
        obj = base
    if hasattr(obj, "data_ptr") and hasattr(obj, "stride") and hasattr(obj, "element_size"):
        size = int(obj.element_size())
        return int(obj.data_ptr()), tuple(obj.shape), tuple(int(s) * size for s in obj.stride()), size
    iface = getattr(obj, "__array_interface__", None)
    if iface is None:
        raise TypeError(f"cannot pass a {type(obj).__name__} to a kernel: expected a number, a torch tensor, a "
                        "numpy array or an object with __array_interface__")
    dt = np.dtype(iface["typestr"])
    shape = tuple(iface["shape"])
    strides = iface.get("strides")
    if strides is None:
        strides, acc = [], dt.itemsize
        for s in reversed(shape):
            strides.insert(0, acc)
            acc *= s
    return int(iface["data"][0]), shape, tuple(strides), dt.itemsize


def region_for(memory: Memory, name: str, obj: Any) -> Region:
    addr, shape, strides, size = _array_layout(obj)
    numel = int(np.prod(shape)) if shape else 1
    if numel == 0:
        lo = hi = 0
    else:
        lo = sum(min(0, (n - 1) * s) for n, s in zip(shape, strides))
        hi = sum(max(0, (n - 1) * s) for n, s in zip(shape, strides)) + size
    dtype = str(getattr(obj, "dtype", "?")).replace("torch.", "")
    contiguous = list(strides) == [size * int(np.prod(shape[i + 1:])) for i in range(len(shape))]
    desc = f"{dtype}{list(shape)}" + ("" if contiguous else f" with strides {[s // size for s in strides]}")
    return memory.add(name, obj, addr, lo, hi, desc)


@contextlib.contextmanager
def host_copies(values: list[Any]) -> Iterator[list[Any]]:
    """Torch tensors on an accelerator are copied to the host for the launch and back afterwards."""
    copies = []
    out = list(values)
    for i, v in enumerate(values):
        dev = getattr(getattr(v, "device", None), "type", "cpu")
        if dev not in ("cpu", None) and hasattr(v, "to") and hasattr(v, "copy_"):
            if dev == "meta":
                raise TypeError("a tensor on the 'meta' device has no data for the interpreter to run on")
            host = v.detach().to("cpu")
            copies.append((v, host))
            out[i] = host
    try:
        yield out
    finally:
        for dev_t, host in copies:
            dev_t.copy_(host)
