"""A test kit: the GPU host emulator with AMD's dot layouts, so that MFMA data movement is checked numerically
without an AMD GPU. Kernels are lowered at warp size 64 with :class:`~.mfma.AmdPolicy` and
:func:`~.mfma.lower_mfma_dot`, exactly as for gfx9; only the matrix-core instruction is replaced by code that
computes what the ISA documents for it, every lane gathering the A and B elements it needs from the lanes that hold
them (warp shuffles). A wrong layout, register choice or repetition order gives wrong numbers here.

What this does not check: that the hardware's lane mapping is the documented one (no AMD GPU here).

Register with ``PluginRegistry.from_objects({"core": ..., "gpu-emu-mfma": "tritium_amd.emulated_mfma"})``; launch
option ``arch`` picks the chip whose MFMA kinds are used (default gfx942).
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from tritium.backends.compiler import Language
from tritium.gpu.emulator import EmulatorBackend, EmulatorTarget, EmuOptions, host_machine
from tritium.hookspecs import PLUGIN_API, BackendSpec, hookimpl

from .chips import CHIPS

TRITIUM_PLUGIN_API = PLUGIN_API
WAVE = 64


class EmulatedMfmaTarget(EmulatorTarget):
    def __init__(self, triple: str, datalayout: str, chip: Any, options: Any) -> None:
        super().__init__(triple, datalayout, WAVE)
        self.chip, self.options = chip, options

    def policy(self, num_warps: int) -> Any:
        from .mfma import AmdPolicy
        return AmdPolicy(num_warps, WAVE, self.chip, self.options)

    def dot_strategy(self, kind: str) -> Optional[Callable[..., Any]]:
        if kind.startswith("mfma"):
            from .mfma import lower_mfma_dot
            return lower_mfma_dot
        return None

    def _bits(self, fn: Any, v: str, elem: str) -> str:
        if elem == "float":
            return fn.inst(f"bitcast float {v} to i32")
        if elem in ("half", "bfloat"):
            return fn.inst(f"zext i16 {fn.inst(f'bitcast {elem} {v} to i16')} to i32")
        return fn.inst(f"zext {elem} {v} to i32")

    def _value(self, fn: Any, bits: str, elem: str, acc: str, fp8: str = "") -> str:
        if fp8:
            # the fp8 MFMAs: each byte is a value in the encoding the chip's instruction reads
            from tritium.gpu.lower import fp8 as f8
            return f8.to_f32(fn, fp8, fn.inst(f"trunc i32 {bits} to i8"))
        if elem == "float":
            return fn.inst(f"bitcast i32 {bits} to float")
        if elem in ("half", "bfloat"):
            h = fn.inst(f"bitcast i16 {fn.inst(f'trunc i32 {bits} to i16')} to {elem}")
            return fn.inst(f"fpext {elem} {h} to float")
        return fn.inst(f"sext {elem} {fn.inst(f'trunc i32 {bits} to {elem}')} to {acc}")

    def mfma(self, fn: Any, module: Any, kind: Any, a: list[str], b: list[str], c: list[str]) -> list[str]:
        pl = kind.per_lane
        lane = fn.inst(f"and i32 {self.thread_id(fn)}, {WAVE - 1}")
        col = fn.inst(f"and i32 {lane}, 15")
        quad = fn.inst(f"lshr i32 {lane}, 4")
        abits = [self._bits(fn, x, kind.elem) for x in a]
        bbits = [self._bits(fn, x, kind.elem) for x in b]
        out = []
        for i in range(4):
            row = fn.inst(f"add i32 {fn.inst(f'shl i32 {quad}, 2')}, {i}")      # D: rows 4 * (lane / 16) + i
            acc = c[i]
            for kk in range(kind.k):
                group = 16 * (kk // pl)
                a_src = fn.inst(f"add i32 {row}, {group}")      # A[row, kk]: lane row + 16 * (kk / pl)
                b_src = fn.inst(f"add i32 {col}, {group}")      # B[kk, col]: lane col + 16 * (kk / pl)
                av = self._value(fn, self.shuffle_i32(fn, "idx", abits[kk % pl], a_src), kind.elem, kind.acc,
                                 kind.a_fmt)
                bv = self._value(fn, self.shuffle_i32(fn, "idx", bbits[kk % pl], b_src), kind.elem, kind.acc,
                                 kind.b_fmt)
                if kind.acc == "float":
                    acc = fn.inst(f"fadd float {acc}, {fn.inst(f'fmul float {av}, {bv}')}")
                else:
                    acc = fn.inst(f"add i32 {acc}, {fn.inst(f'mul i32 {av}, {bv}')}")
            out.append(acc)
        return out


class EmulatedMfmaBackend(EmulatorBackend):
    def parse_options(self, options: dict) -> EmuOptions:
        opts = dict(options)
        opts["warp_size"] = WAVE
        opts.setdefault("arch", "gfx942")
        return super().parse_options(opts)

    def add_stages(self, stages: dict, options: Any, language: Language = Language.TRITON) -> None:
        import llvmlite.binding as llvm
        from tritium.gpu import stages as gs
        tm = host_machine()
        target = EmulatedMfmaTarget(llvm.get_default_triple(), str(tm.target_data), CHIPS[options.arch], options)
        stages["ttir"] = lambda src, md: gs.make_ttir(src, md, options, self)
        stages["ttgir"] = lambda src, md: gs.make_ttgir(src, md, options, self, target)
        stages["llir"] = lambda src, md: self.make_llir(src, md, options, target)
        stages["obj"] = lambda src, md: tm.emit_object(llvm.parse_assembly(src))


@hookimpl
def tritium_backends() -> list[BackendSpec]:
    return [BackendSpec(name="gpu-emu-mfma", compiler="tritium_amd.emulated_mfma:EmulatedMfmaBackend",
                        driver="tritium.gpu.emulator:EmulatorDriver",
                        description="the GPU emulator with AMD's MFMA dot layouts (for tests)",
                        capabilities=EmulatorBackend.capabilities, priority=-10)]
