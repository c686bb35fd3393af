"""What a GPU target tells the lowering: the few places where LLVM IR differs between devices.

The lowering (:mod:`tritium.gpu.lower`) writes portable LLVM IR for everything it can and asks the
target for: the kernel's signature and annotations, thread and program identity, barriers, warp
shuffles, the dynamic shared memory, special math functions, device printf, and optionally faster forms
of global loads, stores and atomics (predicated instructions instead of branches) and of dot products
(tensor-core strategies). A backend subclasses :class:`TargetHooks`; the defaults below are portable
LLVM IR that any target can start from.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

from ..llvmir.text import Function, Module
from ..llvmir.types import BYTES, const, vector_type

if TYPE_CHECKING:   # assign imports the MLIR bindings: only compiling needs them
    from .assign import LayoutPolicy


class TargetHooks:
    #: threads per warp
    warp_size = 32
    triple = ""
    datalayout = ""
    #: LLVM types of pointers to global and shared memory
    global_ptr = "ptr"
    shared_ptr = "ptr"
    #: address space of module globals the host may read (assert state)
    global_addrspace = 0
    #: divide by 1 where the divisor is 0 (hosts trap on integer division by zero; GPUs do not)
    safe_int_div = False
    #: reductions and conversions may use this many bytes of shared memory per program
    max_shared_bytes = 48 * 1024
    #: the DICompileUnit emission kind of the kernel's line table (tritium.line_info)
    line_table_kind = "LineTablesOnly"
    #: LLVM's maxnum/minnum (tl.maximum, tl.minimum, tl.clamp, tl.max reductions) leave the sign of max(-0.0, +0.0)
    #: open. True where the target's lowering of them does not order -0 below +0 as GPU instructions and the
    #: interpreter do (x86's maxss returns its second operand for equal inputs): the lowering then settles it
    minmax_zero_sign_open = False

    def policy(self, num_warps: int) -> "LayoutPolicy":
        """The layout policy of the ``ttgir`` stage (dot layouts, vector widths)."""
        from .assign import LayoutPolicy
        return LayoutPolicy(num_warps, self.warp_size)

    # -- the kernel ----------------------------------------------------------------------------------
    def kernel_function(self, module: Module, name: str, params: list[str], num_warps: int) -> tuple[Function, list[str]]:
        """Create the kernel's LLVM function; return it and the SSA names of its parameters (one per
        ``params`` entry, already of the LLVM type given there)."""
        raise NotImplementedError

    def finish_kernel(self, module: Module, fn: Function, num_warps: int, shared_bytes: int) -> None:
        """Add what the kernel needs once lowered (annotations, the shared-memory symbol)."""

    # -- identity ------------------------------------------------------------------------------------
    def thread_id(self, fn: Function) -> str:
        raise NotImplementedError

    def uniform_warp(self, fn: Function, tid: str, num_warps: int) -> str:
        """This thread's warp (i32, in the prologue, from ``thread_id``), computed so that the target's code
        generator knows it is the same in every lane of a warp where it has a way to (uniform registers)."""
        return fn.pinst(f"lshr i32 {tid}, {self.warp_size.bit_length() - 1}", "warp")

    def program_id(self, fn: Function, axis: int) -> str:
        raise NotImplementedError

    def num_programs(self, fn: Function, axis: int) -> str:
        raise NotImplementedError

    #: the most CTAs one program may span (``num_ctas``; 1: the target has no CTA clusters)
    max_cluster_ctas = 1

    def cluster_rank(self, fn: Function) -> str:
        """This CTA's index within its program's cluster of ``num_ctas`` CTAs (only where ``max_cluster_ctas > 1``;
        ``program_id``/``num_programs`` then count clusters, not CTAs)."""
        raise NotImplementedError

    # -- synchronization -----------------------------------------------------------------------------
    def barrier(self, fn: Function) -> None:
        raise NotImplementedError

    def shuffle_i32(self, fn: Function, kind: str, value: str, operand: str) -> str:
        """Warp shuffle of an i32: ``kind`` is "xor" (lane ^ operand), "up" (lane - operand), "down" (lane +
        operand; both give the lane its own value when out of range) or "idx" (lane = operand). Called by
        every lane of the warp."""
        raise NotImplementedError

    def shared_base(self, fn: Function) -> str:
        """A ``shared_ptr`` to the start of the program's dynamic shared memory (valid in the prologue)."""
        raise NotImplementedError

    # -- global memory ---------------------------------------------------------------------------------
    def load(self, fn: Function, module: Module, ptr: str, elem: str, vec: int, align: int, pred: Optional[str],
             other: Optional[list[str]], cache: str = "", evict: str = "", volatile: bool = False) -> list[str]:
        """Load ``vec`` consecutive elements of LLVM type ``elem`` from ``ptr``; where ``pred`` is false, the
        result is ``other`` (or zeros). Returns one SSA value per element."""
        vt = vector_type(vec, elem)
        vol = "volatile " if volatile else ""

        def do() -> str:
            return fn.inst(f"load {vol}{vt}, {self.global_ptr} {ptr}, align {align}")

        if pred is None or pred == "true":
            v = do()
        else:
            if other is None:
                other = [const(elem, 0)] * vec
            alt = pack(fn, other, elem)
            before = fn.current
            yes, join = fn.label("ld"), fn.label("ldj")
            fn.cond_br(pred, yes, join)
            fn.start_block(yes)
            loaded = do()
            fn.br(join)
            fn.start_block(join)
            v = fn.inst(f"phi {vt} [{loaded}, %{yes}], [{alt}, %{before}]")
        return unpack(fn, v, elem, vec)

    def store(self, fn: Function, module: Module, ptr: str, elem: str, values: list[str], align: int,
              pred: Optional[str], cache: str = "", evict: str = "") -> None:
        vt = vector_type(len(values), elem)
        guarded(fn, pred, lambda: fn.emit(f"store {vt} {pack(fn, values, elem)}, {self.global_ptr} {ptr}, "
                                          f"align {align}"))

    def syncscope(self, scope: str) -> str:
        """The LLVM ``syncscope("...")`` prefix of atomics of a Triton scope ("gpu", "cta", "sys")."""
        return ""

    def atomic_rmw(self, fn: Function, module: Module, kind: str, ptr: str, elem: str, value: str,
                   pred: Optional[str], sem: str, scope: str) -> str:
        order = self.syncscope(scope) + _ORDER.get(sem, "seq_cst")
        llkind = {"add": "add", "fadd": "fadd", "and": "and", "or": "or", "xor": "xor", "xchg": "xchg",
                  "max": "max", "min": "min", "umax": "umax", "umin": "umin", "fmax": "fmax", "fmin": "fmin"}[kind]
        return guarded_value(fn, pred, elem, lambda: fn.inst(
            f"atomicrmw {llkind} {self.global_ptr} {ptr}, {elem} {value} {order}, align {BYTES.get(elem, 8)}"))

    def atomic_cas(self, fn: Function, module: Module, ptr: str, elem: str, cmp: str, value: str,
                   pred: Optional[str], sem: str, scope: str) -> str:
        base = _ORDER.get(sem, "seq_cst")
        fail = "monotonic" if base in ("monotonic", "release") else "acquire"
        if base == "seq_cst":
            fail = "seq_cst"
        order = self.syncscope(scope) + base
        it = {"half": "i16", "bfloat": "i16", "float": "i32", "double": "i64"}.get(elem, elem)

        def emit() -> str:
            c, v = cmp, value
            if it != elem:
                c = fn.inst(f"bitcast {elem} {c} to {it}")
                v = fn.inst(f"bitcast {elem} {v} to {it}")
            pair = fn.inst(f"cmpxchg {self.global_ptr} {ptr}, {it} {c}, {it} {v} {order} {fail}, "
                           f"align {BYTES.get(elem, 8)}")
            old = fn.inst(f"extractvalue {{ {it}, i1 }} {pair}, 0")
            return fn.inst(f"bitcast {it} {old} to {elem}") if it != elem else old

        return guarded_value(fn, pred, elem, emit)

    # -- math --------------------------------------------------------------------------------------------
    def math(self, fn: Function, module: Module, name: str, args: list[str], ty: str) -> Optional[str]:
        """Code for a math op (``math.exp``, ``arith.divf``, ``tt.precise_sqrt``...) on scalars of LLVM type
        ``ty``, or None to use the portable lowering (LLVM intrinsics and instructions)."""
        return None

    def extern_call(self, fn: Function, module: Module, symbol: str, libpath: str, args: list[tuple[str, str]],
                    ret: str) -> str:
        raise NotImplementedError(f"this target cannot call external function {symbol} (from {libpath})")

    # -- debugging ---------------------------------------------------------------------------------------
    def printf(self, fn: Function, module: Module, fmt: str, args: list[tuple[str, str]]) -> None:
        """Print ``fmt`` (a C format string) with ``args`` ((LLVM type, value), already promoted as C
        varargs are: double, i32/i64, pointers)."""
        raise NotImplementedError

    def dot_strategy(self, kind: str) -> Optional[Callable[..., Any]]:
        """The lowering of ``tt.dot`` ops whose plan has this kind (from :meth:`policy`), or None for the
        portable FMA lowering."""
        return None

    def read_shared_tile(self, lowering: Any, tile: Any, dst: Any, ty: str) -> Any:
        """A target's faster way to load a shared-memory tile into layout ``dst`` (matrix loads), or None."""
        return None

    def write_shared_tile(self, lowering: Any, value: Any, tile: Any) -> bool:
        """Store the register tile ``value`` into the shared-memory ``tile`` a target's faster way (matrix
        stores); False where it has none (nothing emitted: the element-wise stores follow)."""
        return False

    # -- asynchronous copies (software pipelining) --------------------------------------------------------
    def async_copy(self, fn: Function, module: Module, dst: str, src: str, nbytes: int, pred: Optional[str],
                   src_bytes: Optional[str] = None) -> None:
        """Start copying ``nbytes`` from global ``src`` to shared ``dst`` (zeros where ``pred`` is false; with
        ``src_bytes``, an i32 <= nbytes, only that many bytes are read and the rest are zeros); done once
        :meth:`async_wait` says so. The default copies right away."""
        if src_bytes is not None:
            self._partial_copy(fn, dst, src, nbytes, pred, src_bytes)
            return
        et = "i32" if nbytes % 4 == 0 else ("i16" if nbytes % 2 == 0 else "i8")
        n = nbytes // BYTES[et]
        vt = vector_type(n, et)
        zero = "zeroinitializer" if n > 1 else "0"
        if pred is None or pred == "true":
            v = fn.inst(f"load {vt}, {self.global_ptr} {src}, align {nbytes}")
        else:
            before = fn.current
            yes, join = fn.label("cp"), fn.label("cpj")
            fn.cond_br(pred, yes, join)
            fn.start_block(yes)
            got = fn.inst(f"load {vt}, {self.global_ptr} {src}, align {nbytes}")
            fn.br(join)
            fn.start_block(join)
            v = fn.inst(f"phi {vt} [{got}, %{yes}], [{zero}, %{before}]")
        fn.emit(f"store {vt} {v}, {self.shared_ptr} {dst}, align {nbytes}")

    def _partial_copy(self, fn: Function, dst: str, src: str, nbytes: int, pred: Optional[str], src_bytes: str) -> None:
        # byte by byte: the in-bounds bytes from src, zeros after them (and everywhere when pred is false)
        for i in range(nbytes):
            ok = fn.inst(f"icmp ult i32 {i}, {src_bytes}")
            if pred is not None and pred != "true":
                ok = fn.inst(f"and i1 {ok}, {pred}")
            s = fn.inst(f"getelementptr i8, {self.global_ptr} {src}, i32 {i}")
            d = fn.inst(f"getelementptr i8, {self.shared_ptr} {dst}, i32 {i}")
            before = fn.current
            yes, join = fn.label("cpb"), fn.label("cpbj")
            fn.cond_br(ok, yes, join)
            fn.start_block(yes)
            got = fn.inst(f"load i8, {self.global_ptr} {s}, align 1")
            fn.br(join)
            fn.start_block(join)
            fn.emit(f"store i8 {fn.inst(f'phi i8 [{got}, %{yes}], [0, %{before}]')}, {self.shared_ptr} {d}, align 1")

    def async_commit(self, fn: Function) -> None:
        """Close the group of copies started since the last commit."""

    def async_wait(self, fn: Function, pending: int) -> None:
        """Wait until at most ``pending`` committed groups are still in flight (this thread's copies)."""

    #: a pipelined loop of asynchronous copies whose dots wait for themselves, in a kernel of at least this many
    #: warps, tells each stage's landing through a barrier per stage (``stage_*`` below) instead of a CTA
    #: barrier at the top of each iteration, its copies one iteration ahead (gpu/lower/pipeline_decoupled.py);
    #: 0: never
    decoupled_stage_warps = 0

    def stage_barrier_init(self, fn: Function, bar: str, arrivals: int) -> None:
        """Initialize the 8-byte shared barrier ``bar`` for ``arrivals`` arrivals per phase (one thread calls
        it; the caller orders it before every other thread's use)."""
        raise NotImplementedError

    def stage_barrier_inval(self, fn: Function, bar: str) -> None:
        """``bar`` is done with (one thread; its bytes may become ordinary shared memory again)."""

    def stage_arrive(self, fn: Function, bar: str) -> None:
        """Arrive on ``bar`` once every copy this thread started (async_copy) has landed, without waiting."""
        raise NotImplementedError

    def stage_wait(self, fn: Function, bar: str, parity: str) -> None:
        """Wait for the phase of ``bar`` of parity ``parity`` (i32 0/1); what the arrivals' copies wrote is
        then visible to this thread."""
        raise NotImplementedError

    def warpgroup_turns(self, kinds: list) -> bool:
        """With stage barriers, the two warpgroups of a loop whose dots are of these kinds (policy kinds) take turns
        at them (``turn_barrier``; pipeline_turns.py). Only where those dots' lowering has no CTA barrier."""
        return False

    def turn_barrier(self, fn: Function, which: str, threads: int, wait: bool) -> None:
        """Barrier ``which`` (i32 0/1) of ``threads`` threads: arrive and, with ``wait``, wait until all have
        arrived for this round."""
        raise NotImplementedError

    #: dot strategies may leave a loop-carried accumulator in flight into the next iteration (async_dot_wait)
    async_dots = False

    def async_dot_wait(self, fn: Function, pending: int, regs: list[str], ty: str = "float") -> list[str]:
        """Wait until at most ``pending`` groups of asynchronous dots are in flight; ``regs`` (accumulators of
        the finished ones, of LLVM type ``ty``) are returned as values that are ordered after the wait."""
        return regs

    def convert_layout(self, lowering: Any, value: Any, dst: Any) -> Any:
        """A target's faster way to move a tile into layout ``dst`` (e.g. tensor-core operand fragments
        through matrix loads), or None for the portable way through shared memory."""
        return None

    # -- bulk tensor copies (tensor descriptors through a copy engine) --------------------------------------
    #: the target can copy whole blocks of a descriptor: :meth:`build_tensor_map`, then bulk loads whose
    #: completion a shared-memory barrier counts in bytes. The shared layout they write is
    #: :class:`~tritium.gpu.lower.shared.SmemLayout`'s swizzle (``swizzle`` below: 0 none, 1/2/3 for 32/64/128-byte
    #: rows), stage bases 1024-byte aligned.
    bulk_tensor_copies = False
    #: a descriptor load in a loop that is not software-pipelined is copied whole too (else element by element)
    bulk_loads_in_loops = True
    #: bulk copies of every rank (1-5), of loads outside pipelined loops, NaN fills and reductions; else 2-D
    #: pipelined loads and stores only
    bulk_tensor_every_rank = False
    #: a tensor map of floats names their type (half, bfloat, float, double) even where its copies only move
    #: bits; else only where they must know it (NaN fills, reductions)
    tensor_map_value_types = False

    def build_tensor_map(self, fn: Function, module: Module, template: str, base: str, dims: list[str],
                         stride_bytes: list[str], box: list[int], eb: int, swizzle: int,
                         elem: Optional[str] = None, nan_fill: bool = False) -> str:
        """The address (i64) of a tensor map of ``base`` (dims innermost first, i32; outer strides in bytes,
        i64, innermost first; box innermost first; rank 1 to 5) written by this program; ``template``: 128 free
        shared bytes. ``elem``: the element type the copies must know ("half", "bfloat", "float", "double",
        "s32", "u32", "s64", "u64": reductions and NaN fills), None where they move bits; ``nan_fill``:
        out-of-bounds elements read NaN (``elem`` a float type) instead of zeros."""
        raise NotImplementedError

    def param_tensor_map(self, fn: Function, args: list, box: list[int], eb: int, swizzle: int,
                         elem: Optional[str] = None, nan_fill: bool = False) -> Optional[str]:
        """The address (i64) of a tensor map that the launcher encodes from ``args`` (the base, the dims outermost
        first and the outer strides in elements, each a kernel-argument number or ["const", value]) and passes as
        a parameter of the kernel; None where the target cannot (the program then builds it:
        :meth:`build_tensor_map`)."""
        return None

    def kernel_metadata(self) -> dict:
        """What the launcher must know of the kernel just lowered beyond its parameter types."""
        return {}

    def bulk_barrier_init(self, fn: Function, bar: str) -> None:
        """Initialize the 8-byte shared barrier ``bar`` for one arrival per phase (one thread calls it)."""
        raise NotImplementedError

    def bulk_barrier_inval(self, fn: Function, bar: str) -> None:
        raise NotImplementedError

    def bulk_expect(self, fn: Function, bar: str, nbytes: int) -> None:
        """Arrive on ``bar``; its phase completes once ``nbytes`` more bytes of bulk loads have landed."""
        raise NotImplementedError

    def bulk_wait(self, fn: Function, bar: str, parity: str) -> None:
        """Wait (every thread) for the phase of ``bar`` of parity ``parity`` (i32 0/1)."""
        raise NotImplementedError

    def bulk_tensor_load(self, fn: Function, dst: str, tmap: str, coords: list[str], bar: str) -> None:
        """Start the copy of the box at ``coords`` (i32, innermost first) to shared ``dst``; zeros outside."""
        raise NotImplementedError

    def bulk_store_fence(self, fn: Function) -> None:
        """Make this thread's shared-memory writes visible to the bulk copies that read them next."""
        raise NotImplementedError

    def bulk_tensor_store(self, fn: Function, tmap: str, coords: list[str], src: str) -> None:
        """Start copying shared ``src`` to the box at ``coords``; elements outside the tensor are dropped."""
        raise NotImplementedError

    def bulk_tensor_reduce(self, fn: Function, tmap: str, coords: list[str], src: str, kind: str) -> None:
        """Start reducing shared ``src`` into the box at ``coords`` (``kind``: a ``tt.descriptor_reduce`` kind;
        the map was made with the element type, ``elem``); elements outside the tensor are dropped."""
        raise NotImplementedError

    def bulk_store_wait_read(self, fn: Function) -> None:
        """Commit this thread's bulk stores and wait until they have read their shared memory."""
        raise NotImplementedError

    #: a bulk store inside a loop may leave its read of shared memory pending (its own buffer, live through the
    #: loop) until the buffer is written again: bulk_store_commit after the copies, bulk_store_drain before the
    #: next write and after the loop; else bulk_store_wait_read after each store
    bulk_store_deferred = False

    #: a pipelined loop of bulk copies inside an outer loop issues the next outer iteration's first stages
    #: when it ends (gpu/lower/pipeline_prefetch.py): 0 no, 1 on barriers restarted per run, 2 on barriers
    #: whose phases carry on
    prefetch_next_tile = 0

    #: a pipelined loop of bulk copies whose dots run on keeps a barrier at the top of each iteration (else
    #: only the one before the refill)
    bulk_loop_top_barrier = True

    #: a pipelined loop of bulk copies whose dots run on frees each stage through a barrier of its own (one
    #: arrival per warp, ``bulk_release``) that the refilling thread waits for, instead of CTA barriers
    #: (gpu/lower/pipeline_empty.py)
    bulk_empty_barriers = False

    def bulk_release_init(self, fn: Function, bar: str, arrivals: int) -> None:
        """Initialize the 8-byte shared barrier ``bar`` for ``arrivals`` arrivals per phase (one thread calls
        it; ordered before other threads' use by the caller)."""
        raise NotImplementedError

    def bulk_release(self, fn: Function, bar: str) -> None:
        """Arrive on ``bar`` (releasing this thread's earlier reads of shared memory, the async proxy's
        included once the reading instructions have been waited for)."""
        raise NotImplementedError

    #: warps added to a persistent kernel whose K loop of bulk copies frees its stages through empty barriers,
    #: one thread of which issues every copy (gpu/lower/pipeline_producer.py); 0: none
    producer_warps = 0

    #: the same producer warps (with their empty barriers) only for the K loops of a tile loop the user wrote as
    #: ``tl.range(..., warp_specialize=True)``; 0: that hint changes nothing
    ws_producer_warps = 0

    def producer_start(self, fn: Function, warps: int) -> None:
        """Where the producer warps branch off (their registers may be given up)."""

    def split_warp_roles(self, fn: Function, consumers: str, consumer_warps: int, producer_warps: int) -> None:
        """The kernel runs ``producer_warps`` more warps, which leave at block ``consumers``; every CTA barrier
        reachable from that block is the ``consumer_warps`` warps' alone, and the launch takes them all."""
        raise NotImplementedError

    def bulk_store_commit(self, fn: Function) -> None:
        """Commit this thread's bulk stores as one group, without waiting."""
        raise NotImplementedError

    def bulk_store_drain(self, fn: Function) -> None:
        """Wait until every bulk store this thread committed has read its shared memory."""
        raise NotImplementedError


