"""wgmma's shared-memory operands (wgmma.py issues the instructions): an operand as a shared tile the 64-bit
matrix descriptors can name (a pipelined stage as it is; an 8-bit stage along the other dimension rewritten
K-major; an operand computed before the loop written once, in the loop's preheader; anything else written to
scratch memory), and the descriptors themselves, one per instruction's slice of the tile."""
from __future__ import annotations

from typing import Any, Optional

from tritium.gpu.lower.context import Context
from tritium.gpu.lower.convert import storage_type
from tritium.gpu.lower.shared import SharedTile, SmemLayout, smem_layout_for
from tritium.gpu.lower.smem_alloc import token
from tritium.gpu.lower.tiles import write_tile
from tritium.gpu.lower.values import Tensor

from .knobs import nvidia
from .restage import can_restage, restage

_SWIZZLE_MODE = {128: 1, 64: 2, 32: 3}


def _compatible(smem: SmemLayout, k_dim: int) -> bool:
    # only 16-bit operands may be MN-major ("transposed")
    return smem.row_bytes in _SWIZZLE_MODE and smem.eb in (1, 2, 4) and smem.rows % 8 == 0 \
        and (smem.eb == 2 or smem.fast == k_dim)


def _descriptor(lo: Context, addr: str, lbo: int, sbo: int, mode: int) -> str:
    """The 64-bit matrix descriptor of a shared tile starting at ``addr`` (an i32 shared address)."""
    fn = lo.fn
    a = fn.inst(f"lshr i32 {addr}, 4")
    a = fn.inst(f"and i32 {a}, 16383")
    a64 = fn.inst(f"zext i32 {a} to i64")
    const = ((lbo >> 4) & 0x3FFF) << 16 | ((sbo >> 4) & 0x3FFF) << 32 | mode << 62
    return fn.inst(f"or i64 {a64}, {const}")


def _operand_tile(lo: Context, v: Any, k_dim: int, used: int) -> tuple[SharedTile, int]:
    """Operand ``v`` as a shared tile the descriptors can describe (written to scratch past the dot's first
    ``used`` bytes if needed), and the bytes of scratch it took."""
    got = lo.values.get(v)
    if isinstance(got, SharedTile) and _compatible(got.smem, k_dim):
        return got, 0
    if isinstance(got, SharedTile) and nvidia.restage_bytes and can_restage(got.smem, k_dim, lo.num_warps):
        # an 8-bit stage along the other dimension: rewritten K-major in 4 x 4-byte blocks (restage.py)
        smem = SmemLayout(got.smem.shape, k_dim, 1)
        nbytes = (smem.nbytes + 1023) // 1024 * 1024
        tile = SharedTile(lo.smem_ptr(lo.scratch(used + nbytes, 1024), str(used)), smem, got.ty)
        restage(lo, got, tile, k_dim)
        return tile, nbytes
    t = lo.tensor(v)
    smem = smem_layout_for(t.layout, storage_type(lo, t.ty))
    if not _compatible(smem, k_dim):
        smem = SmemLayout(t.layout.shape, k_dim, smem.eb)
    nbytes = (smem.nbytes + 1023) // 1024 * 1024
    frame = lo.invariant_loop(v) if isinstance(got, Tensor) else None
    if frame is not None:
        return _loop_invariant_tile(lo, frame, v, t, smem, nbytes), 0
    base = lo.scratch(used + nbytes, 1024)     # descriptors address whole swizzle atoms
    tile = SharedTile(lo.smem_ptr(base, str(used)), smem, storage_type(lo, t.ty))
    write_tile(lo, t, tile)
    return tile, nbytes


def _last_later_loop(v: Any, loop: Any) -> Any:
    """The last scf.for after ``loop`` in ``loop``'s block that reads ``v`` (in its body), or None."""
    first = loop.operation
    last = None
    for u in v.uses:
        op = u.owner.operation if hasattr(u.owner, "operation") else u.owner
        # (.block of an op without a parent, the module, aborts the MLIR bindings: stop below it)
        while op is not None and op.parent is not None and op.block != first.block:
            op = op.parent
            op = op.operation if op is not None and hasattr(op, "operation") else op
        if op is None or op.parent is None:
            continue
        if op != first and op.name == "scf.for" and first.is_before_in_block(op) \
                and (last is None or last.is_before_in_block(op)):
            last = op
    return last


