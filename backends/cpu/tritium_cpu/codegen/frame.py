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
from .tiles import Buf, Elem, Load, Node, Range, Remap, Scalar, Select2, Splat, Tile

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
        #: the op being lowered, and how many ops with regions enclose it: buffers are reused only outside
        #: every region (inside a loop, a buffer that looks dead may be read again by the next iteration)
        self.op = None
        self.nested = 0
        #: counts the ops lowered: a buffer made while lowering the current op may be held in a handler's
        #: local variable, out of sight of the liveness walk, so only buffers of earlier ops are reused
        self.serial = 0
        #: heap buffers made by materializations at the top level: (name, bytes, serial of the op)
        self.recycled: list[tuple[str, int, int]] = []

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

    # -- reuse of dead heap buffers --------------------------------------------------------------------
    def materialize_into(self, lowering, node) -> str:
        """A buffer for materializing ``node``: a heap buffer that nothing live reads any more when there is
        one (a sort's ~120 compare-and-swap stages then cycle through a few buffers), else a new one."""
        size = max(1, _numel(node.shape)) * SIZES[node.ty]
        top = self.nested == 0
        if size >= HEAP_BUFFER_BYTES and top:
            live = _live_buffers(lowering, node, self.op)
            if live is not None:
                for ptr, room, serial in self.recycled:
                    if room >= size and serial < self.serial and ptr not in live:
                        return ptr
        ptr = self.buffer(node.ty, _numel(node.shape))
        if size >= HEAP_BUFFER_BYTES and top and ptr.startswith("%heap"):
            self.recycled.append((ptr, size, self.serial))
        return ptr

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


def _numel(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _live_buffers(lowering, node, op) -> "set[str] | None":
    """The buffers that ``node``, the current op's operands, or any tile value still to be used may read;
    None when some value holds nodes this walk cannot see into (then nothing is reused)."""
    known = (Buf, Elem, Load, Range, Remap, Select2, Splat)
    roots = [node]
    for t in (lowering.pending, lowering.soon, [lowering.fusing] if lowering.fusing is not None else []):
        roots += [x.node for x in t]
    for v in (op.operands if op is not None else ()):
        t = lowering.values.get(v)
        if isinstance(t, Tile):
            roots.append(t.node)
    for t in lowering.values.values():
        if isinstance(t, Tile):
            if t.uses > 0:
                roots.append(t.node)
        elif not isinstance(t, Scalar):
            # tuples, block pointers...: count every tile they hold as live
            inner = _held(t)
            if inner is None:
                return None
            roots += inner
    live: set[str] = set()
    seen: set[int] = set()
    while roots:
        n = roots.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if isinstance(n, Buf):
            live.add(n.ptr)
        elif not isinstance(n, known) and type(n).__name__ != "Gather":   # Gather: children() are complete
            return None
        roots += n.children()
    return live


def _held(obj, depth: int = 0) -> "list | None":
    """The nodes of the tiles inside a tuple, list or plain object (None if too deep to be sure)."""
    if isinstance(obj, Tile):
        return [obj.node]
    if isinstance(obj, Node):
        return [obj]
    if isinstance(obj, (Scalar, str, int, float, bool, type(None))):
        return []
    if depth > 3:
        return None
    items = list(obj) if isinstance(obj, (list, tuple)) else list(getattr(obj, "__dict__", {}).values())
    out: list = []
    for x in items:
        got = _held(x, depth + 1)
        if got is None:
            return None
        out += got
    return out
