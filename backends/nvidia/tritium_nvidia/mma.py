"""Tensor-core dot products with ``mma.sync`` (sm_80 and newer; Hopper runs them too).

Each instruction kind is described by its fragments: which element of its (M x K) A tile, (K x N) B tile and
(M x N) accumulator tile each register (and register byte) of each lane holds, written as linear-layout
bases (see :mod:`tritium.gpu.layout`). From those, :class:`NvidiaPolicy` builds the layouts of a whole
dot: warps tile M and N, instruction tiles repeat in registers. The lowering then issues one inline-PTX
``mma`` per (M, N, K) repetition on registers picked by their coordinates.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from tritium.gpu import layout as L
from tritium.gpu.fragments import tiled_layouts, warp_grid
from tritium.gpu.assign import DotPlan, LayoutPolicy, element_type, tensor_shape
from tritium.gpu.lower.context import Context
from tritium.gpu.lower.values import Tensor

from .fragment import C_LANE, C_REG, Bases, lo_kind, pack_half2, unpack_half2
from .wgmma import acc_layout, b_always_k_major, wgmma_shape


@dataclass(frozen=True)
class MmaKind:
    """One mma.sync instruction: its tile shape, operand types and fragment layouts."""
    name: str
    m: int
    n: int
    k: int
    ptx: str             # e.g. "m16n8k16.row.col.f32.f16.f16.f32"
    a_reg: Bases
    a_lane: Bases
    b_reg: Bases
    b_lane: Bases
    elem_bits: int       # bits of an A/B element (packed into 32-bit registers)
    acc: str = "float"   # LLVM type of the accumulator ("half": two per 32-bit register, f16x2)

    @property
    def per_word(self) -> int:
        return 32 // self.elem_bits


# C_REG, C_LANE (fragment.py): the accumulator fragment, the same for every kind
ROWS = ((1, 0), (2, 0), (4, 0))   # lane bits 2..4 (the group id) pick the row of A and C...
COLS = ((0, 1), (0, 2), (0, 4))   # ...and the column of B

F16 = MmaKind("f16", 16, 8, 16, "m16n8k16.row.col.f32.f16.f16.f32",
              a_reg=((0, 1), (8, 0), (0, 8)), a_lane=((0, 2), (0, 4)) + ROWS,
              b_reg=((1, 0), (8, 0)), b_lane=((2, 0), (4, 0)) + COLS, elem_bits=16)
# fp16 products accumulated in fp16, for a dot whose result is fp16 (``out_dtype=float16`` or an fp16 ``acc``), as
# Triton does: D and C are two f16x2 registers, the same elements as the f32 accumulator's four registers
F16ACC = MmaKind("f16acc", 16, 8, 16, "m16n8k16.row.col.f16.f16.f16.f16", F16.a_reg, F16.a_lane, F16.b_reg,
                 F16.b_lane, 16, acc="half")
BF16 = MmaKind("bf16", 16, 8, 16, "m16n8k16.row.col.f32.bf16.bf16.f32", F16.a_reg, F16.a_lane, F16.b_reg,
               F16.b_lane, 16)
TF32 = MmaKind("tf32", 16, 8, 8, "m16n8k8.row.col.f32.tf32.tf32.f32",
               a_reg=((8, 0), (0, 4)), a_lane=((0, 1), (0, 2)) + ROWS,
               b_reg=((4, 0), ), b_lane=((1, 0), (2, 0)) + COLS, elem_bits=32)
_K32_A = (((0, 1), (0, 2), (8, 0), (0, 16)), ((0, 4), (0, 8)) + ROWS)
_K32_B = (((1, 0), (2, 0), (16, 0)), ((4, 0), (8, 0)) + COLS)
I8 = MmaKind("i8", 16, 8, 32, "m16n8k32.row.col.satfinite.s32.s8.s8.s32", *_K32_A, *_K32_B, elem_bits=8, acc="i32")
U8 = MmaKind("u8", 16, 8, 32, "m16n8k32.row.col.satfinite.s32.u8.u8.s32", *_K32_A, *_K32_B, elem_bits=8, acc="i32")
E4M3 = MmaKind("e4m3", 16, 8, 32, "m16n8k32.row.col.f32.e4m3.e4m3.f32", *_K32_A, *_K32_B, elem_bits=8)
E5M2 = MmaKind("e5m2", 16, 8, 32, "m16n8k32.row.col.f32.e5m2.e5m2.f32", *_K32_A, *_K32_B, elem_bits=8)
KINDS = {k.name: k for k in (F16, F16ACC, BF16, TF32, I8, U8, E4M3, E5M2)}


def choose_kind(a_elem: str, b_elem: str, precision: str, capability: int, c_elem: str = "f32") -> Optional[MmaKind]:
    if a_elem != b_elem:
        return None
    if a_elem == "f16":
        return F16ACC if c_elem == "f16" else F16
    if a_elem == "bf16":
        return BF16
    if a_elem == "f32" and precision == "tf32":
        return TF32
    if a_elem == "i8":
        return I8
    if a_elem == "ui8":
        return U8
    if capability >= 89 and a_elem == "f8E4M3FN":
        return E4M3
    if capability >= 89 and a_elem == "f8E5M2":
        return E5M2
    return None


def warps_for(M: int, N: int, kind: MmaKind, num_warps: int) -> tuple[int, int]:
    """Warps along M and N: split the larger remaining dimension (counted in instruction tiles)."""
    return warp_grid(M, N, kind.m, kind.n, num_warps)


def mma_layouts(kind: MmaKind, M: int, N: int, K: int, num_warps: int) -> tuple[L.Layout, L.Layout, L.Layout]:
    return tiled_layouts(M, N, K, (kind.m, kind.n, kind.k), kind.a_reg, kind.a_lane, kind.b_reg, kind.b_lane,
                         C_REG, C_LANE, num_warps)


class NvidiaPolicy(LayoutPolicy):
    def __init__(self, num_warps: int, warp_size: int, capability: int, options: Any) -> None:
        super().__init__(num_warps, warp_size)
        self.capability = capability
        self.options = options
        # loops with dots are software-pipelined (cp.async stages) from sm_80 on when num_stages allows
        self.pipelines = (getattr(options, "num_stages", 1) or 1) >= 2

    def dot_operand_contiguous(self, kind: str, operand: int) -> Optional[int]:
        # wgmma transposes only 16-bit operands in shared memory: tf32 and 8-bit ones must be K-major
        if kind.startswith("wgmma.") and b_always_k_major(kind.split(".", 1)[1]):
            return 1 - operand
        return None

    def dot_plan(self, op: Any, a_type: Any, b_type: Any, c_type: Any) -> DotPlan:
        from tritium._mlir import ir
        a_shape, c_shape = tensor_shape(a_type), tensor_shape(c_type)
        precision = ir.StringAttr(op.attributes["input_precision"]).value if "input_precision" in op.attributes \
            else "tf32"
        c_elem = element_type(c_type)
        kind = choose_kind(element_type(a_type), element_type(b_type), precision, self.capability, c_elem)
        if 90 <= self.capability < 100 and kind is not None and len(c_shape) == 2 \
                and c_elem in (("i32", ) if kind.acc == "i32" else ("f32", "f16")) \
                and a_shape[-1] % (256 // kind.elem_bits) == 0:
            k_major = b_always_k_major(kind.name)
            if wgmma_shape(c_shape[0], c_shape[1], self.num_warps, k_major) is not None:
                return DotPlan(f"wgmma.{kind.name}", acc_layout(c_shape[0], c_shape[1], self.num_warps, k_major),
                               self.default(tuple(a_shape)), self.default(tuple(tensor_shape(b_type))))
        if kind is not None and len(c_shape) == 2 and c_elem in ("f32", "i32", "f16"):
            M, N = c_shape
            K = a_shape[-1]
            if M >= kind.m and N >= kind.n and K >= kind.k:
                acc, a, b = mma_layouts(kind, M, N, K, self.num_warps)
                return DotPlan(f"mma.{kind.name}", acc, a, b)
        return super().dot_plan(op, a_type, b_type, c_type)


# -- lowering ------------------------------------------------------------------------------------------
def _index(lay: L.Layout) -> dict[tuple, int]:
    out: dict[tuple, int] = {}
    for r in range(lay.num_regs):
        out.setdefault(lay.reg_coords(r), r)
    return out


def _word(fn: Any, regs: list[str], ty: str, kind: MmaKind) -> str:
    """Pack one 32-bit operand register from ``per_word`` elements."""
    if kind.per_word == 1:
        if ty == "float":
            return fn.inst(f'call i32 asm "cvt.rna.tf32.f32 $0, $1;", "=r,f"(float {regs[0]})')
        return fn.inst(f"bitcast {ty} {regs[0]} to i32")
    vt = f"<{kind.per_word} x {ty}>"
    v = "poison"
    for i, x in enumerate(regs):
        v = fn.inst(f"insertelement {vt} {v}, {ty} {x}, i32 {i}")
    return fn.inst(f"bitcast {vt} {v} to i32")


def lower_mma_dot(lo: Context, op: Any, a_lay: L.Layout, b_lay: L.Layout, acc_lay: L.Layout) -> Tensor:
    kind = KINDS[lo_kind(op)]
    fn = lo.fn
    a = lo.tensor_in(op.operands[0], a_lay)
    b = lo.tensor_in(op.operands[1], b_lay)
    c = lo.tensor_in(op.operands[2], acc_lay)
    acc_ty = kind.acc
    cregs = list(c.regs)
    if c.ty != acc_ty:     # an fp16 result of a dot accumulating in f32 (fp8 operands) is carried in f32 through it
        cregs = [fn.inst(f"fpext {c.ty} {x} to float") for x in cregs]
    M, N = acc_lay.shape
    K = a_lay.shape[1]
    ai, bi, ci = _index(a_lay), _index(b_lay), _index(acc_lay)
    wm, wn = warps_for(M, N, kind, lo.num_warps)
    # element offsets of each operand register (in register order) inside one instruction tile
    a_offs = [a_lay.combine(kind.a_reg, j) for j in range(1 << len(kind.a_reg))]
    b_offs = [b_lay.combine(kind.b_reg, j) for j in range(1 << len(kind.b_reg))]
    c_offs = [(0, 0), (0, 1), (8, 0), (8, 1)]
    pw = kind.per_word
    words: dict[tuple, list[str]] = {}

    def operand(tag: str, index: dict, regs: list[str], ty: str, origin: tuple[int, int], offs: list) -> list[str]:
        key = (tag, origin)
        got = words.get(key)
        if got is None:
            vals = [regs[index[(origin[0] + o[0], origin[1] + o[1])]] for o in offs]
            got = words[key] = [_word(fn, vals[i:i + pw], ty, kind) for i in range(0, len(vals), pw)]
        return got

    # the instruction's C and D registers: four f32 (or s32), or two f16x2 holding the same four elements in pairs
    packed = acc_ty == "half"
    nd = 2 if packed else 4
    reg_ty = "i32" if packed else acc_ty
    cc = "r" if reg_ty == "i32" else "f"
    out = list(cregs)
    for m0 in range(0, M, kind.m * wm):
        for n0 in range(0, N, kind.n * wn):
            cidx = [ci[(m0 + o[0], n0 + o[1])] for o in c_offs]
            cur = [out[i] for i in cidx]
            if packed:      # (kept packed along K: unpacked once, after the last instruction)
                cur = [pack_half2(fn, cur[0], cur[1]), pack_half2(fn, cur[2], cur[3])]
            for k0 in range(0, K, kind.k):
                aw = operand("a", ai, a.regs, a.ty, (m0, k0), a_offs)
                bw = operand("b", bi, b.regs, b.ty, (k0, n0), b_offs)
                na, nb = len(aw), len(bw)
                ops = ", ".join(f"${i}" for i in range(nd))
                aops = ", ".join(f"${nd + i}" for i in range(na))
                bops = ", ".join(f"${nd + na + i}" for i in range(nb))
                cops = ", ".join(f"${nd + na + nb + i}" for i in range(nd))
                asm = f"mma.sync.aligned.{kind.ptx} {{{ops}}}, {{{aops}}}, {{{bops}}}, {{{cops}}};"
                cons = ",".join([f"={cc}"] * nd + ["r"] * (na + nb) + [str(i) for i in range(nd)])
                args = [f"i32 {w}" for w in aw + bw] + [f"{reg_ty} {x}" for x in cur]
                st = "{ " + ", ".join([reg_ty] * nd) + " }"
                r = fn.inst(f'call {st} asm "{asm}", "{cons}"({", ".join(args)})')
                cur = [fn.inst(f"extractvalue {st} {r}, {i}") for i in range(nd)]
            if packed:
                cur = unpack_half2(fn, cur[0]) + unpack_half2(fn, cur[1])
            for i, x in zip(cidx, cur):
                out[i] = x
    # registers that are copies of others (none for these layouts, but keep the invariant)
    for r in range(acc_lay.num_regs):
        first = ci[acc_lay.reg_coords(r)]
        if first != r:
            out[r] = out[first]
    if c.ty != acc_ty:
        out = [fn.inst(f"fptrunc float {x} to {c.ty}") for x in out]
    return Tensor(acc_lay, out, c.ty)
