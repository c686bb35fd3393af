"""Where a program's tile buffers live, and where a running program may be stopped.

Tile buffers are stack slots while they are small. A thread's stack is a few MB (8 MB by default on Linux,
less under some limits), and one sort of 32768 elements or one permute of 2**20 elements needs more than
that: a buffer above ``HEAP_BUFFER_BYTES``, or one that would take the program's stack share past
``STACK_BYTES``, is a slice of a heap arena instead. The grid loop allocates the arena once per thread
(not per program) and frees it at the end; a failed allocation runs no program and is reported by the
launcher as a MemoryError.

Cancellation: the launcher passes a flag that the grid loop reads between programs and that every
``scf.for``/``scf.while`` back-edge reads too, so that Ctrl-C stops even one long program promptly. The
read is a plain load and a predictable branch per loop iteration of the kernel (not per element).
"""
from __future__ import annotations

from .irtext import SIZES, Function

#: buffers at least this large go to the heap arena
HEAP_BUFFER_BYTES = 64 * 1024
#: stack bytes a program may use for tile buffers in all
STACK_BYTES = 128 * 1024
_ALIGN = 64


class Frame:
    """The buffers of one program: stack slots, or offsets into the per-thread arena ``%arena``."""

    def __init__(self, fn: Function) -> None:
        self.fn = fn
        self.stack_bytes = 0
        self.heap_bytes = 0
        self._cancel_points = 0

    def buffer(self, ty: str, n: int) -> str:
        size = max(n, 1) * SIZES[ty]
        if size < HEAP_BUFFER_BYTES and self.stack_bytes + size <= STACK_BYTES:
            self.stack_bytes += size
            return self.fn.alloca(ty, n, align=64 if n * 4 >= 64 else 16)
        offset = self.heap_bytes
        self.heap_bytes += -(-size // _ALIGN) * _ALIGN
        name = self.fn.tmp("heap")
        # computed in the entry block, like the allocas, so that it dominates every use
        self.fn.allocas.append(f"{name} = getelementptr inbounds i8, ptr %arena, i64 {offset}")
        return name

    def cancel_point(self) -> None:
        """Return from the program if the launch was cancelled (call at a loop's back-edge)."""
        fn = self.fn
        self._cancel_points += 1
        flag = fn.inst("load atomic i32, ptr %cancel monotonic, align 4", hint="cancel")
        stop = fn.inst(f"icmp ne i32 {flag}, 0")
        out, go = fn.label("cancelled"), fn.label("resume")
        fn.cond_br(stop, out, go)
        fn.start_block(out)
        fn.emit("ret void")
        fn.start_block(go)


def grid_arena(module, g: Function, s: str, heap_bytes: int) -> str:
    """Emit the arena's allocation in the grid function's entry; returns an i1 that is true when it failed."""
    if not heap_bytes:
        return "false"
    module.declare("aligned_alloc", "declare noalias ptr @aligned_alloc(i64, i64)")
    module.declare("free", "declare void @free(ptr)")
    size = -(-heap_bytes // _ALIGN) * _ALIGN
    g.emit(f"%arena = call ptr @aligned_alloc(i64 {_ALIGN}, i64 {size})")
    failed = g.inst("icmp eq ptr %arena, null")
    module.globals.append(f"@{s}_nomem = global i32 0, align 4")
    g.emit(f"%nomem_bits = zext i1 {failed} to i32")
    g.emit(f"%nomem_old = atomicrmw or ptr @{s}_nomem, i32 %nomem_bits monotonic")
    return failed