_ORDER = {"acquire": "acquire", "release": "release", "acq_rel": "acq_rel", "relaxed": "monotonic",
          "": "acq_rel"}


def pack(fn: Function, values: list[str], elem: str) -> str:
    if len(values) == 1:
        return values[0]
    vt = vector_type(len(values), elem)
    v = "poison"
    for i, x in enumerate(values):
        v = fn.inst(f"insertelement {vt} {v}, {elem} {x}, i32 {i}")
    return v


def unpack(fn: Function, v: str, elem: str, n: int) -> list[str]:
    if n == 1:
        return [v]
    vt = vector_type(n, elem)
    return [fn.inst(f"extractelement {vt} {v}, i32 {i}") for i in range(n)]


def guarded(fn: Function, pred: Optional[str], emit: Callable[[], None]) -> None:
    if pred is None or pred == "true":
        emit()
        return
    if pred == "false":
        return
    yes, join = fn.label("g"), fn.label("gj")
    fn.cond_br(pred, yes, join)
    fn.start_block(yes)
    emit()
    fn.br(join)
    fn.start_block(join)


def guarded_value(fn: Function, pred: Optional[str], ty: str, emit: Callable[[], str]) -> str:
    if pred is None or pred == "true":
        return emit()
    before = fn.current
    yes, join = fn.label("g"), fn.label("gj")
    fn.cond_br(pred, yes, join)
    fn.start_block(yes)
    v = emit()
    end = fn.current
    fn.br(join)
    fn.start_block(join)
    return fn.inst(f"phi {ty} [{v}, %{end}], [{const(ty, 0)}, %{before}]")