def _loop_invariant_tile(lo: Context, frame: Any, v: Any, t: Tensor, smem: SmemLayout, nbytes: int) -> SharedTile:
    """An operand computed outside the loop (Q of attention): written once, before the loop, to a buffer live
    through the loop, rather than to scratch memory in every iteration."""
    key = ("wgmma-operand", v, smem)
    tile = frame.memo.get(key)
    if tile is not None:
        return tile
    # a loop after an earlier one in the same block reads the tile the earlier one wrote (causal attention's
    # diagonal loop: Q was written again, its registers kept live through the first loop for that)
    kept = lo.__dict__.setdefault("_operands_for_later_loops", {})
    block = frame.op.operation.block
    got = kept.get((key, block))
    if got is not None:
        tile, k, last = got
        if frame.op.operation == last:
            frame.buffers.append(k)     # its bytes are free once the last loop reading it is done
        frame.memo[key] = tile
        return tile
    fn = lo.fn
    last = _last_later_loop(v, frame.op)
    if last is not None:
        # live from this loop to the end of the last loop that reads it (no buffer opened meanwhile takes these
        # bytes); written once, here
        k = lo.smem.open(nbytes, 1024, start=frame.start)
        base = fn.pinst(f"getelementptr i8, {lo.target.shared_ptr} {lo.smem_base}, i32 {token(k)}", "lbuf")
        tile = SharedTile(base, smem, storage_type(lo, t.ty))
        kept[(key, block)] = (tile, k, last)
    else:
        tile = SharedTile(lo.loop_buffer(frame, nbytes, 1024), smem, storage_type(lo, t.ty))

    def write() -> None:
        lo.target.barrier(fn)           # the bytes may have been another buffer's before the loop
        write_tile(lo, t, tile)
        fn.emit('call void asm sideeffect "fence.proxy.async.shared::cta;", "~{memory}"()')
        lo.target.barrier(fn)

    lo.hoist(frame, write)
    frame.memo[key] = tile
    return tile


def _pinned(lo: Context, v: Any, addr: str, ndesc: int) -> str:
    """``addr`` (of operand ``v``'s tile, ``ndesc`` descriptors per dot) as a value of this point of the loop body:
    the descriptors of a tile written from registers before the loop (Q and
    dO of attention's dQ loop) would otherwise be hoisted out of the loop by LLVM, one 64-bit register pair per
    instruction (16 per 128 x 128 operand) kept live through the loop, where the accumulator needs them (the
    backward's dQ loop spilled and reloaded its 128 accumulator registers every iteration). Computed here, ptxas
    keeps them in uniform registers. Only in a loop whose accumulators (iter args a dot accumulates into) take
    a quarter of a thread's registers or more (the backward's): elsewhere the hoisted descriptors fit, and
    computing them in the loop costs instructions (the forward's loops: +7..16 per iteration, registers
    unchanged), and only for operands of 16 descriptors or more (32 registers hoisted; 128 x 128 at D128). On the
    H200 (PERF.md, sixth session) the D128 backward went from 99.9 to 123.3 TFLOP/s non-causal, but the causal D64
    one (8 descriptors per operand, no spills either way) read 304.5 -> 291.7 (possibly noise: two identical
    kernels differed by 3.5% in the next run; kept out as nothing is gained there). A pipelined stage's address
    depends on the iteration already."""
    if not lo.loops or not nvidia.pin_descriptors or isinstance(lo.values.get(v), SharedTile) or ndesc < 16:
        return addr
    args = lo.loops[-1].op.regions[0].blocks[0].arguments
    held = 0
    for a in args:
        t = lo.values.get(a)
        if isinstance(t, Tensor) and any(u.owner.name == "tt.dot" and u.operand_number == 2 for u in a.uses):
            held += len(t.regs)
    if held < 64:
        return addr
    return lo.fn.inst(f'call i32 asm sideeffect "mov.b32 $0, $1;", "=r,r"(i32 {addr})')


def _desc_for(lo: Context, tile: SharedTile, addr0: str, off_lit: int, off_dyn: Optional[str], k0: int, k_dim: int,
              cache: dict) -> str:
    """Descriptor of the instruction's slice of ``tile``: rows (or columns) from ``off_lit + off_dyn`` (both
    multiples of 64) along the non-K dimension, K from ``k0``. The descriptor of the slice's run-time part is
    made once per dot (``cache``); each instruction's adds its constant byte offset / 16 to the address field,
    as Triton does (shared addresses stay under 2**18, so the 14-bit field does not overflow): 4 uniform
    instructions per wgmma were 64 of attention's inner loop."""
    smem = tile.smem
    mode = _SWIZZLE_MODE[smem.row_bytes]
    eb, P, rows = smem.eb, smem.panel, smem.rows
    if smem.fast == k_dim:
        # K-major: K runs along rows (panels of P elements); the offset counts rows
        lit = (k0 // P) * rows * P * eb + (k0 % P) * eb + off_lit * smem.row_bytes
        dyn = None if off_dyn is None else ("row", off_dyn, smem.row_bytes)
        lbo, sbo = 16, 8 * smem.row_bytes
    else:
        # MN-major: the MN dimension runs along rows; the offset counts columns (whole panels), K rows
        lit = (off_lit // P) * rows * P * eb + k0 * smem.row_bytes
        dyn = None if off_dyn is None else ("panel", off_dyn, rows * P * eb)
        lbo, sbo = rows * P * eb, 8 * smem.row_bytes
    key = (addr0, dyn, lbo, sbo, mode)
    base = cache.get(key)
    if base is None:
        addr = addr0
        if dyn is not None:
            kind, v, scale = dyn
            if kind == "panel":
                v = lo.fn.inst(f"lshr i32 {v}, {P.bit_length() - 1}")
            addr = lo.iadd(addr0, lo.imul(v, scale))
        base = cache[key] = _descriptor(lo, addr, lbo, sbo, mode)
    return base if lit == 0 else lo.fn.inst(f"add i64 {base}, {lit >> 4}")
