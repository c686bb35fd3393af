"""Shared-memory offsets by buffer lifetime.

Every shared buffer of a program gets an interval of program points (the order in which the lowering
emits code): scratch areas of reductions, scans and layout conversions live from their first write to
their last read, software-pipeline stages from the loop's prologue to its exit. Buffers whose intervals
do not overlap may share bytes; their offsets are unknown while the code is emitted (a token stands in the
address arithmetic) and are fixed once every interval is known, first fit, largest buffers first (the
interval-graph allocation Triton's shared-memory allocator makes).

This is sound because the lowering orders every reuse with a barrier: a buffer starts only after a barrier
that follows the last read of whatever held those bytes before (the lowering's ``scratch_dirty`` flag; a
pipelined loop ends with one after its copies and tensor-core reads have completed). Loops need nothing
more: a buffer used inside a loop body is opened and closed inside it, so its interval lies within the
body's, and a buffer live across the loop covers the whole body.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass
class Buffer:
    size: int
    align: int
    start: int
    end: Optional[int] = None      # None while live
    offset: int = -1

    def overlaps(self, other: "Buffer") -> bool:
        return self.start < other.end and other.start < self.end  # type: ignore[operator]


def token(k: int) -> str:
    return f"__SMEM_OFFSET_{k}__"


class SharedAllocator:
    """Intervals of shared buffers, then their offsets."""

    def __init__(self) -> None:
        self.buffers: list[Buffer] = []
        self.clock = 0

    def open(self, size: int, align: int, start: Optional[int] = None) -> int:
        """A buffer live from now (or from the earlier point ``start``, a past value of ``clock``)."""
        self.clock += 1
        self.buffers.append(Buffer(size, align, self.clock if start is None else start))
        return len(self.buffers) - 1

    def grow(self, k: int, size: int, align: int) -> None:
        b = self.buffers[k]
        b.size, b.align = max(b.size, size), max(b.align, align)

    def close(self, k: int) -> None:
        self.clock += 1
        if self.buffers[k].end is None:
            self.buffers[k].end = self.clock

    def assign(self) -> int:
        """Give every buffer an offset; return the bytes of shared memory the program needs."""
        self.clock += 1
        for b in self.buffers:
            if b.end is None:
                b.end = self.clock
        placed: list[Buffer] = []
        total = 0
        for b in sorted(self.buffers, key=lambda b: (-b.size, b.start)):
            busy = sorted((p.offset, p.offset + p.size) for p in placed if p.overlaps(b))
            off = 0
            for lo, hi in busy:
                if off + b.size <= lo:
                    break
                off = max(off, _round(hi, b.align))
            b.offset = off
            placed.append(b)
            total = max(total, off + b.size)
        return total

    def offsets(self) -> dict[str, int]:
        return {token(k): b.offset for k, b in enumerate(self.buffers)}


def _round(x: int, a: int) -> int:
    return (x + a - 1) // a * a
