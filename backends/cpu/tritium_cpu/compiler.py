"""The CPU backend's stages: ``ttir`` (tile IR after core passes) -> ``llir`` (optimized LLVM IR) -> ``obj``
(a native object file for the host, loaded without a linker)."""
from __future__ import annotations

import functools
import hashlib
import sys
from dataclasses import dataclass, fields, replace
from typing import Any

from tritium import knobs, llvm_debug
from tritium.backends.compiler import BaseBackend, GPUTarget, Language

from .knobs import cpu as cpu_knobs
from .plugin import CAPABILITIES


@dataclass(frozen=True)
class CPUOptions:
    num_warps: int = 4          # accepted for compatibility with GPU launches; has no meaning on the CPU
    num_stages: int = 3
    num_ctas: int = 1
    maxnreg: Any = None
    debug: bool = False
    enable_fp_fusion: bool = True
    sanitize_overflow: bool = False
    default_dot_input_precision: str = "ieee"
    allowed_dot_input_precisions: tuple = ("ieee", "tf32", "tf32x3", "bf16x3", "bf16x6")
    min_dot_size: tuple = (1, 1, 1)   # the CPU dot has no tile-size floor (Triton-CPU allows any size; FlagGems picks 4x4x4)
    launch_cooperative_grid: bool = False
    launch_pdl: bool = False
    extern_libs: Any = None
    instrumentation_mode: str = ""
    arch: str = ""
    # GPU tuning options that portable autotune configs carry (Triton's tutorials pass them on every device);
    # accepted so those configs launch, with no meaning on the CPU
    waves_per_eu: int = 0
    matrix_instr_nonkdim: int = 0
    kpack: int = 1
    # every load, store and atomic checked against its argument's buffer (codegen/oob.py); default: the knob
    # TRITIUM_CPU_BOUNDS_CHECK, which when unset follows debug
    bounds_check: bool = False


#: options that change nothing in the code this backend generates
CODE_BLIND_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg", "waves_per_eu", "matrix_instr_nonkdim", "kpack")
_DEFAULTS = {f.name: f.default for f in fields(CPUOptions)}


@functools.lru_cache(maxsize=None)
def host_target(cpu: str, features: str, opt: int, triple: str = "", linked: bool = False) -> Any:
    """The machine that emits objects: for MCJIT (the ``obj`` stage), or ``linked`` by a system linker into a
    user's program or shared library (``tritium compile --emit-c``)."""
    import llvmlite.binding as llvm
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    target = llvm.Target.from_triple(triple) if triple else llvm.Target.from_default_triple()
    # x86-64 objects are loaded by MCJIT, which maps code and constants separately: once large tensors fragment
    # the address space they can land over 2 GiB apart, beyond the small code model's 32-bit PC-relative reach
    # (LLVM then aborts the process). The large model addresses them with 64-bit absolutes, as numba's JIT
    # does; under it only static relocations resolve right in MCJIT: with large PIC (GOTPC64/GOTOFF64) the first
    # object an engine loads runs right and the next ones read garbage constants (LLVM 22's RuntimeDyld).
    # A linked object is the opposite case: the linker keeps an image's sections together, and absolute
    # relocations in code would need text relocations, which `-z text`, lld and hardened toolchains refuse.
    large = not linked and (triple or llvm.get_default_triple()).startswith("x86_64")
    return target.create_target_machine(cpu=cpu, features=features, opt=opt, reloc="static" if large else "pic",
                                        codemodel="large" if large else "default")


def target_triple() -> str:
    """The triple compiled for: the host's unless TRITIUM_CPU_TRIPLE names another (cross-compiling)."""
    import llvmlite.binding as llvm
    return cpu_knobs.target_triple or llvm.get_default_triple()


def is_cross(triple: str) -> bool:
    import llvmlite.binding as llvm
    return triple.split("-")[0] != llvm.get_default_triple().split("-")[0]


def host_cpu() -> tuple[str, str]:
    import llvmlite.binding as llvm
    if is_cross(target_triple()):     # the host's CPU name and features mean nothing to another architecture
        cpu = cpu_knobs.target_cpu or "generic"
        features = cpu_knobs.target_features
        from .isa import check_features
        return cpu, check_features(features) if features else ""
    cpu = cpu_knobs.target_cpu or llvm.get_host_cpu_name()
    features = cpu_knobs.target_features
    if features is None:
        features = llvm.get_host_cpu_features().flatten()
    else:
        from .isa import check_features
        features = check_features(features)
    return cpu, features + EXACT_BFLOAT16


# vcvtneps2bf16 (AVX512-BF16, AVX-NE-CONVERT), which LLVM picks for float -> bfloat16, flushes subnormal inputs to
# zero whatever MXCSR says; Triton rounds them exactly. Without these features LLVM calls __truncsfbf2, which
# codegen/softfloat.py defines with exact rounding. (Later entries of a feature string win in LLVM.)
EXACT_BFLOAT16 = ",-avx512bf16,-avxneconvert"


def vector_bits(features: str) -> int:
    feats = set(features.split(","))
    if "+avx512f" in feats:
        return 512
    if "+avx" in feats or "+avx2" in feats:
        return 256
    return 128


