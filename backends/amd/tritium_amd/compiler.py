"""The AMD backend's stages, named as Triton names them:

``ttir`` (tile IR after core passes) -> ``ttgir`` (layouts assigned, wave64 or wave32) -> ``llir`` (LLVM IR for
``amdgcn-amd-amdhsa``, optimized) -> ``amdgcn`` (llvmlite's AMDGPU assembly) -> ``hsaco`` (that text assembled and
linked by the ziglang wheel's clang and ld.lld).

Nothing here touches a GPU: ``tritium.compile(src, target=GPUTarget("hip", "gfx942", 64))`` works on any machine.
"""
from __future__ import annotations

import functools
import hashlib
import sys
from dataclasses import dataclass, fields
from typing import Any, Optional

from tritium import llvm_debug
from tritium.backends.compiler import BaseBackend, GPUTarget, Language

from . import codeobj, toolchain
from .chips import Chip, UnsupportedChip, chip as chip_of
from .knobs import amd as amd_knobs
from .plugin import CAPABILITIES
from .target import TRIPLE, AmdTarget

#: code object v5 (ROCm 5.3 and newer load it; LLVM 22 would otherwise write v6, which needs ROCm 6.2)
CODE_OBJECT_VERSION = 500
ARG_BYTES = {"i1": 1, "i8": 1, "i16": 2, "half": 2, "bfloat": 2, "i32": 4, "float": 4, "i64": 8, "double": 8}
ASAN_REFUSAL = ("TRITON_ENABLE_ASAN=1: tritium-amd cannot build address-sanitized code objects. AMD's device ASan "
                "instruments every access with calls into ROCm's device sanitizer runtime (asanrtl.bc, shipped "
                "with ROCm's device libraries, not on the package index) and needs an ASan-enabled HIP runtime to "
                "allocate shadow memory; neither is available to tritium-amd. Unset TRITON_ENABLE_ASAN, or check "
                "out-of-bounds accesses with TRITON_INTERPRET=1 or the CPU backend's TRITIUM_CPU_BOUNDS_CHECK=1")


class AsanUnavailable(RuntimeError):
    pass


@dataclass(frozen=True)
class HIPOptions:
    num_warps: int = 4
    num_ctas: int = 1
    num_stages: int = 2
    warp_size: int = 64
    waves_per_eu: int = 0
    maxnreg: Optional[int] = None
    enable_fp_fusion: bool = True
    launch_cooperative_grid: bool = False
    launch_pdl: bool = False
    supported_fp8_dtypes: tuple = ()
    deprecated_fp8_dot_operand_dtypes: tuple = ()
    default_dot_input_precision: str = "ieee"
    allowed_dot_input_precisions: tuple = ("ieee", )
    max_num_imprecise_acc_default: int = 0
    min_dot_size: tuple = (1, 1, 1)
    extern_libs: Any = None
    debug: bool = False
    sanitize_overflow: bool = False
    backend_name: str = "hip"
    arch: str = ""
    instrumentation_mode: str = ""
    ir_override: Optional[str] = None


@functools.lru_cache(maxsize=None)
def target_machine(cpu: str, features: str) -> Any:
    import llvmlite.binding as llvm
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    return llvm.Target.from_triple(TRIPLE).create_target_machine(cpu=cpu, features=features, opt=3, reloc="pic")


def wave_features(chip: Chip, warp_size: int) -> str:
    if chip.family == "rdna":
        return "+wavefrontsize32" if warp_size == 32 else "+wavefrontsize64"
    return ""


