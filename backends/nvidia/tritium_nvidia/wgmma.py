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
N/8 blocks of the instruction in consecutive registers, which is the order of wgmma's result registers. An fp16
dot with an fp16 result (kind ``f16acc``) accumulates in fp16, as Triton's: the same elements, two adjacent
columns per f16x2 register (N/4 registers per instruction), packed before the fence and split after the dot's own
wait (such a dot is never left running: loops carry one register per element).
"""
from __future__ import annotations

from typing import Any, Optional

from tritium.gpu import layout as L
from tritium.gpu.lower.context import Context
from tritium.gpu.lower.shared import SharedTile
from tritium.gpu.lower.values import Tensor

from .fragment import C_LANE, lo_kind, pack_half2
from .knobs import nvidia
# the operands' tiles and descriptors, and the waits, live in their own modules; their names stay importable
# from here
from .wgmma_operands import (_SWIZZLE_MODE, _compatible, _desc_for, _descriptor, _last_later_loop,  # noqa: F401
                             _loop_invariant_tile, _operand_tile, _pinned)
from .wgmma_promote import promoted, promotion_chunk
from .wgmma_wait import _CONSTRAINT, wait_group, wait_half2, wait_lines, wait_with_pending  # noqa: F401
#: dot kind (mma.py's names) -> (PTX operand types, bytes per element, accumulator LLVM type); "half" (f16acc: fp16
#: products summed in fp16, for fp16 results as in Triton) is held as f16x2, two adjacent columns per register
KINDS = {"f16": ("f16.f16", 2, "float"), "f16acc": ("f16.f16", 2, "half"), "bf16": ("bf16.bf16", 2, "float"),
         "tf32": ("tf32.tf32", 4, "float"), "e4m3": ("e4m3.e4m3", 1, "float"), "e5m2": ("e5m2.e5m2", 1, "float"),
         "i8": ("s8.s8", 1, "i32"), "u8": ("u8.u8", 1, "i32")}


def k_step(kind: str) -> int:
    """K per instruction: 32 bytes of operand elements."""
    return 32 // KINDS[kind][1]


def wgmma_split(M: int, N: int, num_warps: int, b_k_major: bool = False) -> Optional[tuple[int, int, int]]:
    """(warpgroups along M, warpgroups along N, N per instruction), or None when this tile does not fit wgmma.
    Warpgroups split M; where M has fewer 64-row blocks than there are warpgroups (64 x N at 8 warps), the rest
    split N, as Triton's warpsPerCTA [4, 2] does. A B that may be stored MN-major (16-bit types) is split in whole
    64-column panels, since a warpgroup's descriptor starts at a panel boundary; ``b_k_major`` (tf32 and 8-bit
    types, always staged K-major) allows any part of 16 columns or more, whose start is a row offset."""
    if num_warps % 4:
        return None
    wg = num_warps // 4
    wg_m, wg_n = wg, 1
    if M % (64 * wg) and M % 64 == 0 and wg % (M // 64) == 0 and nvidia.wgmma_split_n:
        wg_m, wg_n = M // 64, wg // (M // 64)
        if N % wg_n or (N // wg_n) % (16 if b_k_major else 64):
            return None
    if M % (64 * wg_m) or N % 16 or N < 16:
        return None
    part = N // wg_n
    n_inst = min(part, 256)
    while part % n_inst:
        n_inst //= 2
    return wg_m, wg_n, n_inst


def b_always_k_major(kind: str) -> bool:
    """wgmma transposes only 16-bit operands in shared memory: every other kind's B is staged K-major."""
    return KINDS[kind][1] != 2


def wgmma_shape(M: int, N: int, num_warps: int, b_k_major: bool = False) -> Optional[tuple[int, int]]:
    """(warpgroups along M, N per instruction), or None when this tile does not fit wgmma (:func:`wgmma_split`)."""
    split = wgmma_split(M, N, num_warps, b_k_major)
    return None if split is None else (split[0], split[2])


def acc_layout(M: int, N: int, num_warps: int, b_k_major: bool = False) -> L.Layout:
    wg, wg_n, n_inst = wgmma_split(M, N, num_warps, b_k_major)
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


