"""``max_num_imprecise_acc`` of fp8 wgmma dots: the accumulator is promoted every that many products along K.

Hopper's fp8 tensor cores add their products into the accumulator with fewer bits than fp32 (about 14 of the
mantissa), so a long K loses precision. A dot given ``max_num_imprecise_acc = n`` (as in Triton) is issued in
chunks of n along K (rounded to whole instructions), each into a fresh accumulator that is waited for and added to
the fp32 accumulator in registers. That costs a wait per chunk and a second set of accumulator registers, which
is why the default (0) leaves the whole K to the tensor cores, as Triton's does on sm_90.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from tritium._mlir import ir
from tritium.gpu.lower.context import Context

from .wgmma_wait import wait_group, wait_with_pending

FP8 = ("e4m3", "e5m2")


def promotion_chunk(op: Any, kind: str, K: int, kstep: int) -> Optional[int]:
    """K per chunk when ``op`` promotes its accumulator, else None."""
    if kind not in FP8 or "max_num_imprecise_acc" not in op.attributes:
        return None
    n = ir.IntegerAttr(op.attributes["max_num_imprecise_acc"]).value
    if n <= 0:
        return None
    return min(K, max(kstep, n // kstep * kstep))


def promoted(lo: Context, op: Any, issue: Callable[..., list[str]], tiles: list, acc: list[str], zero: bool, K: int,
             kstep: int, chunk: int, a_live: list[str], acc_ty: str) -> list[str]:
    """Issue the dot chunk by chunk; the fp32 accumulator ``acc`` (one register per element) plus every chunk."""
    fn = lo.fn
    pending = lo.__dict__.setdefault("_wgmma_pending", [])
    if pending:
        # earlier dots left running for this dot's wait: their results are read now, before the chunks' waits
        wait_with_pending(fn, [], [], acc_ty, pending)
    out = list(acc)
    # as every other float op of the kernel: with fp fusion on (the default) NVPTX then writes add.f32, as Triton's
    # promotion adds read, instead of the add.rn.f32 that keeps ptxas from fusing
    add = f"fadd {lo.scalar.contract}float"
    for kc in range(0, K, chunk):
        fn.emit('call void asm sideeffect "wgmma.fence.sync.aligned;", "~{memory}"()')
        parts = []
        for m0, n0, _ in tiles:
            cur: list[str] = []
            for k0 in range(kc, min(kc + chunk, K), kstep):
                cur = issue(m0, n0, k0, cur, k0 == kc)
            parts.append(cur)
        fn.emit('call void asm sideeffect "wgmma.commit_group.sync.aligned;", "~{memory}"()')
        flat = wait_group(fn, 0, [x for p in parts for x in p], list(a_live), acc_ty)
        for _, _, idx in tiles:
            for i in idx:
                x = flat.pop(0)
                out[i] = x if zero and kc == 0 else fn.inst(f"{add} {out[i]}, {x}")
    lo.deferred_dots.discard(op.results[0])     # waited for here
    return out
