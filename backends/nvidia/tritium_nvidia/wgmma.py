"""Hopper's warpgroup matrix multiply (``wgmma.mma_async``, sm_90a) for every dot type it has: fp16, bf16,
tf32 (fp32 operands), fp8 e4m3/e5m2 and 8-bit integers (s32 accumulators).

Four consecutive warps (a warpgroup) compute a 64 x N tile of the accumulator per instruction, reading B
(and usually A) from shared memory through 64-bit descriptors. Warpgroups split M (and N where M is short: wgmma_split). The operands come from
the software pipeline's shared stages when the loop was pipelined; an A the threads already hold as wgmma's
register fragments (a 16-bit tile in an earlier wgmma's accumulator layout: P of attention) is read from
registers; an operand computed before the loop is written once, in the loop's preheader; anything else is
written to a scratch tile first. Shared tiles use :class:`~tritium.gpu.lower.shared.SmemLayout`, whose 128-byte panels
and XOR swizzle are the canonical layouts the descriptors name:

- K-major (the K elements of a row contiguous): LBO unused, SBO = 8 rows of one panel;
- MN-major (16-bit only, "transposed"): LBO = the stride between 128-byte panels, SBO = 8 rows.

An instruction covers 32 bytes of K (k16 for 16-bit types, k8 for tf32, k32 for 8-bit types). Operands of
the other types must be K-major (``NvidiaPolicy.dot_operand_contiguous``): the pipeline stages a tf32 B of a row-major (K, N)
matrix K-major, one 4-byte copy per element (as Triton); an 8-bit one, or any operand not staged, is rewritten
K-major in scratch memory first, which is correct but slower; store B as (N, K) and use ``b.T`` for speed.

The accumulator layout is the mma.sync one per warp (rows 16w..16w+15 of the warpgroup's 64), with the
N/8 blocks of the instruction in consecutive registers, which is the order of wgmma's result registers.
"""
from __future__ import annotations

from typing import Any, Optional

from tritium.gpu import layout as L
from tritium.gpu.lower.context import Context
from tritium.gpu.lower.convert import storage_type
from tritium.gpu.lower.shared import SharedTile, SmemLayout, smem_layout_for
from tritium.gpu.lower.smem_alloc import token
from tritium.gpu.lower.tiles import write_tile
from tritium.gpu.lower.values import Tensor

from .fragment import C_LANE, lo_kind
from .knobs import nvidia
from .restage import can_restage, restage

_SWIZZLE_MODE = {128: 1, 64: 2, 32: 3}
#: dot kind (mma.py's names) -> (PTX operand types, bytes per element, accumulator LLVM type)
KINDS = {"f16": ("f16.f16", 2, "float"), "bf16": ("bf16.bf16", 2, "float"), "tf32": ("tf32.tf32", 4, "float"),
         "e4m3": ("e4m3.e4m3", 1, "float"), "e5m2": ("e5m2.e5m2", 1, "float"), "i8": ("s8.s8", 1, "i32"),
         "u8": ("u8.u8", 1, "i32")}


def k_step(kind: str) -> int:
    """K per instruction: 32 bytes of operand elements."""
    return 32 // KINDS[kind][1]