def lower_wgmma_dot(lo: Context, op: Any, a_lay: L.Layout, b_lay: L.Layout, acc_lay: L.Layout) -> Tensor:
    fn = lo.fn
    kind = lo_kind(op)
    ptx_types, _, acc_ty = KINDS[kind]
    kstep = k_step(kind)
    M, N = acc_lay.shape
    K = lo.values[op.operands[0]].shape[1] if hasattr(lo.values[op.operands[0]], "shape") else a_lay.shape[1]
    wg, wg_n, n_inst = wgmma_split(M, N, lo.num_warps, b_always_k_major(kind))
    # the accumulator first: converting it may go through scratch memory, which must not be the scratch the
    # operands below are written to (it stays theirs until the instructions have read it)
    c = lo.tensor_in(op.operands[2], acc_lay)
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
    a_ty = lo.tensor(op.operands[0]).ty if a is None else a.ty
    # the instruction's accumulator registers: f32 or s32 per element, or f16x2 (``half2``) per column pair
    half2 = acc_ty == "half"
    dty = {"i32": "s32", "half": "f16"}.get(acc_ty, "f32")
    reg_ty = "i32" if acc_ty in ("i32", "half") else "float"
    rc = "r" if reg_ty == "i32" else "f"
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
    nregs = n_inst // (4 if half2 else 2)
    # a zero accumulator is not read (scale-d false): no registers to set up between the instructions, where
    # ptxas would insert a warpgroup.arrive for their moves
    zero = all(x in ("0", "0x0000000000000000", "0.0", "0xH0000") for x in cregs)

    def issue(m0: int, n0: int, k0: int, cur: list[str], fresh: bool) -> list[str]:
        """One instruction: the 64 x n_inst tile at (m0, n0) of this warpgroup, K step k0, into ``cur``."""
        db = _desc_for(lo, b, b_addr0, n0, col0, k0, 0, descs)
        trans_b = 0 if b.smem.fast == 0 else 1
        outs = ", ".join(f"${i}" for i in range(nregs))
        st = "{ " + ", ".join([reg_ty] * nregs) + " }"
        inst = f"wgmma.mma_async.sync.aligned.m64n{n_inst}k{kstep}.{dty}.{ptx_types}"
        # scale-d is a predicate (1: accumulate into d), set from an immediate: a register for it is written
        # between the instructions, which ptxas counts as setting up their operands (it serializes them)
        scale_d = 0 if fresh else 1
        if a is None:
            packed = packed_a[(m0, k0)]
            a_live.extend(packed)
            ins = ", ".join(f"${nregs + i}" for i in range(4))
            asm = (f"{{ .reg .pred p; setp.ne.b32 p, {scale_d}, 0; "
                   f"{inst} {{{outs}}}, {{{ins}}}, ${nregs + 4}, p, 1, 1, {trans_b}; }}")
            tied = [] if fresh else [str(i) for i in range(nregs)]
            cons = ",".join([f"={rc}"] * nregs + ["r"] * 4 + ["l"] + tied)
            args = [f"i32 {x}" for x in packed] + [f"i64 {db}"] + ([] if fresh else [f"{reg_ty} {x}" for x in cur])
        else:
            da = _desc_for(lo, a, a_addr0, m0, None if row0 == "0" else row0, k0, 1, descs)
            trans_a = 0 if a.smem.fast == 1 else 1
            # scale-a/b (negation) exist for floating-point types, transposes for 16-bit ones only
            tail = "" if dty == "s32" else ", 1, 1"
            if KINDS[kind][1] == 2:
                tail += f", {trans_a}, {trans_b}"
            asm = (f"{{ .reg .pred p; setp.ne.b32 p, {scale_d}, 0; "
                   f"{inst} {{{outs}}}, ${nregs}, ${nregs + 1}, p{tail}; }}")
            tied = [] if fresh else [str(i) for i in range(nregs)]
            cons = ",".join([f"={rc}"] * nregs + ["l", "l"] + tied)
            args = [f"i64 {da}", f"i64 {db}"] + ([] if fresh else [f"{reg_ty} {x}" for x in cur])
        res = fn.inst(f'call {st} asm sideeffect "{asm}", "{cons}"({", ".join(args)})')
        return [fn.inst(f"extractvalue {st} {res}, {i}") for i in range(nregs)]

    tiles = [(m0, n0, [ci[(m0 + o[0], n0 + o[1])] for o in _inst_offsets(n_inst)])
             for m0 in range(0, M, 64 * wg) for n0 in range(0, N // wg_n, n_inst)]
    chunk = promotion_chunk(op, kind, K, kstep)
    if chunk is not None:
        out = promoted(lo, op, issue, tiles, out, zero, K, kstep, chunk, a_live, acc_ty)
        if scratch_used:
            lo.scratch_read_done()
        if c.ty != acc_ty:
            out = [fn.inst(f"fptrunc float {x} to {c.ty}") for x in out]
        return Tensor(acc_lay, out, c.ty)
    # an fp16 accumulator's f16x2 registers are packed before the fence, as A's fragments are (below the fence,
    # ptxas inserts a warpgroup.arrive before the first instruction)
    words = [(idx, [] if zero else [pack_half2(fn, out[idx[j]], out[idx[j + 1]]) for j in range(0, len(idx), 2)])
             for _, _, idx in tiles] if half2 else []
    fn.emit('call void asm sideeffect "wgmma.fence.sync.aligned;", "~{memory}"()')
    for t, (m0, n0, idx) in enumerate(tiles):
        cur = words[t][1] if half2 else [out[i] for i in idx]
        for k0 in range(0, K, kstep):
            cur = issue(m0, n0, k0, cur, zero and k0 == 0)
        if half2:
            words[t] = (idx, cur)
            continue
        for i, x in zip(idx, cur):
            out[i] = x
    fn.emit('call void asm sideeffect "wgmma.commit_group.sync.aligned;", "~{memory}"()')
    pending = lo.__dict__.setdefault("_wgmma_pending", [])
    if half2:
        # an fp16 accumulator waits for itself, its f16x2 registers passed through the wait and split into halves
        # only after it (a half read earlier would read a register the tensor cores still write): the dots left
        # running across iterations or for a later dot's wait are held one register per element, f32
        if pending:
            raise AssertionError("a wgmma dot was left running for the wait of an fp16-accumulator dot")
        out = wait_half2(fn, words, out, a_live)
        lo.deferred_dots.discard(op.results[0])
        if scratch_used:
            lo.scratch_read_done()
        return Tensor(acc_lay, out, c.ty)
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
        out = wait_with_pending(fn, out, a_live, acc_ty, pending)
        # done here: the loop need not wait for it later (a wait_group 1 with nothing in flight across the
        # back edge made ptxas serialize every wgmma of the kernel, its C7515 note)
        lo.deferred_dots.discard(op.results[0])
    if scratch_used:
        lo.scratch_read_done()
    if c.ty != acc_ty:
        out = [fn.inst(f"fptrunc float {x} to {c.ty}") for x in out]
    return Tensor(acc_lay, out, c.ty)


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
