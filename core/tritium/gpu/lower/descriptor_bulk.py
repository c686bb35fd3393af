"""Tensor-descriptor blocks copied whole by the target's copy engine (``target.bulk_tensor_copies``).

A descriptor qualifies when its base, shape and strides are the same in every program of a launch (kernel
arguments, constants and arithmetic on them: the host ``TensorDescriptor`` is rebuilt that way), it has 1 to 5
dimensions, its base and outer strides are known 16-byte multiples, its block fits the engine's boxes
(:func:`box_for`), and a descriptor load or store uses it. When its base, shape and strides are
kernel arguments or constants (every host ``TensorDescriptor``, and a kernel's own descriptor of its
arguments) the launcher encodes its tensor map and passes it as a kernel parameter
(``target.param_tensor_map``); any other's is written where the descriptor is made, once per program.
Pipelined loads of it (pipeline.py) become bulk copies of boxes into
the stage, whose layout is :class:`~.shared.SmemLayout` with the last dimension contiguous: rows of at most
128 bytes ("panels"), 16-byte chunks swizzled by row, which is what the copy engine's 32/64/128-byte swizzle
modes write when the stage starts 1024-byte aligned; other loads of it copy the same way once
(descriptor_load.py). Out-of-bounds elements (any dimension, negative offsets too) arrive as zeros, or NaN
for a ``padding_option="nan"`` descriptor of floats (the map asks the engine for a NaN fill), as the portable
path's masked loads give. A store of such a descriptor writes the block to shared memory in the same layout
and copies it out in boxes; the engine drops the elements outside the tensor, as the portable path's masked
stores do.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ..._mlir import ir
from ...llvmir.types import BYTES
from ..target import guarded
from .context import Context
from .operands import split_operands, str_attr
from .shared import SharedTile, SmemLayout
from .tiles import write_tile
from .values import owner_op

#: the copy engine's largest box edge (elements)
_MAX_BOX = 256


@dataclass(frozen=True)
class BulkMap:
    """A descriptor's tensor map: its address (i64), and the boxes one block is copied in."""
    addr: str
    ok: str             # i1: no dimension is empty (the engine cannot describe one); where one is, every
                        # element is out of bounds: loads give the padding, stores write nothing
    block: tuple        # block shape, outermost first
    eb: int             # bytes per element
    box: tuple          # box shape, innermost first (the copies' coordinate order)

    @property
    def rows(self) -> int:
        n = 1
        for d in self.block[:-1]:
            n *= d
        return n

    @property
    def cols(self) -> int:
        return self.block[-1]

    @property
    def smem(self) -> SmemLayout:
        return SmemLayout(tuple(self.block), len(self.block) - 1, self.eb)

    def boxes(self) -> list[tuple[list[int], int]]:
        """(the box's offset per coordinate, innermost first; its byte offset in the stage) for each box of one
        block. Boxes split the contiguous dimension into panels and the outermost into runs of at most 256;
        each then lands as whole rows of the stage's layout (every other dimension is whole in the box)."""
        rank, panel = len(self.block), self.box[0]
        outer = self.box[-1] if rank > 1 else 1
        mid = self.rows // self.block[0] if rank > 1 else 1
        out = []
        for p in range(self.cols // panel):
            for q in range(self.block[0] // outer if rank > 1 else 1):
                coords = [p * panel] + [0] * (rank - 2) + [q * outer] if rank > 1 else [p * panel]
                out.append((coords, (p * self.rows + q * outer * mid) * panel * self.eb))
        return out

    @property
    def nbytes(self) -> int:
        return self.rows * self.cols * self.eb


def _swizzle(row_bytes: int) -> int:
    return {16: 0, 32: 1, 64: 2, 128: 3}[row_bytes]


_UNIFORM_OPS = ("arith.", "tt.get_num_programs")


def launch_uniform(v: Any, depth: int = 0) -> bool:
    """``v`` has one value in every program of a launch: a kernel argument, a constant, or scalar
    arithmetic on such values."""
    if depth > 32:
        return False
    if isinstance(v, ir.BlockArgument):
        parent = v.owner.owner
        return parent is not None and parent.operation.name == "func.func"
    o = owner_op(v)
    if o is None or "tensor<" in str(v.type):
        return False
    if o.name == "arith.constant":
        return True
    if not o.name.startswith(_UNIFORM_OPS) or o.regions and len(o.regions):
        return False
    return all(launch_uniform(x, depth + 1) for x in o.operands)


def _argument_number(v: Any, kernel: Any) -> Optional[int]:
    if isinstance(v, ir.BlockArgument):
        parent = v.owner.owner
        if parent is not None and parent.operation == kernel.operation:
            return v.arg_number
    return None


def _argument_or_constant(v: Any, kernel: Any) -> Any:
    """The kernel-argument number ``v`` is (seen through a sign extension), ["const", value] for an integer
    constant, else None."""
    n = _argument_number(v, kernel)
    if n is not None:
        return n
    o = owner_op(v)
    if o is None:
        return None
    if o.name == "arith.extsi":
        return _argument_number(o.operands[0], kernel)
    if o.name == "arith.constant":
        try:
            return ["const", ir.IntegerAttr(o.attributes["value"]).value]
        except (ValueError, TypeError):
            return None
    return None


def launch_argument_fields(op: Any, kernel: Any) -> Optional[list]:
    """Where the base, shape and outer strides of the descriptor ``op`` makes come from, when each is an
    argument of ``kernel`` (its number) or a constant (["const", value]) and the last stride is the constant 1; else None.
    A host ``TensorDescriptor`` is such a descriptor (compiler/kernel_args.py rebuilds it from consecutive
    arguments), and so is a kernel's own descriptor of its arguments: the launcher has those values at hand
    and can encode the map itself."""
    parts = split_operands(op, ["base", "shape", "strides"])
    fields = [_argument_or_constant(v, kernel) for v in parts["base"] + parts["shape"] + parts["strides"][:-1]]
    if not fields or not isinstance(fields[0], int) or any(f is None for f in fields):
        return None
    if _argument_or_constant(parts["strides"][-1], kernel) != ["const", 1]:
        return None
    return fields


def _read_by_loads(v: Any, every_rank: bool = True) -> bool:
    users = ("tt.descriptor_load", "tt.descriptor_store") + (("tt.descriptor_reduce", ) if every_rank else ())
    return any(u.owner.name in users for u in v.uses)


def only_reduced(v: Any) -> bool:
    """The descriptor ``v`` is used by reductions only (their bulk form needs no ordering against other accesses
    of it in the program)."""
    return all(u.owner.name == "tt.descriptor_reduce" for u in v.uses)


def _typed(v: Any, elem: str, nan: bool) -> Optional[str]:
    """The element type the copy engine must know for the descriptor ``v`` of LLVM type ``elem`` (see
    ``target.build_tensor_map``), or None where its copies move bits."""
    kinds = {str_attr(u.owner, "kind") for u in v.uses if u.owner.name == "tt.descriptor_reduce"}
    if elem in NAN_FILLED and (nan or kinds):
        return elem
    if not kinds or elem not in ("i32", "i64"):
        return None
    return ("s" if kinds & {"min", "max"} else "u") + elem[1:]


#: the engine's element types of a NaN fill (out-of-bounds elements of a ``padding_option="nan"`` descriptor)
NAN_FILLED = ("half", "bfloat", "float", "double")


def box_for(block: tuple, eb: int, every_rank: bool = True) -> Optional[tuple[list[int], int]]:
    """(the box, innermost first; the swizzle: 0 none, 1/2/3 for 32/64/128-byte rows) that copies ``block`` into
    the stage's layout (:class:`SmemLayout`), or None where the engine cannot. A block of one row is plain
    contiguous (runs of up to 256 elements); otherwise the contiguous dimension is cut into panels of at most 128 bytes,
    swizzled as the layout is, the outermost dimension into runs of at most 256, and every dimension between
    must fit a box whole (at most 256). Without ``every_rank`` (``target.bulk_tensor_every_rank``): 2-D blocks
    only, in panels (the forms checked on the GPU before)."""
    rank, cols = len(block), block[-1]
    if eb not in (1, 2, 4, 8) or cols * eb < 16 or not 1 <= rank <= 5 or not every_rank and rank != 2:
        return None
    rows = 1
    for d in block[:-1]:
        rows *= d
    if rows == 1 and every_rank:
        # one row (a 1-D block, or a row of a softmax): the layout is plain contiguous, whatever its panels
        return [min(cols, _MAX_BOX)] + [1] * (rank - 1), 0
    if any(d > _MAX_BOX for d in block[1:-1]):
        return None
    panel = min(cols, 128 // eb)
    # every box must start at a whole swizzle pattern (8 rows of the panel) for the engine's swizzle to be
    # the stage's
    if cols > panel and rows * panel * eb % 1024:
        return None
    return [panel, *reversed(block[1:-1]), min(block[0], _MAX_BOX)], _swizzle(panel * eb)


def tensor_map_for(ctx: Context, op: Any, c: Any) -> Optional[BulkMap]:
    """The tensor map of the descriptor ``c`` made by ``op``, written here, when it qualifies (module doc)."""
    if not ctx.target.bulk_tensor_copies or c.padding not in ("zero", "nan"):
        return None
    wide = ctx.target.bulk_tensor_every_rank
    nan = c.padding == "nan"
    if nan and not wide:
        return None
    if nan and c.elem not in NAN_FILLED:
        return None
    if not _read_by_loads(op.results[0], wide) or not all(launch_uniform(x) for x in op.operands):
        return None
    eb = BYTES.get(c.elem, 0)
    shaped = box_for(tuple(c.block), eb, wide)
    if shaped is None:
        return None
    box, swizzle = shaped
    # the engine needs a 16-byte aligned base and outer strides: what a host descriptor's rules promise (its
    # arguments say so) and a kernel's own descriptor has when its arguments were specialized so; a
    # descriptor of 40-byte int8 rows keeps the portable path
    parts = split_operands(op, ["base", "shape", "strides"])
    if ctx.axis.info(parts["base"][0]).div[0] % 16 or any(ctx.axis.info(s).div[0] * eb % 16
                                                          for s in parts["strides"][:-1]):
        return None
    fn = ctx.fn

    def i64(s: Any) -> str:
        return s.value if s.ty == "i64" else fn.inst(f"sext {s.ty} {s.value} to i64")

    def i32(s: Any) -> str:
        return s.value if s.ty == "i32" else fn.inst(f"trunc {s.ty} {s.value} to i32")

    base = fn.inst(f"ptrtoint {ctx.target.global_ptr} {c.base.value} to i64")
    dims = [i32(s) for s in reversed(c.shape)]
    strides = [fn.inst(f"mul i64 {i64(s)}, {eb}") for s in reversed(c.strides[:-1])]
    ok = "true"
    for d in dims:
        gt = fn.inst(f"icmp sgt i32 {d}, 0")
        ok = gt if ok == "true" else fn.inst(f"and i1 {ok}, {gt}")
    typed = _typed(op.results[0], c.elem, nan)
    if typed is None and c.elem in NAN_FILLED and ctx.target.tensor_map_value_types:
        typed = c.elem
    # a map of kernel arguments comes encoded with the launch (one per launch: no per-program cost, and no
    # memory that concurrent launches share); others (fields computed in the kernel) are built by each program
    host = launch_argument_fields(op, ctx.func)
    addr = ctx.target.param_tensor_map(fn, host, box, eb, swizzle, elem=typed, nan_fill=nan) if host else None
    if addr is None:
        template = ctx.scratch(128, 128)
        addr = ctx.target.build_tensor_map(fn, ctx.module, template, base, dims, strides, box, eb, swizzle,
                                           elem=typed, nan_fill=nan)
        ctx.scratch_read_done()
    return BulkMap(addr, ok, tuple(c.block), eb, tuple(box))


def aligned_start(ctx: Context, c: Any, indices: list) -> bool:
    """The innermost coordinate of a block of ``c`` at ``indices`` (IR values, outermost first) is provably a
    multiple of 16 bytes. The copy engine requires it of every bulk tensor copy, whatever the map says (Triton's
    TMA tutorial states the rule; a box starting elsewhere is an illegal instruction on the GPU, which is what the
    H200 reported for tests/gpu/test_tma_rank.py, whose column offsets were not such multiples). The block's
    other boxes start whole panels (128 bytes) or runs of 256 elements later. Unproved: the portable path."""
    if not indices:
        return False
    eb = BYTES.get(c.elem, 0)
    return eb > 0 and ctx.axis.info(indices[-1]).div[0] * eb % 16 == 0


def box_coords(ctx: Context, m: BulkMap, idx: list) -> list[tuple[list[str], int]]:
    """(coordinates, innermost first, i32; byte offset in the block's shared copy) of each box of the block at
    ``idx`` (Scalars, outermost first)."""
    fn = ctx.fn
    first = [s.value if s.ty == "i32" else fn.inst(f"trunc {s.ty} {s.value} to i32") for s in reversed(idx)]
    return [([x if d == 0 else fn.inst(f"add i32 {x}, {d}") for x, d in zip(first, offs)], off)
            for offs, off in m.boxes()]


def issue_bulk_loads(ctx: Context, m: BulkMap, idx: list, dst: str, bar: str) -> None:
    """Start the copies of the block at ``idx`` (Scalars, outermost first) into the stage at ``dst``, counted
    by ``bar`` (the caller arrived on it expecting ``m.nbytes``; a single thread calls this)."""
    for coords, off in box_coords(ctx, m, idx):
        ctx.target.bulk_tensor_load(ctx.fn, ctx.smem_ptr(dst, str(off)) if off else dst, m.addr, coords, bar)


class BulkStages:
    """The stages' barriers of a loop whose descriptor loads are bulk copies (descriptor_bulk.py): one per
    stage, armed by the thread that issues the stage's copies with the bytes they bring."""

    def __init__(self, ctx: Context, maps: list, stages: int, empties: bool = False) -> None:
        self.maps, self.stages = maps, stages
        # ``empties``: a second barrier per stage, after the full ones, that frees it (pipeline_empty.py)
        self.empties = empties
        self.empty_parity: Optional[str] = None     # the parity the next issue's refill waits for, if any
        self.producer = False       # the copies are a producer warp's (pipeline_producer.py): issue() is a no-op
        self.warps = ctx.num_warps
        self.key, self.bars = ctx.shared_buffer(8 * stages * (2 if empties else 1), 8)
        self.nbytes = sum(m.nbytes for m in maps if m is not None)
        self.leader = ctx.fn.inst(f"icmp eq i32 {ctx.target.thread_id(ctx.fn)}, 0")
        # one answer for the loop: every map usable, else all of its descriptor loads take cp.async
        ok = "true"
        for m in maps:
            if m is not None:
                ok = m.ok if ok == "true" else ctx.fn.inst(f"and i1 {ok}, {m.ok}")
        self.ok = ok
        self.not_ok = "false" if ok == "true" else ctx.fn.inst(f"xor i1 {ok}, true")

    def wait(self, ctx: Context, stage: str, phase: str) -> None:
        guarded(ctx.fn, self.ok, lambda: ctx.target.bulk_wait(ctx.fn, self.bar(ctx, stage), phase))

    def bar(self, ctx: Context, stage: str) -> str:
        return ctx.smem_ptr(self.bars, ctx.imul(stage, 8))

    def empty_bar(self, ctx: Context, stage: str) -> str:
        return ctx.smem_ptr(ctx.smem_ptr(self.bars, str(8 * self.stages)), ctx.imul(stage, 8))

    def each(self, ctx: Context, emit: Any) -> None:
        def all_stages() -> None:
            for s in range(self.stages):
                emit(ctx.smem_ptr(self.bars, str(8 * s)))
        guarded(ctx.fn, self.leader, all_stages)

    def init(self, ctx: Context) -> None:
        """Every stage's barriers initialized (the leader; ordered before their use by the caller)."""
        self.each(ctx, lambda bar: ctx.target.bulk_barrier_init(ctx.fn, bar))
        if self.empties:
            self.each(ctx, lambda bar: ctx.target.bulk_release_init(
                ctx.fn, ctx.smem_ptr(bar, str(8 * self.stages)), self.warps))

    def inval(self, ctx: Context) -> None:
        self.each(ctx, lambda bar: ctx.target.bulk_barrier_inval(ctx.fn, bar))
        if self.empties:
            self.each(ctx, lambda bar: ctx.target.bulk_barrier_inval(ctx.fn, ctx.smem_ptr(bar, str(8 * self.stages))))

    def zero_stage(self, ctx: Context, bases: list, stage: str) -> None:
        """An empty tensor: its blocks are all zeros (every thread writes its share of the stage)."""
        fn = ctx.fn
        threads = ctx.num_warps * ctx.warp_size

        def emit() -> None:
            for m, (proto, stage_bytes) in zip(self.maps, bases):
                if m is None:
                    continue
                dst = ctx.smem_ptr(proto.base, ctx.imul(stage, stage_bytes))
                for i in range(0, m.nbytes, 16 * threads):
                    off = fn.inst(f"add i32 {fn.inst(f'mul i32 {ctx.tid}, 16')}, {i}")
                    in_tile = fn.inst(f"icmp ult i32 {off}, {m.nbytes}")
                    p = ctx.smem_ptr(dst, off)

                    def zero(p: str = p) -> None:
                        fn.emit(f"store <4 x i32> zeroinitializer, {ctx.target.shared_ptr} {p}, align 16")
                    guarded(fn, in_tile, zero)

        def after_readers() -> None:
            if self.empties:
                # no CTA barrier before the refill: the stage's readers (every warp) are done here
                ctx.target.barrier(fn)
            emit()
        guarded(fn, self.not_ok, after_readers)

    def issue(self, ctx: Context, operands: list, bases: list, stage: str, valid: Optional[str]) -> None:

        if self.producer:
            return
        parity = self.empty_parity if self.empties else None

        def emit() -> None:
            if parity is not None:
                # every warp has released the stage's previous read (pipeline_empty.py)
                ctx.target.bulk_wait(ctx.fn, self.empty_bar(ctx, stage), parity)
            bar = self.bar(ctx, stage)
            ctx.target.bulk_expect(ctx.fn, bar, self.nbytes)
            for m, (_, idx), (proto, stage_bytes) in zip(self.maps, operands, bases):
                if m is not None:
                    issue_bulk_loads(ctx, m, idx, ctx.smem_ptr(proto.base, ctx.imul(stage, stage_bytes)), bar)
        guarded(ctx.fn, ctx.and_pred(ctx.and_pred(self.leader, valid), self.ok), emit)


def store_block_bulk(ctx: Context, c: Any, idx: list, value_v: Any, kind: str = "", inside: str = "true") -> None:
    """``c.store(idx, value)`` through shared memory and bulk copies (``c.tmap`` is set), or with ``kind`` the
    descriptor reduction of that kind (bulk reductions, atomic per element as the portable path's). As in Triton,
    the program goes on once the copies have read shared memory; they reach global memory before the kernel
    ends. Where the i1 ``inside`` is false (a plain store only), the block goes out of shared memory element by
    element instead (descriptor_fallback.py)."""
    m = c.tmap
    fn = ctx.fn
    val = ctx.tensor(value_v)
    yes, join = fn.label("bulkst"), fn.label("stj")
    fn.cond_br(m.ok, yes, join)         # an empty tensor: nothing to store
    fn.start_block(yes)
    ctx.push_scope()
    base = ctx.scratch(m.nbytes, 1024)
    write_tile(ctx, val, SharedTile(base, m.smem, c.elem), matrix=True)
    ctx.target.bulk_store_fence(fn)
    ctx.target.barrier(fn)
    from .descriptor_fallback import unless_inside
    unless_inside(ctx, c, m, idx, base, inside, join)
    boxes = box_coords(ctx, m, idx)
    leader = fn.inst(f"icmp eq i32 {ctx.target.thread_id(fn)}, 0")

    def emit() -> None:
        for coords, off in boxes:
            src = ctx.smem_ptr(base, str(off)) if off else base
            if kind:
                ctx.target.bulk_tensor_reduce(fn, m.addr, coords, src, kind)
            else:
                ctx.target.bulk_tensor_store(fn, m.addr, coords, src)
        ctx.target.bulk_store_wait_read(fn)
    guarded(fn, leader, emit)
    ctx.scratch_read_done()
    ctx.pop_scope()
    fn.br(join)
    fn.start_block(join)
