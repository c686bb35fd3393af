"""Dots left running across iterations of a pipelined loop (``Context.deferred_dots``) whose results a branch of
the loop body reads: a fused persistent loop (gpu/flatten.py) ends each tile in a branch that stores the
accumulator and resets it, while the other iterations carry it on still running."""
from __future__ import annotations

from typing import Any

from ..._mlir import block_ops, ir
from .context import Context


def carried_through_branch(res: Any, j: int, yields_op: Any) -> bool:
    """``res`` reaches the loop's yield ``j`` through the else branch of an ``scf.if`` of the loop body, and its
    other reads are inside that ``scf.if`` (a fused persistent loop: the epilogue of a tile reads the accumulator
    in the branch, which waits for it there; the other iterations carry it on in flight)."""
    uses = list(res.uses)
    br = _top_if(uses[0].owner, yields_op) if uses else None
    if br is None or any(_top_if(u.owner, yields_op) != br for u in uses):
        return False
    y = yields_op.operands[j]
    if isinstance(y.owner, ir.Block) or y.owner.operation != br or len(list(y.uses)) != 1:
        return False
    m = list(br.results).index(y)
    else_blocks = list(br.regions[1].blocks)
    return bool(else_blocks) and block_ops(else_blocks[0])[-1].operands[m] == res


def _top_if(o: Any, yields_op: Any) -> Any:
    """The ``scf.if`` directly in the loop body that holds ``o`` (or is it), else None."""
    body = yields_op.block
    while o is not None:
        o = o.operation if hasattr(o, "operation") else o
        if o.block == body:
            return o if o.name == "scf.if" else None
        o = o.parent
    return None


def wait_deferred_reads(ctx: Context, region: Any) -> Any:
    """At the start of a branch: the dots left in flight whose results the branch reads are waited for there,
    so that the other branch can carry them on still running. Returns what ends the branch: it restores the
    in-flight values for the code after it and, where the branch read or passed one on, closes the branch with a
    block of its own, so that the join's copies of the accumulators (none once coalesced) stay at the branch's
    end: LLVM otherwise hoists them to its start or before it, where ptxas takes them as reads or writes of
    registers a dot still uses and serializes every wgmma of the kernel (its C7514/C7515 notes)."""
    if not ctx.deferred_dots:
        return lambda: None
    reads, passed = set(), False
    for b in region.blocks:
        ops = _nested_ops(b)
        # the branch's own yield passes a value on without reading it
        for o in ops[:-1]:
            reads.update(v for v in o.operands if v in ctx.deferred_dots)
        passed = passed or any(v in ctx.deferred_dots for v in ops[-1].operands)
    if reads:
        ctx.target.async_dot_wait(ctx.fn, 0, [])

    def done() -> None:
        if reads or passed:
            ctx.fn.emit('call void asm sideeffect "", ""()')
    return done


def _nested_ops(block: Any) -> list:
    """The ops of ``block``, each followed by those nested in it; the block's terminator last."""
    out = []
    ops = block_ops(block)
    for o in ops[:-1]:
        out.append(o)
        for r in o.regions:
            for b in r.blocks:
                out.extend(_nested_ops(b))
    return out + ops[-1:]
