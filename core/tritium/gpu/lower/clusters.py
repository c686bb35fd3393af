"""Programs that span a cluster of CTAs (``num_ctas > 1``), as Triton launches them: the grid holds
``num_ctas`` times as many CTAs along x, each cluster of ``num_ctas`` consecutive CTAs is one program, and
``tl.program_id``/``tl.num_programs`` count clusters (the target's hooks answer them so).

Two forms. A kernel the ``ttgir`` stage split (:mod:`..cluster_split`: a dot's N shared out across the cluster,
nothing crossing CTAs) runs on every CTA, each on its share. Any other kernel runs on the cluster's first CTA
alone and the others return at entry: every tensor then lives whole in one CTA, so every op, layout conversion,
reduction and side effect (stores, atomics, prints, asserts) happens exactly once per program, as with
``num_ctas=1``; that form gains no speed. A CTA that returns at once never reaches a cluster barrier, so it must
not be mixed with code that waits on the whole cluster.
"""
from __future__ import annotations

from typing import Any

from ..cluster_split import SPLIT_ATTR
from .optable import GPU_OPS
from .values import LoweringError, Scalar


def num_ctas(options: Any) -> int:
    return int(getattr(options, "num_ctas", 1) or 1)


def leader_only(ctx: Any) -> None:
    """Branch every CTA but the cluster's first one to a return, before any op of the kernel is lowered, unless the
    kernel was split across the cluster."""
    n = num_ctas(ctx.options)
    if n == 1:
        return
    most = ctx.target.max_cluster_ctas
    if n > most:
        can = f"at most {most} CTAs per program" if most > 1 else "one CTA per program (no CTA clusters)"
        raise LoweringError(f"kernel `{ctx.name}`: num_ctas={n}, but this target runs {can}: use num_ctas=1, "
                            "which gives the same results")
    if SPLIT_ATTR in ctx.func.attributes:
        return      # every CTA computes its share of the split dimension (cluster_split.py)
    fn = ctx.fn
    rank = ctx.target.cluster_rank(fn)
    lead = fn.inst(f"icmp eq i32 {rank}, 0", "lead")
    body, rest = fn.label("cluster_lead"), fn.label("cluster_rest")
    fn.cond_br(lead, body, rest)
    fn.start_block(rest)
    fn.emit("ret void")
    fn.start_block(body)


@GPU_OPS.lowers("tt.get_cluster_cta_rank")
def op_cluster_rank(ctx: Any, op: Any) -> None:
    ctx.values[op.results[0]] = Scalar(ctx.target.cluster_rank(ctx.fn), "i32")
