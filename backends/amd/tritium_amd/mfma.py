"""Dot products on CDNA matrix cores (MFMA), wave64, 16x16 output tiles per instruction.

Each instruction kind is described, as for NVIDIA's mma, by which element of its A (16 x k), B (k x 16) and
accumulator (16 x 16) tiles each register and lane holds, as linear-layout bases (:mod:`tritium.gpu.layout`).
For every 16x16xk MFMA on wave64 (LLVM's AMDGPUUsage and AMD's CDNA3 ISA guide, "matrix fused multiply-add"):

- A: lane ``l`` holds row ``l % 16``, elements ``k = e * (l // 16) + i`` for its ``e`` consecutive values ``i``;
- B: lane ``l`` holds column ``l % 16``, the same ``k`` range;
- accumulator: lane ``l`` holds column ``l % 16``, rows ``4 * (l // 16) + i``, ``i`` < 4.

Warps tile M and N, instruction tiles repeat in registers; the lowering issues one ``llvm.amdgcn.mfma.*`` per
(M, N, K) repetition on registers picked by their coordinates. The instruction itself is emitted by the target's
:meth:`mfma` so that a test target can stand in for the matrix core (tests/amd runs these layouts on the GPU host
emulator with a shuffle-based MFMA).

Not used (FMA fallback instead): fp8 on gfx942, whose MFMA reads the FNUZ encodings (bias 8/16, no negative
zero) where Triton's fp8e4nv/fp8e5 are OCP e4m3fn/e5m2; accumulators other than f32/i32.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from tritium.gpu import layout as L
from tritium.gpu.assign import DotPlan, LayoutPolicy, element_type, tensor_shape
from tritium.gpu.lower.values import Tensor

Bases = tuple[tuple[int, int], ...]
ROWS = ((1, 0), (2, 0), (4, 0), (8, 0))
COLS = ((0, 1), (0, 2), (0, 4), (0, 8))
C_REG: Bases = ((1, 0), (2, 0))
C_LANE: Bases = COLS + ((4, 0), (8, 0))


@dataclass(frozen=True)
class MfmaKind:
    name: str
    k: int                   #: K of one instruction
    per_lane: int            #: A (and B) elements one lane supplies
    intrinsic: str           #: llvm.amdgcn.mfma.* name
    operand: str             #: LLVM type of one A/B operand ("<4 x half>", "float", "i64"...)
    elem: str                #: LLVM type of one element in registers
    acc: str = "float"

    @property
    def a_reg(self) -> Bases:
        return tuple((0, 1 << i) for i in range(self.per_lane.bit_length() - 1))

    @property
    def a_lane(self) -> Bases:
        return ROWS + ((0, self.per_lane), (0, 2 * self.per_lane))

    @property
    def b_reg(self) -> Bases:
        return tuple((1 << i, 0) for i in range(self.per_lane.bit_length() - 1))

    @property
    def b_lane(self) -> Bases:
        return COLS + ((self.per_lane, 0), (2 * self.per_lane, 0))


F16 = MfmaKind("f16", 16, 4, "llvm.amdgcn.mfma.f32.16x16x16f16", "<4 x half>", "half")
BF16 = MfmaKind("bf16", 16, 4, "llvm.amdgcn.mfma.f32.16x16x16bf16.1k", "<4 x i16>", "bfloat")
F32 = MfmaKind("f32", 4, 1, "llvm.amdgcn.mfma.f32.16x16x4f32", "float", "float")
XF32 = MfmaKind("xf32", 8, 2, "llvm.amdgcn.mfma.f32.16x16x8.xf32", "<2 x float>", "float")
I8_K16 = MfmaKind("i8k16", 16, 4, "llvm.amdgcn.mfma.i32.16x16x16i8", "i32", "i8", acc="i32")
I8_K32 = MfmaKind("i8k32", 32, 8, "llvm.amdgcn.mfma.i32.16x16x32.i8", "i64", "i8", acc="i32")
KINDS = {k.name: k for k in (F16, BF16, F32, XF32, I8_K16, I8_K32)}


def choose_kind(a_elem: str, b_elem: str, precision: str, chip: Any) -> Optional[MfmaKind]:
    if a_elem != b_elem or not chip.mfma:
        return None
    if a_elem == "f16" and "f16" in chip.mfma:
        return F16
    if a_elem == "bf16" and "bf16" in chip.mfma:
        return BF16
    if a_elem == "f32":
        if precision == "tf32" and "xf32" in chip.mfma:
            return XF32
        # ieee, the multi-pass emulations of it (tf32x3, bf16x3, bf16x6) and tf32 where the chip has no xf32
        # (gfx90a, gfx950): the fp32 MFMA is at least that precise
        return F32 if "f32" in chip.mfma else None
    if a_elem == "i8" and "i8" in chip.mfma:
        # gfx940 replaced the 16x16x16 int8 MFMA with a 16x16x32 one
        return I8_K16 if chip.name == "gfx90a" else I8_K32
    return None


def warps_for(M: int, N: int, num_warps: int) -> tuple[int, int]:
    wm = wn = 1
    while wm * wn < num_warps:
        if M // (16 * wm) >= N // (16 * wn) and M // (16 * wm) > 1:
            wm *= 2
        elif N // (16 * wn) > 1:
            wn *= 2
        else:
            wm *= 2
    return wm, wn


def _reps(step: int, size: int, dim: int) -> list[tuple[int, int]]:
    out, v = [], step
    while v < size:
        out.append((v, 0) if dim == 0 else (0, v))
        v <<= 1
    return out


def mfma_layouts(kind: MfmaKind, M: int, N: int, K: int, num_warps: int) -> tuple[L.Layout, L.Layout, L.Layout]:
    wm, wn = warps_for(M, N, num_warps)
    wbits_m = [(16 << i, 0) for i in range(wm.bit_length() - 1)]
    wbits_n = [(0, 16 << i) for i in range(wn.bit_length() - 1)]
    # warps past the tile's extent hold copies
    wbits_m = [b if b[0] < M else (0, 0) for b in wbits_m]
    wbits_n = [b if b[1] < N else (0, 0) for b in wbits_n]
    rep_m, rep_n = _reps(16 * wm, M, 0), _reps(16 * wn, N, 1)
    zero = (0, 0)
    acc = L.Layout((M, N), list(C_REG) + rep_n + rep_m, C_LANE, wbits_m + wbits_n)
    a = L.Layout((M, K), list(kind.a_reg) + _reps(kind.k, K, 1) + rep_m, kind.a_lane,
                 wbits_m + [zero] * len(wbits_n))
    b = L.Layout((K, N), list(kind.b_reg) + _reps(kind.k, K, 0) + rep_n, kind.b_lane,
                 [zero] * len(wbits_m) + wbits_n)
    return acc, a, b


class AmdPolicy(LayoutPolicy):
    def __init__(self, num_warps: int, warp_size: int, chip: Any, options: Any) -> None:
        super().__init__(num_warps, warp_size)
        self.chip = chip
        self.options = options

    def dot_plan(self, op: Any, a_type: Any, b_type: Any, c_type: Any) -> DotPlan:
        from tritium._mlir import ir
        a_shape, c_shape = tensor_shape(a_type), tensor_shape(c_type)
        precision = ir.StringAttr(op.attributes["input_precision"]).value if "input_precision" in op.attributes \
            else getattr(self.options, "default_dot_input_precision", "ieee")
        kind = choose_kind(element_type(a_type), element_type(b_type), precision, self.chip) \
            if self.warp_size == 64 else None
        if kind is not None and len(c_shape) == 2 and element_type(c_type) == ("i32" if kind.acc == "i32" else "f32"):
            M, N = c_shape
            K = a_shape[-1]
            if M >= 16 and N >= 16 and K >= kind.k:
                acc, a, b = mfma_layouts(kind, M, N, K, self.num_warps)
                return DotPlan(f"mfma.{kind.name}", acc, a, b)
        return super().dot_plan(op, a_type, b_type, c_type)


# -- lowering ------------------------------------------------------------------------------------------------
def _index(lay: L.Layout) -> dict[tuple, int]:
    out: dict[tuple, int] = {}
    for r in range(lay.num_regs):
        out.setdefault(lay.reg_coords(r), r)
    return out


def emit_mfma(fn: Any, module: Any, kind: MfmaKind, a: list[str], b: list[str], c: list[str]) -> list[str]:
    """One MFMA: ``a``/``b`` are this lane's ``per_lane`` elements, ``c`` its 4 accumulator values."""
    def operand(vals: list[str]) -> str:
        if kind.operand == kind.elem:
            return vals[0]
        et = "i16" if kind.elem == "bfloat" else kind.elem
        vt = f"<{len(vals)} x {et}>"
        v = "poison"
        for i, x in enumerate(vals):
            if kind.elem == "bfloat":
                x = fn.inst(f"bitcast bfloat {x} to i16")
            v = fn.inst(f"insertelement {vt} {v}, {et} {x}, i32 {i}")
        return v if vt == kind.operand else fn.inst(f"bitcast {vt} {v} to {kind.operand}")

    acc_t = f"<4 x {kind.acc}>"
    cv = "poison"
    for i, x in enumerate(c):
        cv = fn.inst(f"insertelement {acc_t} {cv}, {kind.acc} {x}, i32 {i}")
    module.intrinsic(kind.intrinsic, acc_t, [kind.operand, kind.operand, acc_t, "i32 immarg", "i32 immarg",
                                             "i32 immarg"], "convergent nounwind readnone")
    r = fn.inst(f"call {acc_t} @{kind.intrinsic}({kind.operand} {operand(a)}, {kind.operand} {operand(b)}, "
                f"{acc_t} {cv}, i32 0, i32 0, i32 0)")
    return [fn.inst(f"extractelement {acc_t} {r}, i32 {i}") for i in range(4)]