class HIPBackend(BaseBackend):
    name = "hip"
    binary_ext = "hsaco"
    capabilities = CAPABILITIES

    @staticmethod
    def supports_target(target: GPUTarget) -> bool:
        return target.backend == "hip"

    def __init__(self, target: GPUTarget) -> None:
        super().__init__(target)
        try:
            self.chip = chip_of(amd_knobs.arch or target.arch)
        except UnsupportedChip as exc:
            raise UnsupportedChip(f"{exc} (target {target})") from None
        ws = target.warp_size or self.chip.wave
        if ws not in (32, 64) or (ws == 32 and not self.chip.wave32_capable):
            raise UnsupportedChip(f"{self.chip.name} runs wave64 only; the target asks for warp size {ws} ({target})")
        self.warp_size = ws

    def hash(self) -> str:
        import llvmlite
        from . import __version__
        key = f"{__version__}-{llvmlite.__version__}-{self.chip.name}-{self.warp_size}-" \
              f"{toolchain.zig_version(toolchain.find_zig())}"
        return hashlib.sha256(key.encode()).hexdigest()

    def parse_options(self, options: dict) -> HIPOptions:
        known = {f.name for f in fields(HIPOptions)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise TypeError(f"unknown launch option(s) {', '.join(unknown)}; the AMD backend accepts "
                            f"{', '.join(sorted(known))}")
        opts = {k: v for k, v in options.items() if v is not None}
        opts.setdefault("arch", self.chip.name)
        opts["warp_size"] = self.warp_size
        warps = opts.get("num_warps", 4)
        if not isinstance(warps, int) or warps < 1 or warps & (warps - 1) or warps * self.warp_size > 1024:
            raise ValueError(f"num_warps must be a power of 2 with num_warps * {self.warp_size} <= 1024 threads on "
                             f"{self.chip.name}, got {warps!r}")
        if opts.get("num_ctas", 1) != 1:
            raise ValueError(f"num_ctas={opts['num_ctas']}: AMD GPUs have no thread-block clusters; use num_ctas=1")
        if "supported_fp8_dtypes" not in opts:
            fp8 = {"fp8e4b15", "fp8e5"}
            if "fp8ocp" in self.chip.mfma or "fp8fnuz" in self.chip.mfma:
                fp8.add("fp8e4nv")
            if "fp8fnuz" in self.chip.mfma:
                fp8 |= {"fp8e4b8", "fp8e5b16"}
            opts["supported_fp8_dtypes"] = tuple(sorted(fp8))
        if "allowed_dot_input_precisions" not in opts:
            # tf32x3/bf16x3/bf16x6 approximate ieee, which the fp32 MFMA and the FMA fallback compute outright; tf32
            # is xf32 on gfx942 and full fp32 elsewhere (more precise than asked, so kernels written for it compile)
            opts["allowed_dot_input_precisions"] = ("ieee", "tf32", "tf32x3", "bf16x3", "bf16x6")
        from tritium.gpu import stages as gs   # with the pass library: loaded to compile, not to launch
        return HIPOptions(**gs.finish_options(opts))

    def pipeline(self, stage: str, options: Any) -> Any:
        from tritium.gpu import stages as gs
        return gs.pipeline(stage)

    # -- stages ------------------------------------------------------------------------------------------
    def add_stages(self, stages: dict, options: Any, language: Language = Language.TRITON) -> None:
        from tritium.gpu import stages as gs
        if amd_knobs.enable_asan:
            raise AsanUnavailable(ASAN_REFUSAL)
        features = wave_features(self.chip, options.warp_size)
        tm = target_machine(self.chip.name, features)
        target = AmdTarget(self.chip, options, str(tm.target_data))
        stages["ttir"] = lambda src, md: gs.make_ttir(src, md, options, self)
        stages["ttgir"] = lambda src, md: gs.make_ttgir(src, md, options, self, target)
        stages["llir"] = lambda src, md: self.make_llir(src, md, options, target, tm)
        stages["amdgcn"] = lambda src, md: self.make_amdgcn(src, md, tm)
        stages["hsaco"] = lambda src, md: self.make_hsaco(src, md, options, features)

    def make_llir(self, module: Any, metadata: dict, options: HIPOptions, target: AmdTarget, tm: Any) -> str:
        import llvmlite.binding as llvm
        from tritium.gpu import stages as gs
        text = gs.make_llir(module, metadata, options, target)
        if metadata["shared"] > self.chip.lds_bytes:
            # LLVM's AMDGPU backend ends the process (a fatal error, not an exception) on LDS overflow
            from tritium.compiler.errors import OutOfResources
            raise OutOfResources(metadata["shared"], self.chip.lds_bytes, "shared memory (LDS)",
                                 f"kernel `{metadata['name']}` on {self.chip.name}: reduce the block sizes or "
                                 "`num_stages`")
        # named metadata given twice is merged by LLVM's parser (the line table adds its own module flags)
        text += (f'\n!llvm.module.flags = !{{!0}}\n!0 = !{{i32 1, !"amdhsa_code_object_version", '
                 f'i32 {CODE_OBJECT_VERSION}}}\n')
        mod = llvm.parse_assembly(text)
        mod.verify()
        if not llvm_debug.opt_disabled():
            pto = llvm.create_pipeline_tuning_options(speed_level=3)
            pb = llvm.create_pass_builder(tm, pto)
            with llvm_debug.llvm_options(metadata["name"]):
                llvm_debug.run_module_passes(pb, mod, metadata["name"])
        metadata["arch"] = self.chip.name
        metadata["warp_size"] = options.warp_size
        return str(mod)

    def make_amdgcn(self, src: str, metadata: dict, tm: Any) -> str:
        import llvmlite.binding as llvm
        mod = llvm.parse_assembly(src)
        with llvm_debug.llvm_options(metadata["name"]):
            asm = tm.emit_assembly(mod)
        if amd_knobs.dump_amdgcn:
            print(f"// -----// AMDGCN of {metadata['name']} //----- //\n{asm}", file=sys.stderr)
        return asm

    def make_hsaco(self, asm: str, metadata: dict, options: HIPOptions, features: str) -> bytes:
        name = metadata["name"]
        blob = toolchain.build_code_object(asm, TRIPLE, self.chip.name, features, name)
        sizes = [ARG_BYTES.get(t, 8) for t in metadata.get("arg_types", [])]
        co = codeobj.check(blob, self.chip, name, sizes, options.num_warps * options.warp_size)
        k = co.kernels[0]
        metadata.update(n_regs=k.vgprs, n_agprs=k.agprs, n_sgprs=k.sgprs, n_spills=k.vgpr_spills + k.sgpr_spills,
                        lds=k.group_segment, scratch=k.private_segment, kernarg_size=k.kernarg_size)
        return blob
