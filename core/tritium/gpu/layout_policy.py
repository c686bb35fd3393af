"""What a target decides while layouts are assigned: how it computes a ``tt.dot`` (:class:`DotPlan`), the
coalesced layout of a memory access, the default layout, and how a software-pipelined operand is staged.
Backends subclass :class:`LayoutPolicy`; the defaults here (blocked layouts, the FMA dot) are portable.
The pass that applies a policy to a kernel is ``assign.py``."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

from . import layout as L
from .value_types import tensor_shape


@dataclass(frozen=True)
class DotPlan:
    """How a target computes one ``tt.dot``: its strategy's name and the layouts it needs."""
    kind: str
    acc: L.Layout
    a: L.Layout
    b: L.Layout


def blocked_for(shape: tuple[int, ...], spt: list[int], num_warps: int, warp_size: int,
                order: Optional[list[int]] = None) -> L.Layout:
    """A blocked layout with the given elements per thread; threads and warps fill the rest of the shape."""
    rank = len(shape)
    order = order if order is not None else list(range(rank - 1, -1, -1))
    spt = [max(1, min(s, n)) for s, n in zip(spt, shape)]
    tpw = [1] * rank
    left = warp_size
    for d in order:
        t = min(left, max(1, shape[d] // spt[d]))
        tpw[d] = t
        left //= t
    tpw[order[-1]] *= left
    wpc = [1] * rank
    left = num_warps
    for d in (order[::-1] if rank > 1 else order):
        w = min(left, max(1, shape[d] // (spt[d] * tpw[d])))
        wpc[d] = w
        left //= w
    wpc[order[-1] if rank > 1 else order[0]] *= left
    return L.blocked(shape, spt, tpw, wpc, order)


def fma_dot_plan(c_shape: tuple[int, ...], K: int, num_warps: int, warp_size: int) -> DotPlan:
    """The portable dot: each thread owns a small block of the accumulator and reads whole rows of A and
    columns of B (duplicated across the threads that share them)."""
    rank = len(c_shape)
    M, N = c_shape[-2], c_shape[-1]
    per_thread = max(1, (M * N) // (num_warps * warp_size))
    sn = min(per_thread, 4, N)
    sm = min(max(1, per_thread // sn), 4, M)
    spt = [1] * (rank - 2) + [sm, sn]
    acc = blocked_for(c_shape, spt, num_warps, warp_size)
    return DotPlan("fma", acc, fma_operand(acc, 0, K), fma_operand(acc, 1, K))


def fma_operand(acc: L.Layout, index: int, K: int) -> L.Layout:
    rank = acc.rank
    keep = rank - 1 if index == 1 else rank - 2      # the accumulator dim this operand shares (N or M)

    def proj(b: tuple[int, ...]) -> tuple[int, ...]:
        # operand dims: batch..., then (M, K) for A or (K, N) for B
        out = list(b[:rank - 2]) + [0, 0]
        if index == 0:
            out[rank - 2] = b[rank - 2]
        else:
            out[rank - 1] = b[rank - 1]
        return tuple(out)

    def kvec(v: int) -> tuple[int, ...]:
        out = [0] * rank
        out[rank - 1 if index == 0 else rank - 2] = v
        return tuple(out)

    kbases = [kvec(1 << i) for i in range((K - 1).bit_length())] if K > 1 else []
    regs = kbases + [proj(b) for b in acc.reg if any(b[:rank - 2]) or b[keep]]
    shape = list(acc.shape)
    if index == 0:
        shape[rank - 1] = K
    else:
        shape[rank - 2], shape[rank - 1] = K, acc.shape[rank - 1]
    return L.Layout(shape, regs, [proj(b) for b in acc.lane], [proj(b) for b in acc.warp])


def operand_contiguous(v: Any, policy: "LayoutPolicy", kind: Callable[[Any], Optional[str]]) -> Optional[int]:
    """The dimension of 2-D ``v`` that every dot reading it (directly or through a transpose) needs contiguous in
    shared memory (:meth:`LayoutPolicy.dot_operand_contiguous`; ``kind`` names a dot's plan), else None."""
    want = set()
    for u in v.uses:
        o = u.owner
        if o.name == "tt.trans":
            inner = operand_contiguous(o.results[0], policy, kind)
            want.add(None if inner is None else 1 - inner)
        elif o.name == "tt.dot" and u.operand_number in (0, 1):
            k = kind(o)
            want.add(None if k is None else policy.dot_operand_contiguous(k, u.operand_number))
        else:
            return None
    return want.pop() if len(want) == 1 and None not in want else None


class LayoutPolicy:
    """What a target decides during assignment. Backends subclass it (tensor-core dot layouts, vector
    widths); the defaults are portable."""

    max_vector_bytes = 16

    def __init__(self, num_warps: int, warp_size: int) -> None:
        self.num_warps = num_warps
        self.warp_size = warp_size

    def dot_plan(self, op: Any, a_type: Any, b_type: Any, c_type: Any) -> DotPlan:
        return fma_dot_plan(tensor_shape(c_type), tensor_shape(a_type)[-1], self.num_warps, self.warp_size)

    def default(self, shape: tuple[int, ...]) -> L.Layout:
        return L.default_blocked(shape, self.num_warps, self.warp_size, 1)

    def dot_operand_contiguous(self, kind: str, operand: int) -> Optional[int]:
        """The dimension along which a dot of this kind (from :meth:`dot_plan`) reads its A (``operand`` 0) or B
        (1) from shared memory contiguously, where it can read no other: the software pipeline then stages that
        operand so, element by element if its global layout runs along the other dimension, instead of leaving
        the dot to rewrite it in every iteration. None: any layout."""
        return None

    def staged_copy(self, shape: tuple[int, ...], elem_bytes: int, fast: int, want: int) -> Optional[L.Layout]:
        """The layout of a pipelined load whose stage runs along ``want`` while global memory runs along ``fast``
        (see :meth:`dot_operand_contiguous`), or None to keep the coalesced one. One element per thread and copy,
        a warp's lanes 32 bytes (a sector) along ``fast`` by the rest along ``want``: each copy then reads whole
        sectors and writes 4-byte elements of distinct rows and 16-byte chunks of the swizzled stage, so distinct
        banks (the coalesced layout's 32 lanes along ``fast`` hit two banks: 16-way conflicts)."""
        if len(shape) != 2 or elem_bytes != 4:
            return None
        lanes_fast = 32 // elem_bytes
        lanes_want = self.warp_size // lanes_fast
        if shape[fast] % lanes_fast or shape[want] % lanes_want:
            return None
        tpw, wpc = [1, 1], [1, 1]
        tpw[fast], tpw[want] = lanes_fast, lanes_want
        wpc[want] = min(self.num_warps, shape[want] // lanes_want)
        wpc[fast] = self.num_warps // wpc[want]
        if shape[fast] % (lanes_fast * wpc[fast]):
            return None
        return L.blocked(shape, [1, 1], tpw, wpc, [fast, want])

    def coalesced(self, shape: tuple[int, ...], elem_bytes: int, info: Any) -> L.Layout:
        rank = len(shape)
        order = sorted(range(rank), key=lambda d: (-info.contig[d], -d))
        d0 = order[0]
        vec = max(1, self.max_vector_bytes // elem_bytes)
        vec = min(vec, info.contig[d0], max(1, info.div[d0] // elem_bytes) if info.contig[d0] > 1 else 1)
        numel = 1
        for s in shape:
            numel *= s
        threads = self.num_warps * self.warp_size
        vec = max(1, min(vec, numel // threads if numel >= threads else 1))
        vec = 1 << (vec.bit_length() - 1)
        spt = [1] * rank
        spt[d0] = vec
        return blocked_for(shape, spt, self.num_warps, self.warp_size, order)