def lower_mfma_dot(lo: Any, op: Any, a_lay: L.Layout, b_lay: L.Layout, acc_lay: L.Layout) -> Tensor:
    from tritium._mlir import ir
    kind = KINDS[ir.StringAttr(op.attributes["ttg.dot"]).value.split(".", 1)[1]]
    fn = lo.fn
    a = lo.tensor_in(op.operands[0], a_lay)
    b = lo.tensor_in(op.operands[1], b_lay)
    c = lo.tensor_in(op.operands[2], acc_lay)
    M, N = acc_lay.shape
    K = a_lay.shape[1]
    ai, bi, ci = _index(a_lay), _index(b_lay), _index(acc_lay)
    wm, wn = warps_for(M, N, lo.num_warps)
    a_offs = [a_lay.combine(kind.a_reg, j) for j in range(kind.per_lane)]
    b_offs = [b_lay.combine(kind.b_reg, j) for j in range(kind.per_lane)]
    c_offs = [acc_lay.combine(C_REG, j) for j in range(4)]
    out = list(c.regs)
    for m0 in range(0, M, 16 * wm):
        for n0 in range(0, N, 16 * wn):
            cidx = [ci[(m0 + o[0], n0 + o[1])] for o in c_offs]
            cur = [out[i] for i in cidx]
            for k0 in range(0, K, kind.k):
                av = [a.regs[ai[(m0 + o[0], k0 + o[1])]] for o in a_offs]
                bv = [b.regs[bi[(k0 + o[0], n0 + o[1])]] for o in b_offs]
                cur = lo.target.mfma(fn, lo.module, kind, av, bv, cur)
            for i, x in zip(cidx, cur):
                out[i] = x
    for r in range(acc_lay.num_regs):
        first = ci[acc_lay.reg_coords(r)]
        if first != r:
            out[r] = out[first]
    return Tensor(acc_lay, out, c.ty)