class CPUBackend(BaseBackend):
    name = "cpu"
    binary_ext = "obj"
    capabilities = CAPABILITIES

    @staticmethod
    def supports_target(target: GPUTarget) -> bool:
        return target.backend == "cpu"

    def __init__(self, target: GPUTarget) -> None:
        super().__init__(target)
        self.cpu, self.features = host_cpu()
        self.triple = target_triple()
        self.capability = self.cpu

    def hash(self) -> str:
        import llvmlite
        from tritium.cache import package_fingerprint
        from . import __version__
        key = (f"{__version__}-{package_fingerprint('tritium_cpu')}-{llvmlite.__version__}-{self.cpu}-"
               f"{self.features}-{cpu_knobs.opt_level}-{self.triple}")
        return hashlib.sha256(key.encode()).hexdigest()

    def parse_options(self, options: dict) -> CPUOptions:
        known = {f.name for f in fields(CPUOptions)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise TypeError(f"unknown launch option(s) {', '.join(unknown)}; the CPU backend accepts "
                            f"{', '.join(sorted(known))}")
        opts = dict(options)
        if knobs.compilation.sanitize_overflow:
            opts.setdefault("sanitize_overflow", True)
        if "allowed_dot_input_precisions" in opts:
            opts["allowed_dot_input_precisions"] = tuple(opts["allowed_dot_input_precisions"])
        opts.setdefault("arch", self.cpu)
        if "bounds_check" not in opts:
            knob = cpu_knobs.bounds_check
            opts["bounds_check"] = bool(opts.get("debug")) if knob is None else knob
        return CPUOptions(**opts)

    def code_options(self, options: CPUOptions) -> CPUOptions:
        # GPU launch and tuning parameters: nothing here reads them (the launcher reads num_warps from each
        # kernel's own metadata), so autotune configs that differ only in them compile once
        return replace(options, **{name: _DEFAULTS[name] for name in CODE_BLIND_OPTIONS})

    def pipeline(self, stage: str, options: Any) -> Any:
        if stage == "ttir":
            from tritium.passes.pipeline import TTIR_PASSES
            return TTIR_PASSES
        raise KeyError(stage)

    def add_stages(self, stages: dict, options: Any, language: Language = Language.TRITON) -> None:
        # the pass library loads only to compile (~50 ms): launching an AOT-built or cached kernel loads this module
        from tritium.passes.pipeline import make_ttir
        stages["ttir"] = lambda src, metadata: make_ttir(src, metadata, options, self)
        stages["llir"] = lambda src, metadata: self.make_llir(src, metadata, options)
        stages["obj"] = lambda src, metadata: self.make_obj(src, metadata, options)

    # -- stages ------------------------------------------------------------------------------------
    def make_llir(self, module: Any, metadata: dict, options: CPUOptions) -> str:
        from .codegen import lower_to_llvm
        import llvmlite.binding as llvm
        tm = host_target(self.cpu, self.features, cpu_knobs.opt_level, self.triple)
        # symbols live in one process-wide JIT engine: make them unique per compiled IR, so that a
        # recompilation (TRITON_ALWAYS_COMPILE, an override) never resolves to an older kernel
        digest = hashlib.sha256((metadata["hash"] + str(module)).encode()).hexdigest()[:16]
        symbol = f"{metadata['name']}_{digest}"
        text, meta = lower_to_llvm(module, symbol, options, self.triple, str(tm.target_data),
                                   vector_bits(self.features))
        metadata.update(meta)
        metadata["cpu_triple"] = self.triple
        # what the object needs of a CPU: a precompiled kernel's loader checks it against the host's
        metadata["cpu_name"], metadata["cpu_features"] = self.cpu, self.features
        dump = knobs.compilation.llvm_ir_dump
        if dump:
            print(f"// -----// LLVM IR before optimization ({metadata['name']}) //----- //\n{text}", file=sys.stderr)
        mod = llvm.parse_assembly(text)
        mod.verify()
        if not llvm_debug.opt_disabled():
            from .outline import instruction_count, outline_loops
            limit = cpu_knobs.outline_threshold
            if 0 < limit < instruction_count(text):
                mod = outline_loops(mod, tm)
            pto = llvm.create_pipeline_tuning_options(speed_level=min(cpu_knobs.opt_level, 3))
            pto.loop_vectorization = True
            pto.slp_vectorization = True
            pb = llvm.create_pass_builder(tm, pto)
            with llvm_debug.llvm_options(metadata["name"]):
                llvm_debug.run_module_passes(pb, mod, metadata["name"])
        out = str(mod)
        if dump:
            print(f"// -----// LLVM IR after optimization ({metadata['name']}) //----- //\n{out}", file=sys.stderr)
        return out

    def make_obj(self, src: str, metadata: dict, options: CPUOptions) -> bytes:
        import llvmlite.binding as llvm
        tm = host_target(self.cpu, self.features, cpu_knobs.opt_level, self.triple)
        with llvm_debug.llvm_options(metadata["name"]):
            return tm.emit_object(llvm.parse_assembly(src))
