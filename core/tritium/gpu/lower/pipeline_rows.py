"""A pipelined loop's staged row vectors read before the dot that runs ahead of their first use.

A load left in its pipeline stage because only ``expand_dims`` reads it (context.staged_row_vector: attention
backward's row maxima M and sums Di) is read from shared memory where its ``expand_dims`` is, which in the
backward's dK/dV loop is right after a dot's wait (``pT = exp2(qkT - m[None, :])`` after ``qkT = k @ qT``): the
shared loads' latency is then on the path from the wait to the softmax. Triton 3.6 issues those loads before
that dot (its SASS: the four LDS.64 of M before the first HGMMA, those of Di among dV's). On targets that ask for
it (``target.early_row_reads``), each such ``expand_dims`` of the loop body is lowered just before the last dot
that precedes it in the body, so its loads are in flight while the dot runs; it costs the vector's registers
across that dot (8 per thread for M and for Di at the tutorial's backward blocks)."""
from __future__ import annotations

from typing import Any

from .context import Context, staged_row_vector


def _same(a: Any, b: Any) -> bool:
    return (a.operation if hasattr(a, "operation") else a) == (b.operation if hasattr(b, "operation") else b)


def early_reads(ctx: Context, ops: list, staged: set) -> dict[int, list]:
    """body index of a dot -> the ``expand_dims`` ops of staged row vectors to lower before it (empty unless
    the target asks)."""
    if not getattr(ctx.target, "early_row_reads", False):
        return {}
    body = [o.operation if hasattr(o, "operation") else o for o in ops]
    out: dict[int, list] = {}
    for r in staged:
        if not staged_row_vector(ctx, r):
            continue
        for u in r.uses:
            at = next((k for k, o in enumerate(body) if _same(o, u.owner)), None)
            if at is None:              # in a nested region: read where it is
                continue
            dot = next((k for k in range(at - 1, -1, -1) if body[k].name == "tt.dot"), None)
            if dot is None:
                continue
            # with the broadcasts that follow it: the expand_dims alone would be produced again in the layout
            # its user wants, where that user is (the early read then dead)
            chain = [body[at]]
            while len(list(chain[-1].results[0].uses)) == 1:
                nxt = next(iter(chain[-1].results[0].uses)).owner
                nxt = nxt.operation if hasattr(nxt, "operation") else nxt
                if nxt.name != "tt.broadcast" or not any(_same(nxt, o) for o in body):
                    break
                chain.append(nxt)
            out.setdefault(dot, []).extend(chain)
    return out
