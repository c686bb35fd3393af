"""Producer and consumer warps (gpu/lower/pipeline_producer.py) on sm_90: the launch's extra warps, and the
consumers' CTA barriers as named barriers.

The lowering splits the extra warps off before a persistent kernel's tile loop and they leave (``ret``); every
CTA barrier the consumers meet after that point must count only the consumers' threads, or it would wait for
warps that are gone. The lowering asks for barriers without knowing where they run (``barrier()``); here, once
the kernel is lowered, each ``barrier0`` in a block reachable from the consumers' block becomes
``barrier.cta.sync.aligned.count(1, consumer threads)`` (barrier 1: barrier 0 keeps its meaning, every thread,
before the split). The kernel's ``.maxntid`` and its launch (the ``num_warps`` of its metadata) take the
producer warps too.
"""
from __future__ import annotations

import re
from typing import Any

from tritium.llvmir.text import Function, Module

_BARRIER0 = "call void @llvm.nvvm.barrier0()"
_NAMED = "llvm.nvvm.barrier.cta.sync.aligned.count"
_TARGETS = re.compile(r"label %([-\w.$]+)")


def _reachable(fn: Function, start: str) -> set:
    succ = {}
    for label, lines in fn.blocks:
        term = lines[-1] if lines else ""
        succ[label] = _TARGETS.findall(term) if term.lstrip().startswith(("br ", "switch ")) else []
    seen, todo = set(), [start]
    while todo:
        b = todo.pop()
        if b in seen:
            continue
        seen.add(b)
        todo += succ.get(b, [])
    return seen


def finish_roles(target: Any, module: Module, fn: Function) -> int:
    """The threads the launch adds for producer warps (0 where the kernel has none); the consumers' barriers
    rewritten."""
    roles = getattr(target, "_roles", None)
    target._roles_meta = None
    if roles is None or roles[0] is not fn:
        return 0
    _, consumers, consumer_warps, producer_warps = roles
    threads = consumer_warps * target.warp_size
    module.intrinsic(_NAMED, "void", ["i32", "i32"], "convergent nounwind")
    mine = _reachable(fn, consumers)
    for k, (label, lines) in enumerate(fn.blocks):
        if label in mine:
            fn.blocks[k] = (label, [ln.replace(_BARRIER0, f"call void @{_NAMED}(i32 1, i32 {threads})")
                                    for ln in lines])
    target._roles_meta = consumer_warps + producer_warps
    return producer_warps * target.warp_size
