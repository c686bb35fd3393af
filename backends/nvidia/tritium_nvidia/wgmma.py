"""Hopper's warpgroup matrix multiply (``wgmma.mma_async``, sm_90a) for fp16/bf16 dots.

Four consecutive warps (a warpgroup) compute a 64 x N tile of the accumulator per instruction, reading A
and B from shared memory through 64-bit descriptors. Warpgroups split M. The operands come from the
software pipeline's shared stages when the loop was pipelined, else the registers are written to a
scratch tile first. Shared tiles use :class:`~tritium.gpu.lower.shared.SmemLayout`, whose 128-byte panels
and XOR swizzle are the canonical layouts the descriptors name:

- K-major (the K elements of a row contiguous): LBO unused, SBO = 8 rows of one panel;
- MN-major (16-bit only, "transposed"): LBO = the stride between 128-byte panels, SBO = 8 rows.

The accumulator layout is the mma.sync one per warp (rows 16w..16w+15 of the warpgroup's 64), with the
N/8 blocks of the instruction in consecutive registers, which is the order of wgmma's result registers.
"""
from __future__ import annotations

from typing import Any, Optional

from tritium.gpu import layout as L
from tritium.gpu.lower.shared import SharedTile, SmemLayout, smem_layout_for
from tritium.gpu.lower.values import Tensor

from .mma import C_LANE

_SWIZZLE_MODE = {128: 1, 64: 2, 32: 3}


def wgmma_shape(M: int, N: int, num_warps: int) -> Optional[tuple[int, int]]:
    """(warpgroups, N per instruction), or None when this tile does not fit wgmma."""
    if num_warps % 4:
        return None
    wg = num_warps // 4
    if M % (64 * wg) or N % 16 or N < 16:
        return None
    n_inst = min(N, 256)
    while N % n_inst:
        n_inst //= 2
    return wg, n_inst


