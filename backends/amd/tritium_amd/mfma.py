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

fp8 operands (A and B may differ), as Triton's AMD backend chooses: the ``16x16x32`` fp8 MFMAs where the chip's
read the operands' encodings (``fp8``: e4m3, ``bf8``: e5m2; gfx942 reads the FNUZ ones, Triton's fp8e4b8/fp8e5b16;
gfx950 the OCP ones, fp8e4nv/fp8e5); OCP operands on gfx90a/gfx942 are widened to f16 in registers, which holds
every fp8 value exactly, and go through the f16 MFMA, so products are still exact and accumulated in f32. FNUZ
operands on gfx950 (and gfx90a) take the FMA fallback, as in Triton. Not used: accumulators other than f32/i32.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from tritium.gpu import layout as L
from tritium.gpu.fragments import tiled_layouts, warp_grid
from tritium.gpu.assign import DotPlan, LayoutPolicy, element_type, tensor_shape
from tritium.gpu.lower.context import Context
from tritium.gpu.lower.values import Tensor
from tritium.llvmir.fp8 import FP8

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
    a_fmt: str = ""          #: fp8 format of A's bytes (Triton's name) for the fp8 MFMAs
    b_fmt: str = ""
    upcast: bool = False     #: fp8 operands widened to ``elem`` in registers before the instruction

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
F8_AS_F16 = MfmaKind("f8f16", 16, 4, F16.intrinsic, F16.operand, "half", upcast=True)
#: chip feature -> (the e4m3 format its ``fp8`` operands read, the e5m2 format its ``bf8`` operands read)
FP8_MFMA = {"fp8fnuz": ("fp8e4b8", "fp8e5b16"), "fp8ocp": ("fp8e4nv", "fp8e5")}
OCP = frozenset(FP8_MFMA["fp8ocp"])


def _fp8_kinds() -> list[MfmaKind]:
    out = []
    for e4, e5 in FP8_MFMA.values():
        for fa in (e4, e5):
            for fb in (e4, e5):
                names = ".".join("fp8" if f == e4 else "bf8" for f in (fa, fb))
                out.append(MfmaKind(f"{fa}_{fb}", 32, 8, f"llvm.amdgcn.mfma.f32.16x16x32.{names}", "i64", "i8",
                                    a_fmt=fa, b_fmt=fb))
    return out


KINDS = {k.name: k for k in (F16, BF16, F32, XF32, I8_K16, I8_K32, F8_AS_F16, *_fp8_kinds())}


def _choose_fp8(fa: str, fb: str, chip: Any) -> Optional[MfmaKind]:
    for feature, formats in FP8_MFMA.items():
        if feature in chip.mfma and {fa, fb} <= set(formats):
            return KINDS[f"{fa}_{fb}"]
    # chips before gfx950 have no MFMA reading OCP fp8: Triton widens such operands to f16 (exactly)
    if {fa, fb} <= OCP and "f16" in chip.mfma and "fp8ocp" not in chip.mfma:
        return F8_AS_F16
    return None


def choose_kind(a_elem: str, b_elem: str, precision: str, chip: Any) -> Optional[MfmaKind]:
    if not chip.mfma:
        return None
    if a_elem in FP8 and b_elem in FP8:
        return _choose_fp8(FP8[a_elem], FP8[b_elem], chip)
    if a_elem != b_elem:
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
    return warp_grid(M, N, 16, 16, num_warps)


def mfma_layouts(kind: MfmaKind, M: int, N: int, K: int, num_warps: int) -> tuple[L.Layout, L.Layout, L.Layout]:
    return tiled_layouts(M, N, K, (16, 16, kind.k), kind.a_reg, kind.a_lane, kind.b_reg, kind.b_lane, C_REG, C_LANE,
                         num_warps)


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


def _widen(fn: Any, regs: list[str], fmt: str, elem: str) -> list[str]:
    """fp8 registers as ``elem`` (half): every value of the OCP formats is a half, so the f32 -> half step is exact."""
    from tritium.gpu.lower import fp8
    seen: dict[str, str] = {}
    out = []
    for v in regs:
        if v not in seen:
            seen[v] = fn.inst(f"fptrunc float {fp8.to_f32(fn, fmt, v)} to {elem}")
        out.append(seen[v])
    return out


def lower_mfma_dot(lo: Context, op: Any, a_lay: L.Layout, b_lay: L.Layout, acc_lay: L.Layout) -> Tensor:
    from tritium._mlir import ir
    kind = KINDS[ir.StringAttr(op.attributes["ttg.dot"]).value.split(".", 1)[1]]
    fn = lo.fn
    a = lo.tensor_in(op.operands[0], a_lay)
    b = lo.tensor_in(op.operands[1], b_lay)
    c = lo.tensor_in(op.operands[2], acc_lay)
    M, N = acc_lay.shape
    K = a_lay.shape[1]
    a_regs, b_regs = a.regs, b.regs
    if kind.upcast:
        a_regs = _widen(fn, a_regs, FP8[element_type(op.operands[0].type)], kind.elem)
        b_regs = _widen(fn, b_regs, FP8[element_type(op.operands[1].type)], kind.elem)
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
                av = [a_regs[ai[(m0 + o[0], k0 + o[1])]] for o in a_offs]
                bv = [b_regs[bi[(k0 + o[0], n0 + o[1])]] for o in b_offs]
                cur = lo.target.mfma(fn, lo.module, kind, av, bv, cur)
            for i, x in zip(cidx, cur):
                out[i] = x
    for r in range(acc_lay.num_regs):
        first = ci[acc_lay.reg_coords(r)]
        if first != r:
            out[r] = out[first]
    return Tensor(acc_lay, out, c.ty)
