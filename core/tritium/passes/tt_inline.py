"""tt-inline: inline calls to private functions (the @jit device functions of a kernel).

MLIR's own inliner asks each op's dialect whether it may be inlined; the tile dialect is declared through
IRDL, which cannot register that interface, so upstream ``inline`` leaves every callee that holds a tile op
(``tt.splat``, ``tt.load``...) as a call. This pass inlines those: the callee is cloned, its arguments
replaced by the call's operands, its body moved before the call, and the call's results replaced by what
the callee returns. Calls marked ``no_inline`` stay; a backend that cannot call functions removes that
mark first.
"""
from __future__ import annotations

from typing import Any

from .._mlir import ir
from ._util import all_ops


def _functions(module: Any) -> dict[str, Any]:
    out = {}
    for op in module.body.operations:
        op = op.operation
        if op.name == "func.func":
            out[str(op.attributes["sym_name"]).strip('"')] = op
    return out


def _enclosing_function(op: Any) -> Any:
    cur = op.parent
    while cur is not None and cur.name != "func.func":
        cur = cur.parent
    return cur


def _inline(call: Any, callee: Any) -> None:
    clone = callee.clone(ip=ir.InsertionPoint(callee))
    block = clone.regions[0].blocks[0]
    for arg, value in zip(block.arguments, call.operands):
        arg.replace_all_uses_with(value)
    body = list(block.operations)
    ret = body[-1]
    for op in body[:-1]:
        op.move_before(call)
    for result, value in zip(call.results, ret.operands):
        result.replace_all_uses_with(value)
    call.erase()
    clone.erase()


def tt_inline(module: Any, ctx: Any = None) -> None:
    changed = True
    while changed:  # a callee's own calls are inlined on the next round
        changed = False
        functions = _functions(module)
        for op in all_ops(module):
            if op.name != "func.call" or "no_inline" in op.attributes:
                continue
            callee = functions.get(str(op.attributes["callee"]).lstrip("@"))
            if callee is None or len(callee.regions[0].blocks) != 1:
                continue
            if _enclosing_function(op) == callee:
                continue  # recursion: the frontend reports it; never unroll it here
            _inline(op, callee)
            changed = True
            break