def acc_layout(M: int, N: int, num_warps: int) -> L.Layout:
    wg, n_inst = wgmma_shape(M, N, num_warps)
    reg = [(0, 1), (8, 0)] + [(0, 8 << i) for i in range((n_inst // 8).bit_length() - 1)]
    v = n_inst
    while v < N:
        reg.append((0, v))
        v <<= 1
    v = 64 * wg
    while v < M:
        reg.append((v, 0))
        v <<= 1
    warp = [(16, 0), (32, 0)] + [(64 << i, 0) for i in range(wg.bit_length() - 1)]
    return L.Layout((M, N), reg, C_LANE, warp)


def _compatible(smem: SmemLayout) -> bool:
    return smem.row_bytes in _SWIZZLE_MODE and smem.eb == 2 and smem.rows % 8 == 0


def _descriptor(lo: Any, addr: str, lbo: int, sbo: int, mode: int) -> str:
    """The 64-bit matrix descriptor of a shared tile starting at ``addr`` (an i32 shared address)."""
    fn = lo.fn
    a = fn.inst(f"lshr i32 {addr}, 4")
    a = fn.inst(f"and i32 {a}, 16383")
    a64 = fn.inst(f"zext i32 {a} to i64")
    const = ((lbo >> 4) & 0x3FFF) << 16 | ((sbo >> 4) & 0x3FFF) << 32 | mode << 62
    return fn.inst(f"or i64 {a64}, {const}")


def _operand_tile(lo: Any, v: Any, k_dim: int) -> SharedTile:
    """Operand ``v`` as a shared tile the descriptors can describe (written to scratch if needed)."""
    got = lo.values.get(v)
    if isinstance(got, SharedTile) and _compatible(got.smem):
        return got
    t = lo.tensor(v)
    smem = smem_layout_for(t.layout, lo.storage_type(t.ty))
    if not _compatible(smem):
        smem = SmemLayout(t.layout.shape, k_dim, smem.eb)
    nbytes = (smem.nbytes + 1023) // 1024 * 1024
    base = lo.scratch(lo.wgmma_scratch_used + nbytes, 1024)     # descriptors address whole swizzle atoms
    tile = SharedTile(lo.smem_ptr(base, str(lo.wgmma_scratch_used)), smem, lo.storage_type(t.ty))
    lo.wgmma_scratch_used += nbytes
    lo.write_tile(t, tile)
    return tile


def lower_wgmma_dot(lo: Any, op: Any, a_lay: L.Layout, b_lay: L.Layout, acc_lay: L.Layout) -> Tensor:
    fn = lo.fn
    M, N = acc_lay.shape
    K = lo.values[op.operands[0]].shape[1] if hasattr(lo.values[op.operands[0]], "shape") else a_lay.shape[1]
    wg, n_inst = wgmma_shape(M, N, lo.num_warps)
    lo.wgmma_scratch_used = 0
    a = _operand_tile(lo, op.operands[0], 1)
    b = _operand_tile(lo, op.operands[1], 0)
    if lo.wgmma_scratch_used:
        # registers written to shared memory by ordinary stores, read next by the tensor cores' async proxy
        fn.emit('call void asm sideeffect "fence.proxy.async.shared::cta;", "~{memory}"()')
        lo.target.barrier(fn)
    c = lo.tensor_in(op.operands[2], acc_lay)
    ty = "bf16" if a.ty == "bfloat" else "f16"
    cregs = list(c.regs)
    if c.ty != "float":
        cregs = [fn.inst(f"fpext {c.ty} {x} to float") for x in cregs]
    # this warp's warpgroup: its rows of A
    wgi = fn.pinst(f"lshr i32 {lo.warp}, 2", "wg")
    row0 = lo.imul(wgi, 64)
    sp = lo.target.shared_ptr
    a_addr0 = fn.inst(f"ptrtoint {sp} {a.base} to i32")
    b_addr0 = fn.inst(f"ptrtoint {sp} {b.base} to i32")
    ci = {}
    for r in range(acc_lay.num_regs):
        ci.setdefault(acc_lay.reg_coords(r), r)
    out = list(cregs)
    fn.emit('call void asm sideeffect "wgmma.fence.sync.aligned;", "~{memory}"()')
    nregs = n_inst // 2
    for m0 in range(0, M, 64 * wg):
        for n0 in range(0, N, n_inst):
            idx = [ci[(m0 + o[0], n0 + o[1])] for o in _inst_offsets(n_inst)]
            cur = [out[i] for i in idx]
            for k0 in range(0, K, 16):
                da = _desc_for(lo, a, a_addr0, lo.iadd(str(m0), row0), k0, k_dim=1)
                db = _desc_for(lo, b, b_addr0, str(n0), k0, k_dim=0)
                trans_a = 0 if a.smem.fast == 1 else 1
                trans_b = 0 if b.smem.fast == 0 else 1
                outs = ", ".join(f"${i}" for i in range(nregs))
                # scale-d is a predicate (1: accumulate into d)
                asm = (f"{{ .reg .pred p; setp.ne.b32 p, ${nregs + 2}, 0; "
                       f"wgmma.mma_async.sync.aligned.m64n{n_inst}k16.f32.{ty}.{ty} {{{outs}}}, ${nregs}, ${nregs + 1}, "
                       f"p, 1, 1, {trans_a}, {trans_b}; }}")
                cons = ",".join(["=f"] * nregs + ["l", "l", "r"] + [str(i) for i in range(nregs)])
                st = "{ " + ", ".join(["float"] * nregs) + " }"
                args = [f"i64 {da}", f"i64 {db}", "i32 1"] + [f"float {x}" for x in cur]
                res = fn.inst(f'call {st} asm sideeffect "{asm}", "{cons}"({", ".join(args)})')
                cur = [fn.inst(f"extractvalue {st} {res}, {i}") for i in range(nregs)]
            for i, x in zip(idx, cur):
                out[i] = x
    fn.emit('call void asm sideeffect "wgmma.commit_group.sync.aligned;", "~{memory}"()')
    if op.results[0] not in getattr(lo, "deferred_dots", ()) or lo.wgmma_scratch_used:
        # wait for the results: the registers are read next, and the operands' shared memory may be reused
        # (an operand in scratch memory is dead once this returns, so a dot reading one is never left in flight)
        out = wait_group(fn, 0, out)
    if lo.wgmma_scratch_used:
        lo.scratch_read_done()
    if c.ty != "float":
        out = [fn.inst(f"fptrunc float {x} to {c.ty}") for x in out]
    return Tensor(acc_lay, out, c.ty)


def _inst_offsets(n_inst: int) -> list[tuple[int, int]]:
    """Coordinates (relative to the instruction tile, in this thread's register-part terms) of wgmma's
    result registers d0, d1, ...: per 8 columns, (0,0) (0,1) (8,0) (8,1)."""
    out = []
    for blk in range(n_inst // 8):
        out += [(0, 8 * blk), (0, 8 * blk + 1), (8, 8 * blk), (8, 8 * blk + 1)]
    return out


def wait_group(fn: Any, pending: int, regs: list[str]) -> list[str]:
    """``wgmma.wait_group pending``, passing the finished accumulators through so that nothing reads them
    earlier."""
    if not regs:
        fn.emit(f'call void asm sideeffect "wgmma.wait_group.sync.aligned {pending};", "~{{memory}}"()')
        return []
    out = []
    for i in range(0, len(regs), 32):
        chunk = regs[i:i + 32]
        n = len(chunk)
        st = "{ " + ", ".join(["float"] * n) + " }"
        cons = ",".join(["=f"] * n + [str(k) for k in range(n)])
        body = f"wgmma.wait_group.sync.aligned {pending};" if i == 0 else ""
        r = fn.inst(f'call {st} asm sideeffect "{body}", "{cons},~{{memory}}"({", ".join(f"float {x}" for x in chunk)})')
        out += [fn.inst(f"extractvalue {st} {r}, {k}") for k in range(n)]
    return out


def _desc_for(lo: Any, tile: SharedTile, addr0: str, offset: str, k0: int, k_dim: int) -> str:
    """Descriptor of the instruction's slice of ``tile``: rows (or columns) from ``offset`` along the non-K
    dimension, K from ``k0``."""
    smem = tile.smem
    mode = _SWIZZLE_MODE[smem.row_bytes]
    eb, P, rows = smem.eb, smem.panel, smem.rows
    if smem.fast == k_dim:
        # K-major: K runs along rows (panels of P elements); ``offset`` counts rows
        byte = lo.iadd(str((k0 // P) * rows * P * eb + (k0 % P) * eb), lo.imul(offset, smem.row_bytes))
        lbo, sbo = 16, 8 * smem.row_bytes
    else:
        # MN-major: the MN dimension runs along rows; ``offset`` counts columns (multiples of a panel), K rows
        if offset.isdigit():
            byte = str((int(offset) // P) * rows * P * eb + k0 * smem.row_bytes)
        else:
            byte = lo.iadd(str(k0 * smem.row_bytes), lo.imul(lo.fn.inst(f"lshr i32 {offset}, {P.bit_length() - 1}"),
                                                             rows * P * eb))
        lbo, sbo = rows * P * eb, 8 * smem.row_bytes
    addr = lo.iadd(addr0, byte)
    return _descriptor(lo, addr, lbo, sbo, mode)
