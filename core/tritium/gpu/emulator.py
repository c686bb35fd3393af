"""A host target for the GPU lowering: every GPU thread of a program is an OS thread, barriers are
pthread barriers, warp shuffles go through a per-warp buffer. It runs the very IR the lowering writes for
GPUs (only the target hooks differ), so layouts, reductions, scans, conversions and control flow are
tested on machines without a GPU. It is slow (a barrier wakes every thread) and meant for tests.

It is a backend like any other but is not registered by default: a test installs it with
``PluginRegistry.from_objects({"core": ..., "gpu-emu": "tritium.gpu.emulator"})`` and selects it with
``TRITON_DEFAULT_BACKEND=gpu-emu``.

The backend is here (options, stages); the target hooks and the host machine are emulator_target.py, the
driver and launcher emulator_driver.py, both re-exported: ``tritium.gpu.emulator:EmulatorDriver`` and the
other names keep their import path.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, fields
from typing import Any

from .. import knobs
from ..backends.compiler import BaseBackend, GPUTarget, Language
from ..hookspecs import PLUGIN_API, BackendSpec, hookimpl
from ..llvmir.text import Module
from . import emulator_libdevice
from . import stages as gs
from .emulator_driver import (  # noqa: F401  (their import path before the split)
    MAX_NUM_REGS, MAX_REGS_PER_THREAD, EmulatedAssertionError, EmulatorDriver, EmulatorLauncher, EmulatorUtils)
from .emulator_target import (  # noqa: F401  (their import path before the split)
    BARRIER_BYTES, BF16_HELPERS, CTX, NAME, RT, EmulatorTarget, host_machine, new_host_machine, thread_main)

TRITIUM_PLUGIN_API = PLUGIN_API


@dataclass(frozen=True)
class EmuOptions:
    num_warps: int = 4
    num_stages: int = 3
    num_ctas: int = 1
    maxnreg: Any = None
    debug: bool = False
    enable_fp_fusion: bool = True
    sanitize_overflow: bool = False
    default_dot_input_precision: str = "ieee"
    allowed_dot_input_precisions: tuple = ("ieee", "tf32", "tf32x3", "bf16x3", "bf16x6")
    min_dot_size: tuple = (16, 16, 16)
    launch_cooperative_grid: bool = False
    launch_pdl: bool = False
    extern_libs: Any = None
    instrumentation_mode: str = ""
    arch: str = "host"
    #: threads per warp (a launch option; the default is the target's warp size)
    warp_size: int = 32


class EmulatorBackend(BaseBackend):
    name = NAME
    binary_ext = "obj"
    capabilities = frozenset({"host-memory", "fp64", "device-print", "device-assert", "float-atomics",
                              "int64-atomics", "dot-fp32", "dot-fp16", "dot-bf16", "dot-int8", "dot-fp64", "fp8"})

    @staticmethod
    def supports_target(target: GPUTarget) -> bool:
        return target.backend == NAME

    def hash(self) -> str:
        import llvmlite
        return hashlib.sha256(f"gpu-emu-{llvmlite.__version__}".encode()).hexdigest()

    def parse_options(self, options: dict) -> EmuOptions:
        known = {f.name for f in fields(EmuOptions)}
        opts = {k: v for k, v in options.items() if k in known}
        if knobs.compilation.sanitize_overflow:
            opts.setdefault("sanitize_overflow", True)
        if "allowed_dot_input_precisions" in opts:
            opts["allowed_dot_input_precisions"] = tuple(opts["allowed_dot_input_precisions"])
        opts.setdefault("warp_size", self.target.warp_size or 32)
        ws = opts["warp_size"]
        if not isinstance(ws, int) or ws < 1 or ws & (ws - 1):
            raise ValueError(f"warp_size must be a power of 2, got {ws!r}")
        n = opts.setdefault("num_ctas", knobs.compilation.emulator_num_ctas)
        if not isinstance(n, int) or isinstance(n, bool) or n < 1 or n > 8:
            raise ValueError(f"num_ctas must be an int from 1 to 8 (CTAs per program), got {n!r}")
        return EmuOptions(**opts)

    def add_stages(self, stages: dict, options: Any, language: Language = Language.TRITON) -> None:
        tm = host_machine()
        import llvmlite.binding as llvm
        target = EmulatorTarget(llvm.get_default_triple(), str(tm.target_data), options.warp_size, options.num_ctas)
        stages["ttir"] = lambda src, md: gs.make_ttir(src, md, options, self)
        stages["ttgir"] = lambda src, md: gs.make_ttgir(src, md, options, self, target)
        stages["llir"] = lambda src, md: self.make_llir(src, md, options, target)
        stages["obj"] = lambda src, md: tm.emit_object(llvm.parse_assembly(src))

    def make_llir(self, module: Any, metadata: dict, options: Any, target: EmulatorTarget) -> str:
        text = gs.make_llir(module, metadata, options, target)
        metadata["warp_size"] = target.warp_size
        metadata["emu_libdevice"] = emulator_libdevice.used(text)
        extra = Module()
        thread_main(extra, metadata["name"])
        text = text + "\n" + extra.functions[0].text() + "\n" + BF16_HELPERS
        import llvmlite.binding as llvm
        mod = llvm.parse_assembly(text)
        mod.verify()
        return str(mod)


@hookimpl
def tritium_backends() -> list[BackendSpec]:
    return [BackendSpec(name=NAME, compiler="tritium.gpu.emulator:EmulatorBackend",
                        driver="tritium.gpu.emulator:EmulatorDriver",
                        description="the GPU lowering run on host threads (for tests)",
                        capabilities=EmulatorBackend.capabilities, priority=-10)]
