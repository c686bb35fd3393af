"""The shared-memory buffers of one kernel's lowering, by lifetime and loop structure (offsets come from
:class:`~.smem_alloc.SharedAllocator` once the kernel is lowered):

- ``scratch``: a short-lived buffer (a reduction's partials, a layout conversion), from its first write to
  ``scratch_read_done``;
- ``shared_buffer``: a buffer closed explicitly (pipeline stages, for their loop);
- ``loop_buffer``: a buffer live through every iteration of a loop, e.g. a loop-invariant operand written once
  in the loop's preheader by ``hoist``.

:class:`SharedBuffers` is the lowering :class:`~.context.Context`'s base: the handlers call these as ``ctx.*``.
"""
from __future__ import annotations

from typing import Any, Optional

from ...llvmir.text import Function
from .loops import LoopFrame, defined_inside
from .smem_alloc import SharedAllocator, token
from .values import LoweringError


class SharedBuffers:
    """Opening, growing and closing shared buffers as the lowering walks the kernel; the state is the Context's
    (set in its ``__init__``)."""

    fn: Function
    target: Any
    name: str
    smem: SharedAllocator
    smem_base: str
    scratch_dirty: bool
    _scratch: Optional[tuple[int, str]]
    loops: list[LoopFrame]

    def scratch(self, nbytes: int, align: int = 128) -> str:
        """A short-lived shared buffer of at least ``nbytes``, safe to write (a barrier first if earlier readers
        of shared memory may remain: the bytes may be another buffer's, dead now). Calls before
        :meth:`scratch_read_done` get the same buffer, grown."""
        if self.scratch_dirty:
            self.target.barrier(self.fn)
            self.scratch_dirty = False
        if self._scratch is None:
            self._scratch = self.shared_buffer(nbytes, align)
        else:
            self.smem.grow(self._scratch[0], nbytes, align)
        return self._scratch[1]

    def scratch_alone(self, nbytes: int, align: int = 128) -> str:
        """:meth:`scratch` for a lowering that writes and reads the buffer by itself (a layout conversion). Called
        while another lowering holds the scratch buffer (a dot's operands written there, not yet read), it would
        write over that lowering's bytes: an internal error rather than a wrong result."""
        if self._scratch is not None:
            raise LoweringError(f"kernel `{self.name}`: internal error: a layout conversion through shared memory "
                                "was emitted while the scratch buffer holds another operation's data")
        return self.scratch(nbytes, align)

    def scratch_read_done(self) -> None:
        """The scratch buffer's last read is emitted (it is dead once every thread is past it)."""
        self.scratch_dirty = True
        if self._scratch is not None:
            self.smem.close(self._scratch[0])
            self._scratch = None

    def enter_loop(self, op: Any, preheader: bool) -> "LoopFrame":
        """Called where a loop's entry branch is about to be emitted. With ``preheader``, a block of its own
        ends there (``frame.pre``, the phis' incoming block from outside), where :meth:`hoist` can place code
        that runs once before the loop."""
        frame = LoopFrame(op, self.smem.clock, None)
        if preheader:
            frame.pre = self.fn.label("preheader")
            self.fn.br(frame.pre)
            self.fn.start_block(frame.pre)
        self.loops.append(frame)
        return frame

    def exit_loop(self) -> None:
        """Called once every thread is past the loop's last read of shared memory."""
        frame = self.loops.pop()
        for emit in frame.on_exit:
            emit()
        for k in frame.buffers:
            self.smem.close(k)

    def invariant_loop(self, v: Any) -> Optional["LoopFrame"]:
        """The innermost loop when ``v`` is computed outside it (so it is known before the loop starts) and the
        loop has a preheader: what is derived from ``v`` can be made there once."""
        if not self.loops:
            return None
        frame = self.loops[-1]
        if frame.pre is None or defined_inside(v, frame.op):
            return None
        return frame

    def hoist(self, frame: "LoopFrame", emit: Any) -> Any:
        """Run ``emit()`` with its code placed at the end of the loop's preheader (it may branch; it runs once
        per run of the loop, before the first iteration). Whatever it computes dominates the loop."""
        fn = self.fn
        at = next(i for i, (label, _) in enumerate(fn.blocks) if label == frame.pre)
        label, lines = fn.blocks[at]
        enter = lines.pop()                     # the branch into the loop
        saved, fn.blocks = fn.blocks, [(label, lines)]
        try:
            out = emit()
        finally:
            made, fn.blocks = fn.blocks, saved
        made[-1][1].append(enter)
        fn.blocks[at:at + 1] = made
        frame.pre = made[-1][0]
        return out

    def loop_buffer(self, frame: "LoopFrame", nbytes: int, align: int) -> str:
        """A shared buffer live from the loop's entry to its exit (its bytes are no one else's meanwhile)."""
        k = self.smem.open(nbytes, align, start=frame.start)
        frame.buffers.append(k)
        return self.fn.pinst(f"getelementptr i8, {self.target.shared_ptr} {self.smem_base}, i32 {token(k)}", "lbuf")

    def shared_buffer(self, nbytes: int, align: int) -> tuple[int, str]:
        """A shared buffer live from now until ``self.smem.close(k)``: (k, its address). The offset is fixed
        once every buffer's lifetime is known (:func:`tritium.gpu.lower.lower_module`)."""
        k = self.smem.open(nbytes, align)
        return k, self.fn.pinst(f"getelementptr i8, {self.target.shared_ptr} {self.smem_base}, i32 {token(k)}", "sbuf")
