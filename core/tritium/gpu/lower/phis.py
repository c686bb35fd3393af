"""Loop-carried and branch values as phi nodes, one per SSA value a value is made of (a scalar, each register of
a tile, each scalar of a block pointer or descriptor); shared by ``scf.for``/``if``/``while`` (control.py) and
the software-pipelined loop (pipeline.py)."""
from __future__ import annotations

from typing import Any

from ..assign import tensor_shape
from .blockptr import Composite
from .context import Context
from .values import Scalar, Tensor


def flat_values(x: Any) -> list[tuple[str, str]]:
    """The SSA values (and their types) a carried value is made of."""
    if isinstance(x, Scalar):
        return [(x.value, x.ty)]
    if isinstance(x, Composite):
        return [(s.value, s.ty) for s in x.flat()]
    return [(r, x.ty) for r in x.regs]


def rebuild(template: Any, names: list[str]) -> Any:
    if isinstance(template, Scalar):
        return Scalar(names[0], template.ty)
    if isinstance(template, Composite):
        return template.rebuild([Scalar(n, s.ty) for n, s in zip(names, template.flat())])
    return Tensor(template.layout, names, template.ty)


def carried(ctx: Context, v: Any, arg: Any) -> Any:
    """Value ``v`` in the form block argument ``arg`` carries it."""
    got = ctx.values.get(v)
    if isinstance(got, Composite):
        return got
    if tensor_shape(arg.type) is None:
        return ctx.scalar_of(v)
    return ctx.tensor_in(v, ctx.layout_of(arg))


def flat_regs(x: Any) -> list[str]:
    return [v for v, _ in flat_values(x)]


def make_phis(ctx: Context, args: list[Any], inits: list[Any]) -> tuple[list[Any], list[list[tuple[str, int]]]]:
    """Placeholders for the phi nodes of each block argument; returns the values bound and the slots."""
    fn = ctx.fn
    values, slots = [], []
    for a, init in zip(args, inits):
        names = [fn.tmp("phi") for _ in flat_values(init)]
        slots.append([fn.placeholder() for _ in names])
        values.append(rebuild(init, names))
    return values, slots


def fill_phis(ctx: Context, phis: list[Any], slots: list[list], incoming: list[list[tuple[Any, str]]]) -> None:
    fn = ctx.fn
    for k, (p, sl) in enumerate(zip(phis, slots)):
        flat = flat_values(p)
        srcs = [(flat_regs(v), label) for v, label in incoming[k]]
        for i, ((name, ty), slot) in enumerate(zip(flat, sl)):
            edges = ", ".join(f"[{regs[i]}, %{label}]" for regs, label in srcs)
            fn.fill(slot, f"{name} = phi {ty} {edges}")
