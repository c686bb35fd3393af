"""The NVIDIA backend's stages, named as Triton names them:

``ttir`` (tile IR after core passes) -> ``ttgir`` (layouts assigned) -> ``llir`` (LLVM IR, libdevice linked,
optimized) -> ``ptx`` (llvmlite's NVPTX target) -> ``cubin`` (ptxas, or the driver's JIT).

Nothing here touches a GPU: ``tritium.compile(src, target=GPUTarget("cuda", 90, 32))`` works on any machine
(the cubin stage needs ptxas or an NVIDIA driver).
"""
from __future__ import annotations

import functools
import hashlib
import re
import sys
from dataclasses import dataclass, fields
from typing import Any, Optional

from tritium import knobs, llvm_debug
from tritium.backends.compiler import BaseBackend, GPUTarget, Language

from . import lsr, tma, toolchain
from .barriers import drop_repeated_barriers
from .knobs import nvidia as nv_knobs
from .plugin import CAPABILITIES
from .regroup import fewer_registers, regroup
from .target import TRIPLE, NvidiaTarget

MIN_CAPABILITY = 80


class UnsupportedTarget(ValueError):
    pass


class NumWarpsError(ValueError, AssertionError):
    """num_warps is not a power of 2 from 1 to 32: a ValueError, and an AssertionError as Triton's CUDAOptions
    raises for it (code written for Triton catches that)."""


@dataclass(frozen=True)
class CUDAOptions:
    num_warps: int = 4
    num_ctas: int = 1
    num_stages: int = 3
    warp_size: int = 32
    maxnreg: Optional[int] = None
    ptx_version: Optional[int] = None
    enable_fp_fusion: bool = True
    #: Triton's: fp32 tl.math.exp2 flushes subnormal results to zero (ex2.approx.ftz.f32); False keeps them. (Triton
    #: also sets libdevice's __CUDA_FTZ by it; tritium's libdevice keeps subnormals either way)
    enable_reflect_ftz: bool = True
    launch_cooperative_grid: bool = False
    launch_pdl: bool = False
    supported_fp8_dtypes: tuple = ("fp8e4b15", "fp8e5")
    deprecated_fp8_dot_operand_dtypes: tuple = ()
    default_dot_input_precision: str = "tf32"
    allowed_dot_input_precisions: tuple = ("tf32", "tf32x3", "ieee", "bf16x3", "bf16x6")
    max_num_imprecise_acc_default: int = 0
    min_dot_size: tuple = (1, 1, 16)
    extern_libs: Any = None
    debug: bool = False
    sanitize_overflow: bool = False
    backend_name: str = "cuda"
    arch: str = ""
    instrumentation_mode: str = ""
    ir_override: Optional[str] = None


def parse_arch(arch: Any) -> int:
    text = str(arch)
    m = re.fullmatch(r"(?:sm_?)?(\d+)a?", text)
    if not m:
        raise ValueError(f"cannot read architecture {arch!r}: expected e.g. 90, 'sm90' or 'sm_90a'")
    return int(m.group(1))


@functools.lru_cache(maxsize=None)
def target_machine(capability: int, isa: int) -> Any:
    import llvmlite.binding as llvm
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    # shared-memory pointers are 32 bits wide, as in Triton (smaller addresses, fewer registers)
    llvm.set_option("tritium", "--nvptx-short-ptr")
    return llvm.Target.from_triple(TRIPLE).create_target_machine(
        cpu=toolchain.arch_name(capability), features=f"+ptx{isa}", opt=3)


@functools.lru_cache(maxsize=8)
def _emit_ptx(tm: Any, text: str, kernel: str, keep_lsr: bool = True) -> str:
    """LLVM IR text -> PTX; memoized because the llir stage's order trial (regroup.py) emits what make_ptx emits."""
    import llvmlite.binding as llvm
    mod = llvm.parse_assembly(text)
    with llvm_debug.llvm_options(kernel), lsr.scope(keep_lsr):
        return tm.emit_assembly(mod)


@functools.lru_cache(maxsize=8)
def _assemble(ptx: str, capability: int, kernel: str, extra: tuple, ptxas: Optional[str], ptxas_options: Optional[str]
              ) -> tuple[bytes, toolchain.PtxasReport]:
    # ptxas and its options are part of the key only so that a change of either assembles again
    return toolchain.assemble(ptx, capability, kernel, list(extra))


def _ptxas_extra(options: CUDAOptions) -> tuple:
    # the cubin's line table comes from the PTX's .loc directives (none when line info is disabled;
    # -suppress-debug-info then keeps ptxas from making any), as Triton passes them
    extra = ["-lineinfo", "-suppress-debug-info"] if knobs.compilation.disable_line_info else ["-lineinfo"]
    if not options.enable_fp_fusion:    # ptxas would otherwise fuse a mul and an add the IR kept apart
        extra.append("--fmad=false")
    return tuple(extra)


