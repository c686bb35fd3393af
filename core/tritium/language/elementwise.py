"""``tl.add``/``tl.sub``/``tl.mul`` (with ``sanitize_overflow``), ``tl.map_elementwise``, ``tensor.item``,
``tl.condition`` and ``tl.slice``."""
from __future__ import annotations

from typing import Any

from . import core
from .core import CompileTimeError, _unwrap, base_value, builtin, tensor


@builtin
def add(x, y, sanitize_overflow=True, _semantic=None):
    """``x + y``; with the kernel option ``sanitize_overflow``, integer overflow is reported."""
    return _semantic.add(_unwrap(x), _unwrap(y), bool(_unwrap(sanitize_overflow)))


@builtin
def sub(x, y, sanitize_overflow=True, _semantic=None):
    return _semantic.sub(_unwrap(x), _unwrap(y), bool(_unwrap(sanitize_overflow)))


@builtin
def mul(x, y, sanitize_overflow=True, _semantic=None):
    return _semantic.mul(_unwrap(x), _unwrap(y), bool(_unwrap(sanitize_overflow)))


@builtin
def item(input, _semantic=None):
    """The only element of a one-element block, as a scalar."""
    x = _semantic.to_tensor(_unwrap(input))
    if not x.type.is_block():
        return x
    if x.type.numel != 1:
        raise CompileTimeError(f"item() needs a block of one element, got shape {list(x.type.shape)}")
    return _semantic.unsplat(x)


@builtin
def map_elementwise(scalar_fn, *args, pack=1, _semantic=None, _generator=None):
    """Apply the @jit function ``scalar_fn`` to each element of the (broadcast) ``args``; it may branch.

    With ``pack=n`` each call receives ``n`` consecutive elements of every argument and returns ``n`` values
    per result."""
    pack = _unwrap(pack)
    if not isinstance(pack, int) or pack < 1:
        raise CompileTimeError(f"pack must be a positive compile-time integer, got {pack!r}")
    if _generator is None:
        raise CompileTimeError("map_elementwise needs the code generator")
    if not args:
        raise CompileTimeError("map_elementwise needs at least one tensor argument")

    def body(scalars: list[Any]) -> list[Any]:
        out = _generator.call_jit_function(scalar_fn, scalars, {}, inline=True)
        if isinstance(out, tensor):
            return [out]
        if isinstance(out, core.tuple_value):
            return list(out.values)
        raise CompileTimeError(f"the function given to map_elementwise must return tensors, got {out!r}")

    res = _semantic.map_elementwise([_semantic.to_tensor(_unwrap(a)) for a in args], body, pack)
    return res[0] if len(res) == 1 else core.tuple_value(list(res))


class condition(base_value):
    """``while tl.condition(c, disable_licm=True):`` wraps a while loop's condition with loop options."""

    def __init__(self, arg1: Any, disable_licm: Any = False) -> None:
        self.condition = arg1
        self.disable_licm = disable_licm


class slice:  # noqa: A001  (tl.slice mirrors Python's)
    """A ``start:stop:step`` index; kernels may index blocks with ``:`` (all of a dimension) and None."""

    def __init__(self, start: Any, stop: Any, step: Any) -> None:
        self.start, self.stop, self.step = start, stop, step
