"""Tensor-core operand fragments loaded from shared memory with ``ldmatrix`` (16-bit elements).

An ``ldmatrix ... .x4`` reads four 8x8 matrices, each lane giving the address of one 8-element row, and
hands each lane two elements of each matrix in exactly the arrangement ``mma.sync`` expects of A (and, with
``.trans``, of B) registers. Rows start on 16-byte chunks, which the swizzled shared layout keeps
contiguous (see :mod:`tritium.gpu.lower.shared`).
"""
from __future__ import annotations

from typing import Any, Optional

from tritium.gpu.lower.context import Context
from tritium.gpu.lower.shared import SharedTile, smem_layout_for
from tritium.gpu.lower.tiles import write_tile
from tritium.gpu.lower.values import Tensor

from .mma import F16


def operand_kind(dst: Any) -> Optional[str]:
    if dst.rank != 2:
        return None
    if dst.lane == F16.a_lane and dst.reg[:3] == F16.a_reg:
        return "a"
    if dst.lane == F16.b_lane and dst.reg[:2] == F16.b_reg:
        return "b"
    return None


def _warp_part(lo: Context, dst: Any, dim: int) -> str:
    return lo.bits_value([(lo.warp, [b[dim] for b in dst.warp])])


def read_operand(lo: Context, tile: SharedTile, dst: Any, ty: str) -> Optional[Tensor]:
    if ty not in ("half", "bfloat") or tile.smem.eb != 2 or tile.smem.shape != dst.shape:
        return None
    kind = operand_kind(dst)
    if kind is None:
        return None
    fn = lo.fn
    lane = lo.lane
    q = fn.pinst(f"lshr i32 {lane}, 3", "ldq")
    i = fn.pinst(f"and i32 {lane}, 7", "ldi")
    qlo = fn.pinst(f"and i32 {q}, 1", "ldqlo")
    qhi = fn.pinst(f"lshr i32 {q}, 1", "ldqhi")
    regs: list[str] = [""] * dst.num_regs
    if kind == "a":
        wm = _warp_part(lo, dst, 0)
        trans = tile.smem.fast == 0
        inner = 8
        for r in range(0, dst.num_regs, inner):
            m0, k0 = dst.reg_coords(r)
            mq = lo.iadd(lo.iadd(str(m0), wm), lo.imul(qlo, 8))
            kq = lo.iadd(str(k0), lo.imul(qhi, 8))
            coords = [mq, lo.iadd(kq, i)] if trans else [lo.iadd(mq, i), kq]
            words = _ldmatrix(lo, tile, coords, 4, trans)
            regs[r:r + inner] = _halves(fn, words, ty)
    else:
        wn = _warp_part(lo, dst, 1)
        trans = tile.smem.fast == 1
        inner = 4
        for r in range(0, dst.num_regs, inner):
            k0, n0 = dst.reg_coords(r)
            nq = lo.iadd(str(n0), wn)
            kq = lo.iadd(str(k0), lo.imul(qlo, 8))
            coords = [lo.iadd(kq, i), nq] if trans else [kq, lo.iadd(nq, i)]
            words = _ldmatrix(lo, tile, coords, 2, trans)
            regs[r:r + inner] = _halves(fn, words, ty)
    return Tensor(dst, regs, ty)


def _ldmatrix(lo: Context, tile: SharedTile, coords: list[str], count: int, trans: bool) -> list[str]:
    fn = lo.fn
    off = tile.smem.offset(lo, coords)
    p = lo.smem_ptr(tile.base, lo.imul(off, 2))
    addr = fn.inst(f"ptrtoint {lo.target.shared_ptr} {p} to i32")
    outs = ", ".join(f"${k}" for k in range(count))
    t = ".trans" if trans else ""
    st = "{ " + ", ".join(["i32"] * count) + " }"
    cons = ",".join(["=r"] * count + ["r"])
    r = fn.inst(f'call {st} asm sideeffect "ldmatrix.sync.aligned.m8n8.x{count}{t}.shared.b16 {{{outs}}}, [${count}];", '
                f'"{cons}"(i32 {addr})')
    return [fn.inst(f"extractvalue {st} {r}, {k}") for k in range(count)]


def _halves(fn: Any, words: list[str], ty: str) -> list[str]:
    out = []
    for w in words:
        v = fn.inst(f"bitcast i32 {w} to <2 x {ty}>")
        out += [fn.inst(f"extractelement <2 x {ty}> {v}, i32 {k}") for k in range(2)]
    return out


def convert_to_operand(lo: Context, value: Any, dst: Any) -> Optional[Tensor]:
    """Registers -> tensor-core operand fragments: through a swizzled shared tile read with ldmatrix."""
    if value.ty not in ("half", "bfloat") or operand_kind(dst) is None or value.layout.shape != dst.shape:
        return None
    smem = smem_layout_for(value.layout, value.ty)
    base = lo.scratch(smem.nbytes)
    tile = SharedTile(base, smem, value.ty)
    write_tile(lo, value, tile)
    lo.target.barrier(lo.fn)
    out = read_operand(lo, tile, dst, value.ty)
    lo.scratch_read_done()
    return out
