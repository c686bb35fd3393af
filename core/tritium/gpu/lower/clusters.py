"""Programs that span a cluster of CTAs (``num_ctas > 1``), as Triton launches them: the grid holds
``num_ctas`` times as many CTAs along x, each cluster of ``num_ctas`` consecutive CTAs is one program, and
``tl.program_id``/``tl.num_programs`` count clusters (the target's hooks answer them so).

The form built here: the cluster's first CTA runs the whole program and the others return at entry. Every
tensor then lives whole in one CTA, so every op, layout conversion, reduction and side effect (stores, atomics,
prints, asserts) happens exactly once per program, as with ``num_ctas=1``, with nothing crossing CTAs; what
this gives up is the speed a split (an accumulator's N shared out across the cluster, operands multicast)
would buy. A CTA that returns at once never reaches a cluster barrier, so this form must not be mixed with
code that waits on the whole cluster.
"""
from __future__ import annotations

from typing import Any

from .values import LoweringError


def num_ctas(options: Any) -> int:
    return int(getattr(options, "num_ctas", 1) or 1)


def leader_only(ctx: Any) -> None:
    """Branch every CTA but the cluster's first one to a return, before any op of the kernel is lowered."""
    n = num_ctas(ctx.options)
    if n == 1:
        return
    most = ctx.target.max_cluster_ctas
    if n > most:
        can = f"at most {most} CTAs per program" if most > 1 else "one CTA per program (no CTA clusters)"
        raise LoweringError(f"kernel `{ctx.name}`: num_ctas={n}, but this target runs {can}: use num_ctas=1, "
                            "which gives the same results")
    fn = ctx.fn
    rank = ctx.target.cluster_rank(fn)
    lead = fn.inst(f"icmp eq i32 {rank}, 0", "lead")
    body, rest = fn.label("cluster_lead"), fn.label("cluster_rest")
    fn.cond_br(lead, body, rest)
    fn.start_block(rest)
    fn.emit("ret void")
    fn.start_block(body)