class CUDABackend(BaseBackend):
    name = "cuda"
    binary_ext = "cubin"
    capabilities = CAPABILITIES

    @staticmethod
    def supports_target(target: GPUTarget) -> bool:
        return target.backend == "cuda"

    def __init__(self, target: GPUTarget) -> None:
        super().__init__(target)
        override = knobs.runtime.override_arch
        self.capability = parse_arch(override) if override else parse_arch(target.arch)
        if self.capability < MIN_CAPABILITY:
            raise UnsupportedTarget(
                f"tritium-nvidia compiles for sm_80 and newer GPUs (Ampere, Ada, Hopper, Blackwell); the target is "
                f"sm_{self.capability} ({target}). Run on a newer GPU, or compile for one with "
                f"GPUTarget('cuda', 80, 32) or TRITON_OVERRIDE_ARCH=sm80")
        self.binary_ext = "cubin"
        if self.capability >= 90:   # TMA reduces fp16/bf16 boxes by min and max (cp.reduce.async.bulk.tensor)
            self.capabilities = CAPABILITIES | {"descriptor-reduce-half-minmax"}

    def hash(self) -> str:
        import llvmlite
        from . import __version__
        ptxas = toolchain.find_ptxas()
        pv = toolchain.ptxas_version(ptxas) if ptxas else "driver-jit"
        key = (f"{__version__}-{llvmlite.__version__}-{self.capability}-{ptxas}-{pv}-"
               f"{toolchain.file_digest(toolchain.find_libdevice())}")
        return hashlib.sha256(key.encode()).hexdigest()

    def parse_options(self, options: dict) -> CUDAOptions:
        known = {f.name for f in fields(CUDAOptions)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise TypeError(f"unknown launch option(s) {', '.join(unknown)}; the NVIDIA backend accepts "
                            f"{', '.join(sorted(known))}")
        opts = {k: v for k, v in options.items() if v is not None}
        # read at each compilation, as Triton reads it (the backend object outlives a change of the knob)
        opts.setdefault("arch", knobs.runtime.override_arch or f"sm{parse_arch(self.target.arch)}")
        # the `arch` option compiles for another architecture than the target's, as in Triton (warmup(...,
        # arch="sm80")): every stage reads it (capability_of)
        capability = parse_arch(opts["arch"])
        if capability < MIN_CAPABILITY:
            raise UnsupportedTarget(f"arch={opts['arch']!r}: tritium-nvidia compiles for sm_80 and newer GPUs (Ampere, "
                                    "Ada, Hopper, Blackwell); use arch='sm80' or newer")
        warps = opts.get("num_warps", 4)
        if not isinstance(warps, int) or warps < 1 or warps & (warps - 1) or warps > 32:
            raise NumWarpsError(f"num_warps must be a power of 2 between 1 and 32, got {warps!r}")
        _check_num_ctas(opts.get("num_ctas", 1), capability)
        if "supported_fp8_dtypes" not in opts:
            fp8 = {"fp8e4b15", "fp8e5"} | ({"fp8e4nv"} if capability >= 89 else set())
            opts["supported_fp8_dtypes"] = tuple(sorted(fp8))
        from tritium.gpu import stages as gs   # with the pass library: loaded to compile, not to launch
        return CUDAOptions(**gs.finish_options(opts))

    def capability_of(self, options: Any) -> int:
        """The architecture ``options`` compile for: their ``arch`` (parse_options sets it, the target's by
        default)."""
        arch = getattr(options, "arch", None)
        return parse_arch(arch) if arch else self.capability

    def target_name(self, options: Any) -> str:
        return f"cuda:{self.capability_of(options)}"

    def pipeline(self, stage: str, options: Any) -> Any:
        from tritium.gpu import stages as gs
        return gs.pipeline(stage, split_dots=True)

    # -- stages ------------------------------------------------------------------------------------------
    def add_stages(self, stages: dict, options: Any, language: Language = Language.TRITON) -> None:
        from tritium.gpu import stages as gs
        capability = self.capability_of(options)
        isa = options.ptx_version or toolchain.ptx_isa(capability)
        tm = target_machine(capability, isa)
        target = NvidiaTarget(capability, options, str(tm.target_data))
        stages["ttir"] = lambda src, md: gs.make_ttir(src, md, options, self, self.pipeline("ttir", options))
        stages["ttgir"] = lambda src, md: gs.make_ttgir(src, md, options, self, target)
        stages["llir"] = lambda src, md: self.make_llir(src, md, options, target, tm)
        stages["ptx"] = lambda src, md: self.make_ptx(src, md, options, tm, isa)
        stages["cubin"] = lambda src, md: self.make_cubin(src, md, options)

    def make_llir(self, module: Any, metadata: dict, options: CUDAOptions, target: NvidiaTarget, tm: Any) -> str:
        import llvmlite.binding as llvm
        from tritium.gpu import stages as gs
        text = drop_repeated_barriers(gs.make_llir(module, metadata, options, target))
        if target.uses_libdevice:
            # libdevice reads __nvvm_reflect("__CUDA_FTZ"): keep denormals, as Triton does
            text += '\n!llvm.module.flags = !{!0}\n!0 = !{i32 4, !"nvvm-reflect-ftz", i32 0}\n'
        mod = llvm.parse_assembly(text)
        mod.verify()
        if target.uses_libdevice:
            _link_libdevice(mod, metadata["name"], str(tm.target_data))
        if not llvm_debug.opt_disabled():
            pto = llvm.create_pipeline_tuning_options(speed_level=3)
            pb = llvm.create_pass_builder(tm, pto)
            with llvm_debug.llvm_options(metadata["name"]):
                llvm_debug.run_module_passes(pb, mod, metadata["name"])
            # the optimizer merges blocks, so barriers that were a block apart in the lowering's IR now meet
            optimized = str(mod)
            fewer = drop_repeated_barriers(optimized)
            if fewer != optimized:
                mod = llvm.parse_assembly(fewer)
            mode = nv_knobs.regroup
            if mode == "1":
                regroup(mod)
            elif mode == "auto" and toolchain.find_ptxas() is not None:
                name = metadata["name"]
                text, kept = fewer_registers(
                    str(mod), lambda t: _emit_ptx(tm, t, name, lsr.keeps_lsr(t, options.num_stages)),
                    lambda p: self._assemble(p, name, options)[1])
                if kept is not None:
                    metadata["ptx_order"] = kept
                return text
        return str(mod)

    def _assemble(self, ptx: str, kernel: str, options: CUDAOptions) -> tuple[bytes, toolchain.PtxasReport]:
        return _assemble(ptx, self.capability_of(options), kernel, _ptxas_extra(options), toolchain.find_ptxas(),
                         nv_knobs.ptxas_options)

    def make_ptx(self, src: str, metadata: dict, options: CUDAOptions, tm: Any, isa: int) -> str:
        ptx = _emit_ptx(tm, src, metadata["name"], lsr.keeps_lsr(src, options.num_stages))
        metadata["ptx_version"] = isa
        metadata["arch"] = toolchain.arch_name(self.capability_of(options))
        if nv_knobs.dump_nvptx:
            print(f"// -----// NVPTX of {metadata['name']} //----- //\n{ptx}", file=sys.stderr)
        return ptx

    def make_cubin(self, ptx: str, metadata: dict, options: CUDAOptions) -> bytes:
        cubin, report = self._assemble(ptx, metadata["name"], options)
        metadata["tensor_map_globals"] = tma.GLOBAL_PREFIX in ptx
        metadata["n_regs"] = report.registers
        metadata["n_spills"] = report.spill_bytes
        if nv_knobs.dump_ptxas and report.text:
            print(f"// ptxas report of {metadata['name']}:\n{report.text}", file=sys.stderr)
        return cubin


def _check_num_ctas(n: Any, capability: int) -> None:
    """num_ctas > 1 runs each program on a thread-block cluster (sm_90 and newer), of at most 8 CTAs (the portable
    cluster size). Only the cluster's first CTA computes (tritium.gpu.lower.clusters): right results, no speed-up."""
    if n == 1:
        return
    if not isinstance(n, int) or isinstance(n, bool) or n < 1 or n & (n - 1) or n > 8:
        raise ValueError(f"num_ctas={n!r}: a program spans 1, 2, 4 or 8 CTAs (a thread-block cluster of at most 8, "
                         "the portable size); use num_ctas=1, 2, 4 or 8")
    if capability < 90:
        raise ValueError(f"num_ctas > 1 requires NVIDIA SM90+ (Hopper): num_ctas={n} runs each program on a "
                         f"thread-block cluster, and the target is sm_{capability}; use num_ctas=1 (one CTA per "
                         "program; results are the same)")


def _link_libdevice(mod: Any, kernel: str, datalayout: str) -> None:
    import llvmlite.binding as llvm
    path = toolchain.find_libdevice()
    if path is None:
        used = sorted(f.name for f in mod.functions if f.is_declaration and f.name.startswith("__nv_"))
        raise toolchain.ToolchainError(
            f"kernel `{kernel}` needs libdevice for {', '.join(used)} (precise math functions), and no libdevice.10.bc "
            "was found: install the CUDA toolkit or `pip install nvidia-cuda-nvcc`, or set TRITON_LIBDEVICE_PATH")
    lib = _libdevice_module(path)
    lib.triple = TRIPLE
    lib.data_layout = datalayout
    mod.link_in(lib)
    for f in mod.functions:
        if not f.is_declaration and f.name != kernel:
            f.linkage = "internal"


def _libdevice_module(path: str) -> Any:
    import llvmlite.binding as llvm
    with open(path, "rb") as f:
        return llvm.parse_bitcode(f.read())
