"""The scalar code of an op's combine region (``tt.reduce``, ``tt.scan``, ``tt.map_elementwise``)."""
from __future__ import annotations

from typing import Any, Callable

from tritium._mlir import block_ops

from .context import Context
from .irtext import Function
from .opinfo import type_info
from .tiles import Scalar

_REASSOC = {"arith.addf", "arith.mulf"}


def combiner(ctx: Context, op: Any) -> Callable[[Function, list[str], list[str]], list[str]]:
    """Scalar code for the op's combine region: ``combine(fn, accumulators, values) -> results``. The region's
    ops are lowered by ``ctx`` into ``fn`` (wherever the caller is emitting: inside its element loops), with
    the block arguments bound to the given values."""
    block = op.regions[0].blocks[0]
    body = block_ops(block)
    args = list(block.arguments)
    arg_types = [type_info(a.type)[1] for a in args]
    simple = len(body) == 2 and body[0].name in _REASSOC

    def combine(fn: Function, accs: list[str], vals: list[str]) -> list[str]:
        env: dict[Any, Any] = {}
        for a, v, t in zip(args, accs + vals, arg_types):
            env[a] = Scalar(v, t)
        saved_fn, saved_values = ctx.fn, ctx.values
        ctx.fn = fn
        ctx.values = _Overlay(saved_values, env)
        try:
            for o in body:
                if o.name == "gpu.yield":
                    return [ctx.values[v].value for v in o.operands]
                if simple:
                    a, b = (ctx.values[v] for v in o.operands)
                    r = fn.inst(f"{'fadd' if o.name == 'arith.addf' else 'fmul'} reassoc {a.ty} {a.value}, "
                                f"{b.value}")
                    ctx.values[o.results[0]] = Scalar(r, a.ty)
                    continue
                ctx.lower_op(o)
        finally:
            ctx.fn, ctx.values = saved_fn, saved_values
        raise AssertionError("combine region without gpu.yield")

    return combine


class _Overlay(dict):
    """A value map that falls back to the enclosing one (for combine regions)."""

    def __init__(self, base: dict, local: dict) -> None:
        super().__init__(local)
        self.base = base

    def __missing__(self, key: Any) -> Any:
        return self.base[key]