def wgmma_split(M: int, N: int, num_warps: int) -> Optional[tuple[int, int, int]]:
    """(warpgroups along M, warpgroups along N, N per instruction), or None when this tile does not fit wgmma.
    Warpgroups split M; where M has fewer 64-row blocks than there are warpgroups (64 x N at 8 warps), the rest
    split N, as Triton's warpsPerCTA [4, 2] does, in parts of whole 64-column panels (a B stored (K, N) is read
    from a panel boundary)."""
    if num_warps % 4:
        return None
    wg = num_warps // 4
    wg_m, wg_n = wg, 1
    if M % (64 * wg) and M % 64 == 0 and wg % (M // 64) == 0 and nvidia.wgmma_split_n:
        wg_m, wg_n = M // 64, wg // (M // 64)
        if N % wg_n or (N // wg_n) % 64:
            return None
    if M % (64 * wg_m) or N % 16 or N < 16:
        return None
    part = N // wg_n
    n_inst = min(part, 256)
    while part % n_inst:
        n_inst //= 2
    return wg_m, wg_n, n_inst


def wgmma_shape(M: int, N: int, num_warps: int) -> Optional[tuple[int, int]]:
    """(warpgroups along M, N per instruction), or None when this tile does not fit wgmma (:func:`wgmma_split`)."""
    split = wgmma_split(M, N, num_warps)
    return None if split is None else (split[0], split[2])


def acc_layout(M: int, N: int, num_warps: int) -> L.Layout:
    wg, wg_n, n_inst = wgmma_split(M, N, num_warps)
    part = N // wg_n
    reg = [(0, 1), (8, 0)] + [(0, 8 << i) for i in range((n_inst // 8).bit_length() - 1)]
    v = n_inst
    while v < part:
        reg.append((0, v))
        v <<= 1
    v = 64 * wg
    while v < M:
        reg.append((v, 0))
        v <<= 1
    warp = [(16, 0), (32, 0)] + [(64 << i, 0) for i in range(wg.bit_length() - 1)] + \
        [(0, part << i) for i in range(wg_n.bit_length() - 1)]
    return L.Layout((M, N), reg, C_LANE, warp)


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


def _register_a(lo: Context, v: Any, M: int, K: int) -> Optional[dict]:
    """A's registers by coordinate (register part) when this thread already holds A as wgmma's register
    operand wants it: a 16-bit tile in the accumulator layout of an earlier wgmma of the same rows (P of
    attention), whose fragments are exactly A's. None otherwise (A then goes through shared memory)."""
    got = lo.values.get(v)
    split = wgmma_split(M, K, lo.num_warps)
    if isinstance(got, SharedTile) or split is None or split[1] > 1:    # (split along N: no warp holds whole rows)
        return None
    t = lo.tensor(v)
    if t.ty not in ("half", "bfloat"):
        return None
    frag = acc_layout(M, K, lo.num_warps)
    where = L.reg_map(t.layout, frag)
    if where is None:
        return None
    return {frag.reg_coords(r): t.regs[s] for r, s in enumerate(where)}


def _pack_a(lo: Context, regs: dict, row: int, col: int, ty: str) -> list[str]:
    """The four 32-bit registers of A's fragment at (row, col): (0,0) (8,0) (0,8) (8,8), two columns each."""
    fn = lo.fn
    out = []
    for dr, dc in ((0, 0), (8, 0), (0, 8), (8, 8)):
        v = fn.inst(f"insertelement <2 x {ty}> poison, {ty} {regs[(row + dr, col + dc)]}, i32 0")
        v = fn.inst(f"insertelement <2 x {ty}> {v}, {ty} {regs[(row + dr, col + dc + 1)]}, i32 1")
        out.append(fn.inst(f"bitcast <2 x {ty}> {v} to i32"))
    return out


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


def lower_wgmma_dot(lo: Context, op: Any, a_lay: L.Layout, b_lay: L.Layout, acc_lay: L.Layout) -> Tensor:
    fn = lo.fn
    kind = lo_kind(op)
    ptx_types, _, acc_ty = KINDS[kind]
    kstep = k_step(kind)
    M, N = acc_lay.shape
    K = lo.values[op.operands[0]].shape[1] if hasattr(lo.values[op.operands[0]], "shape") else a_lay.shape[1]
    wg, wg_n, n_inst = wgmma_split(M, N, lo.num_warps)
    scratch_used = 0        # bytes of scratch the operands written to shared memory take
    a_regs = _register_a(lo, op.operands[0], M, K)
    a = None
    if a_regs is None:
        a, scratch_used = _operand_tile(lo, op.operands[0], 1, scratch_used)
    b, took = _operand_tile(lo, op.operands[1], 0, scratch_used)
    scratch_used += took
    if scratch_used:
        # registers written to shared memory by ordinary stores, read next by the tensor cores' async proxy
        fn.emit('call void asm sideeffect "fence.proxy.async.shared::cta;", "~{memory}"()')
        lo.target.barrier(fn)
    c = lo.tensor_in(op.operands[2], acc_lay)
    a_ty = lo.tensor(op.operands[0]).ty if a is None else a.ty
    dty = "s32" if acc_ty == "i32" else "f32"
    rc = "r" if acc_ty == "i32" else "f"
    cregs = list(c.regs)
    if c.ty != acc_ty:
        cregs = [fn.inst(f"fpext {c.ty} {x} to float") for x in cregs]
    # this warp's warpgroup: its rows of A (and, split along N too, its columns of B)
    wgi = fn.pinst(f"lshr i32 {lo.uniform_warp}, 2", "wg")
    row0 = lo.imul(wgi, 64) if wg_n == 1 else lo.imul(fn.inst(f"urem i32 {wgi}, {wg}"), 64) if wg > 1 else "0"
    col0 = None if wg_n == 1 else lo.imul(fn.inst(f"udiv i32 {wgi}, {wg}") if wg > 1 else wgi, N // wg_n)
    sp = lo.target.shared_ptr
    ksteps = K // kstep
    a_addr0 = _pinned(lo, op.operands[0], fn.inst(f"ptrtoint {sp} {a.base} to i32"), M // (64 * wg) * ksteps) \
        if a is not None else ""
    a_live: list[str] = []      # A's registers, read by the tensor cores until the wait
    b_addr0 = _pinned(lo, op.operands[1], fn.inst(f"ptrtoint {sp} {b.base} to i32"), N // wg_n // n_inst * ksteps)
    ci = {}
    for r in range(acc_lay.num_regs):
        ci.setdefault(acc_lay.reg_coords(r), r)
    out = list(cregs)
    # A's register fragments are all written before the fence: a fragment register written between two of the
    # instructions makes ptxas insert a warpgroup.arrive there, which serializes them (attention's P @ V had 7
    # of 8 serialized, its fragments converted one k-step at a time). Descriptors may be computed in between
    # (as Triton does; computing them all first cost registers)
    packed_a: dict[tuple[int, int], list[str]] = {}
    descs: dict = {}
    for m0 in range(0, M, 64 * wg):
        for k0 in range(0, K, kstep):
            if a is None:
                packed_a[(m0, k0)] = _pack_a(lo, a_regs, m0, k0, a_ty)
    fn.emit('call void asm sideeffect "wgmma.fence.sync.aligned;", "~{memory}"()')
    nregs = n_inst // 2
    # a zero accumulator is not read (scale-d false): no registers to set up between the instructions, where
    # ptxas would insert a warpgroup.arrive for their moves
    zero = all(x in ("0", "0x0000000000000000", "0.0") for x in cregs)
    for m0 in range(0, M, 64 * wg):
        for n0 in range(0, N // wg_n, n_inst):
            idx = [ci[(m0 + o[0], n0 + o[1])] for o in _inst_offsets(n_inst)]
            cur = [out[i] for i in idx]
            for k0 in range(0, K, kstep):
                db = _desc_for(lo, b, b_addr0, n0, col0, k0, 0, descs)
                trans_b = 0 if b.smem.fast == 0 else 1
                fresh = zero and k0 == 0
                outs = ", ".join(f"${i}" for i in range(nregs))
                st = "{ " + ", ".join([acc_ty] * nregs) + " }"
                inst = f"wgmma.mma_async.sync.aligned.m64n{n_inst}k{kstep}.{dty}.{ptx_types}"
                # scale-d is a predicate (1: accumulate into d), set from an immediate: a register for it is written
                # between the instructions, which ptxas counts as setting up their operands (it serializes them)
                scale_d = 0 if fresh else 1
                if a is None:
                    packed = packed_a[(m0, k0)]
                    a_live += packed
                    ins = ", ".join(f"${nregs + i}" for i in range(4))
                    asm = (f"{{ .reg .pred p; setp.ne.b32 p, {scale_d}, 0; "
                           f"{inst} {{{outs}}}, {{{ins}}}, ${nregs + 4}, p, 1, 1, {trans_b}; }}")
                    tied = [] if fresh else [str(i) for i in range(nregs)]
                    cons = ",".join(["=f"] * nregs + ["r"] * 4 + ["l"] + tied)
                    args = [f"i32 {x}" for x in packed] + [f"i64 {db}"] + \
                        ([] if fresh else [f"float {x}" for x in cur])
                else:
                    da = _desc_for(lo, a, a_addr0, m0, None if row0 == "0" else row0, k0, 1, descs)
                    trans_a = 0 if a.smem.fast == 1 else 1
                    # scale-a/b (negation) exist for floating-point types, transposes for 16-bit ones only
                    tail = "" if acc_ty == "i32" else ", 1, 1"
                    if KINDS[kind][1] == 2:
                        tail += f", {trans_a}, {trans_b}"
                    asm = (f"{{ .reg .pred p; setp.ne.b32 p, {scale_d}, 0; "
                           f"{inst} {{{outs}}}, ${nregs}, ${nregs + 1}, p{tail}; }}")
                    tied = [] if fresh else [str(i) for i in range(nregs)]
                    cons = ",".join([f"={rc}"] * nregs + ["l", "l"] + tied)
                    args = [f"i64 {da}", f"i64 {db}"] + ([] if fresh else [f"{acc_ty} {x}" for x in cur])
                res = fn.inst(f'call {st} asm sideeffect "{asm}", "{cons}"({", ".join(args)})')
                cur = [fn.inst(f"extractvalue {st} {res}, {i}") for i in range(nregs)]
            for i, x in zip(idx, cur):
                out[i] = x
    fn.emit('call void asm sideeffect "wgmma.commit_group.sync.aligned;", "~{memory}"()')
    pending = lo.__dict__.setdefault("_wgmma_pending", [])
    rec = getattr(lo, "carried_dot", None)      # gpu/lower/carry_dot.py: a dot of the last iteration still runs
    if rec is not None and not pending and rec.wait_slot is None and _same_op(op, rec.first) and \
            acc_ty == rec.ty:
        # the wait also retires the last iteration's dot; written at the end of the body, once the registers
        # that dot reads are known
        rec.wait_slot = fn.placeholder()
        rec.first_regs, rec.first_keep, rec.wait_text = out, a_live, wait_lines
        rec.first_names = out = [fn.tmp("wf") for _ in out]
        lo.deferred_dots.discard(op.results[0])
    elif rec is not None and not pending and rec.wait_slot is not None and _same_op(op, rec.last) and \
            not scratch_used and c.ty == acc_ty and acc_lay == lo.layout_of(op.results[0]) == rec.acc.layout:
        # left running: the next iteration's first dot waits for it (its A registers are carried to that wait)
        rec.running, rec.a_live = True, a_live
        return Tensor(acc_lay, out, c.ty)
    elif op.results[0] not in lo.deferred_dots or scratch_used or a_live or pending:
        if not scratch_used and c.ty == acc_ty and acc_lay == lo.layout_of(op.results[0]) and \
                _next_dot_waits_for_me(op):
            # nothing reads this accumulator before the next dot of the block, whose wait covers both: the
            # tensor cores run the two back to back (attention bwd's dV dot beside dP^T, as Triton does)
            names = [fn.tmp("wd") for _ in out]
            pending.append((out, a_live, names))
            lo.deferred_dots.discard(op.results[0])
            return Tensor(acc_lay, names, c.ty)
        # wait for the results: the registers are read next, and the operands' shared memory may be reused
        # (an operand in scratch memory or registers is dead once this returns, so a dot reading one is never
        # left in flight; A's registers are inputs of the wait so that nothing reuses them before it)
        joined = [r for p in pending for r in p[0]]
        waited = wait_group(fn, 0, out + joined, a_live + [k for p in pending for k in p[1]], acc_ty)
        out, waited = waited[:len(out)], waited[len(out):]
        for _, _, names in pending:
            for name in names:
                fn.emit(f"{name} = bitcast {acc_ty} {waited.pop(0)} to {acc_ty}")
        pending.clear()
        # done here: the loop need not wait for it later (a wait_group 1 with nothing in flight across the
        # back edge made ptxas serialize every wgmma of the kernel, its C7515 note)
        lo.deferred_dots.discard(op.results[0])
    if scratch_used:
        lo.scratch_read_done()
    if c.ty != acc_ty:
        out = [fn.inst(f"fptrunc float {x} to {c.ty}") for x in out]
    return Tensor(acc_lay, out, c.ty)


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


def _same_op(a: Any, b: Any) -> bool:
    return (a.operation if hasattr(a, "operation") else a) == (b.operation if hasattr(b, "operation") else b)


def _next_dot_waits_for_me(op: Any) -> bool:
    """``op``'s result is read only by its block's ``scf.yield`` (an accumulator carried by the loop) and a
    later wgmma dot of the block with the same accumulator type comes before anything that could lower a dot
    of its own (a nested loop or branch): ``op`` can finish at that dot's wait."""
    me = op.operation if hasattr(op, "operation") else op
    uses = list(me.results[0].uses)
    if len(uses) != 1 or uses[0].owner.name != "scf.yield":
        return False
    after = False
    for o in me.block.operations:
        o = o.operation if hasattr(o, "operation") else o
        if not after:
            after = o == me
            continue
        if o.name == "tt.dot":
            return "ttg.dot" in o.attributes and str(o.attributes["ttg.dot"]).strip('"').startswith("wgmma") \
                and KINDS[lo_kind(o)][2] == KINDS[lo_kind(me)][2]
        if o.name in ("scf.for", "scf.while", "scf.if", "scf.yield"):
            return False
    return False


def _inst_offsets(n_inst: int) -> list[tuple[int, int]]:
    """Coordinates (relative to the instruction tile, in this thread's register-part terms) of wgmma's
    result registers d0, d1, ...: per 8 columns, (0,0) (0,1) (8,0) (8,1)."""
    out = []
    for blk in range(n_inst // 8):
        out += [(0, 8 * blk), (0, 8 * blk + 1), (8, 8 * blk), (8, 8 * blk + 1)]
    return out


_CONSTRAINT = {"float": "f", "i32": "r", "half": "h", "bfloat": "h"}


def wait_group(fn: Any, pending: int, regs: list[str], keep: Optional[list[str]] = None,
               ty: str = "float") -> list[str]:
    """``wgmma.wait_group pending``, passing the finished accumulators (LLVM type ``ty``) through so that
    nothing reads them earlier; ``keep`` (i32 registers the dots read) are inputs of the wait, so they stay
    untouched until it."""
    keep = keep or []
    kcons = "".join(",r" for _ in keep)
    kargs = [f"i32 {x}" for x in keep]
    if not regs:
        fn.emit(f'call void asm sideeffect "wgmma.wait_group.sync.aligned {pending};", '
                f'"{kcons[1:]}{"," if keep else ""}~{{memory}}"({", ".join(kargs)})')
        return []
    out = []
    for i in range(0, len(regs), 32):
        chunk = regs[i:i + 32]
        n = len(chunk)
        st = "{ " + ", ".join([ty] * n) + " }"
        cons = ",".join([f"={_CONSTRAINT[ty]}"] * n + [str(k) for k in range(n)]) + (kcons if i == 0 else "")
        body = f"wgmma.wait_group.sync.aligned {pending};" if i == 0 else ""
        args = [f"{ty} {x}" for x in chunk] + (kargs if i == 0 else [])
        r = fn.inst(f'call {st} asm sideeffect "{body}", "{cons},~{{memory}}"({", ".join(args)})')
        out += [fn.inst(f"extractvalue {st} {r}, {k}") for k in range(n)]
    return out


def wait_lines(fn: Any, regs: list[str], keep: list[str], ty: str = "float") -> tuple[list[str], list[str]]:
    """The lines of ``wait_group(fn, 0, regs, keep, ty)`` and its result names, to be placed by the caller."""
    lines, out = [], []
    kcons = "".join(",r" for _ in keep)
    kargs = [f"i32 {x}" for x in keep]
    for i in range(0, len(regs), 32):
        chunk = regs[i:i + 32]
        n = len(chunk)
        st = "{ " + ", ".join([ty] * n) + " }"
        cons = ",".join([f"={_CONSTRAINT[ty]}"] * n + [str(k) for k in range(n)]) + (kcons if i == 0 else "")
        body = "wgmma.wait_group.sync.aligned 0;" if i == 0 else ""
        args = [f"{ty} {x}" for x in chunk] + (kargs if i == 0 else [])
        r = fn.tmp("w")
        lines.append(f'{r} = call {st} asm sideeffect "{body}", "{cons},~{{memory}}"({", ".join(args)})')
        for k in range(n):
            out.append(fn.tmp("w"))
            lines.append(f"{out[-1]} = extractvalue {st} {r}, {k}")
    return lines, out


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
