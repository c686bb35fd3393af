"""A host target for the GPU lowering: every GPU thread of a program is an OS thread, barriers are
pthread barriers, warp shuffles go through a per-warp buffer. It runs the very IR the lowering writes for
GPUs (only the target hooks differ), so layouts, reductions, scans, conversions and control flow are
tested on machines without a GPU. It is slow (a barrier wakes every thread) and meant for tests.

It is a backend like any other but is not registered by default: a test installs it with
``PluginRegistry.from_objects({"core": ..., "gpu-emu": "tritium.gpu.emulator"})`` and selects it with
``TRITON_DEFAULT_BACKEND=gpu-emu``.
"""
from __future__ import annotations

import ctypes
import functools
import hashlib
import struct
import threading
from dataclasses import dataclass, fields
from typing import Any, Optional

from .. import knobs
from ..backends.compiler import BaseBackend, GPUTarget, Language
from ..backends.driver import DeviceUtils, DriverBase
from ..hookspecs import PLUGIN_API, BackendSpec, hookimpl
from ..llvmir.text import Function, Module
from . import emulator_libdevice, emulator_link
from . import stages as gs
from .target import TargetHooks

TRITIUM_PLUGIN_API = PLUGIN_API
NAME = "gpu-emu"
CTX = "{ i32, i32, i32, i32, i32, i32, i32, i32, ptr, ptr }"   # tid, ctaid xyz, nctaid xyz, pad, smem, runtime
RT = "{ ptr, ptr, ptr }"                                      # CTA barrier, warp barriers, shuffle buffer
BARRIER_BYTES = 64                                            # >= sizeof(pthread_barrier_t)
# the register file the emulator describes (utils.get_device_properties): 32-bit registers per multiprocessor,
# and at most this many per thread, as on the GPUs whose tutorials size grids from them
MAX_NUM_REGS = 65536
MAX_REGS_PER_THREAD = 255


class EmulatorTarget(TargetHooks):
    safe_int_div = True
    max_shared_bytes = 1 << 20
    # x86 lowers maxnum/minnum to maxss/minss, which return the second operand when the inputs compare equal:
    # max(-0.0, +0.0) took its sign from the operand order
    minmax_zero_sign_open = True

    def __init__(self, triple: str, datalayout: str, warp_size: int = 32, num_ctas: int = 1) -> None:
        self.triple, self.datalayout = triple, datalayout
        # lanes per warp: any power of two; the layouts, shuffles and warp barriers all follow it
        self.warp_size = warp_size
        # clusters as a GPU's launcher lays them out: num_ctas consecutive CTAs along x are one program (the
        # launcher multiplies grid x); the emulator runs CTAs one after another, which the form the lowering builds
        # (only a cluster's first CTA computes, gpu/lower/clusters.py) never waits across
        self.num_ctas = num_ctas
        self.max_cluster_ctas = 8

    def kernel_function(self, module: Module, name: str, params: list[str], num_warps: int) -> tuple[Function, list[str]]:
        fn = Function(f"{name}_kernel", "void", [("ptr", "%args"), ("ptr", "%ctx")], attrs="nounwind")
        names = []
        for i, t in enumerate(params):
            slot = fn.pinst(f"getelementptr inbounds i64, ptr %args, i64 {i}")
            if t == "i1":
                b = fn.pinst(f"load i8, ptr {slot}, align 8")
                names.append(fn.pinst(f"trunc i8 {b} to i1"))
            else:
                names.append(fn.pinst(f"load {t}, ptr {slot}, align 8"))
        _runtime(module, self.warp_size)
        return fn, names

    def _field(self, fn: Function, k: int, ty: str = "i32") -> str:
        p = fn.pinst(f"getelementptr inbounds {CTX}, ptr %ctx, i32 0, i32 {k}")
        return fn.pinst(f"load {ty}, ptr {p}")

    def thread_id(self, fn: Function) -> str:
        return self._field(fn, 0)

    def program_id(self, fn: Function, axis: int) -> str:
        got = self._field(fn, 1 + axis)
        return fn.pinst(f"udiv i32 {got}, {self.num_ctas}") if axis == 0 and self.num_ctas > 1 else got

    def num_programs(self, fn: Function, axis: int) -> str:
        got = self._field(fn, 4 + axis)
        return fn.pinst(f"udiv i32 {got}, {self.num_ctas}") if axis == 0 and self.num_ctas > 1 else got

    def cluster_rank(self, fn: Function) -> str:
        return fn.pinst(f"urem i32 {self._field(fn, 1)}, {self.num_ctas}")

    def shared_base(self, fn: Function) -> str:
        return self._field(fn, 8, "ptr")

    def barrier(self, fn: Function) -> None:
        fn.emit("call void @emu_barrier(ptr %ctx)")

    def shuffle_i32(self, fn: Function, kind: str, value: str, operand: str) -> str:
        k = {"xor": 0, "up": 1, "down": 2, "idx": 3}[kind]
        return fn.inst(f"call i32 @emu_shfl(ptr %ctx, i32 {k}, i32 {value}, i32 {operand})")

    def extern_call(self, fn: Function, module: Module, symbol: str, libpath: str, args: list[tuple[str, str]],
                    ret: str) -> str:
        return emulator_libdevice.call(fn, module, symbol, libpath, args, ret)

    def printf(self, fn: Function, module: Module, fmt: str, args: list[tuple[str, str]]) -> None:
        module.declare("printf", "declare i32 @printf(ptr, ...)")
        g = module.string(fmt)
        rest = "".join(f", {t} {v}" for t, v in args)
        fn.emit(f"call i32 (ptr, ...) @printf(ptr {g}{rest})")


def _runtime(module: Module, warp_size: int = 32) -> None:
    if "emu_barrier" in module.declarations:
        return
    module.declare("pthread_barrier_wait", "declare i32 @pthread_barrier_wait(ptr)")
    module.declare("emu_barrier", f"""define internal void @emu_barrier(ptr %ctx) nounwind {{
  %rtp = getelementptr inbounds {CTX}, ptr %ctx, i32 0, i32 9
  %rt = load ptr, ptr %rtp
  %b = load ptr, ptr %rt
  %r = call i32 @pthread_barrier_wait(ptr %b)
  ret void
}}""")
    module.declare("emu_shfl", f"""define internal i32 @emu_shfl(ptr %ctx, i32 %kind, i32 %v, i32 %op) nounwind {{
  %tid = load i32, ptr %ctx
  %rtp = getelementptr inbounds {CTX}, ptr %ctx, i32 0, i32 9
  %rt = load ptr, ptr %rtp
  %wbp = getelementptr inbounds {RT}, ptr %rt, i32 0, i32 1
  %wbs = load ptr, ptr %wbp
  %bufp = getelementptr inbounds {RT}, ptr %rt, i32 0, i32 2
  %buf = load ptr, ptr %bufp
  %lane = and i32 %tid, {warp_size - 1}
  %warp = lshr i32 %tid, {warp_size.bit_length() - 1}
  %wboff = mul i32 %warp, {BARRIER_BYTES}
  %wb = getelementptr inbounds i8, ptr %wbs, i32 %wboff
  %mine = getelementptr inbounds i32, ptr %buf, i32 %tid
  store volatile i32 %v, ptr %mine
  %r1 = call i32 @pthread_barrier_wait(ptr %wb)
  %x = xor i32 %lane, %op
  %up = sub i32 %lane, %op
  %upneg = icmp slt i32 %up, 0
  %up2 = select i1 %upneg, i32 %lane, i32 %up
  %dn = add i32 %lane, %op
  %dnbig = icmp sgt i32 %dn, {warp_size - 1}
  %dn2 = select i1 %dnbig, i32 %lane, i32 %dn
  %isx = icmp eq i32 %kind, 0
  %isup = icmp eq i32 %kind, 1
  %isdn = icmp eq i32 %kind, 2
  %s0 = select i1 %isdn, i32 %dn2, i32 %op
  %s1 = select i1 %isup, i32 %up2, i32 %s0
  %src = select i1 %isx, i32 %x, i32 %s1
  %srcm = and i32 %src, {warp_size - 1}
  %base = shl i32 %warp, {warp_size.bit_length() - 1}
  %idx = or i32 %base, %srcm
  %theirs = getelementptr inbounds i32, ptr %buf, i32 %idx
  %got = load volatile i32, ptr %theirs
  %r2 = call i32 @pthread_barrier_wait(ptr %wb)
  ret i32 %got
}}""")


# x86 has no bfloat16 arithmetic: LLVM rounds float to bfloat through compiler-rt helpers, which a JIT-loaded
# object cannot reach. Define them here, from integer operations (round to nearest even, NaN kept quiet).
BF16_HELPERS = """
define bfloat @__truncsfbf2(float %x) nounwind {
  %b = bitcast float %x to i32
  %lsb0 = lshr i32 %b, 16
  %lsb = and i32 %lsb0, 1
  %bias = add i32 %lsb, 32767
  %r = add i32 %b, %bias
  %h = lshr i32 %r, 16
  %isnan = fcmp uno float %x, %x
  %hi0 = lshr i32 %b, 16
  %qnan = or i32 %hi0, 64
  %sel = select i1 %isnan, i32 %qnan, i32 %h
  %t = trunc i32 %sel to i16
  %o = bitcast i16 %t to bfloat
  ret bfloat %o
}

; double -> half through float: may round twice (off by one ulp in rare halfway cases; an emulator's
; tolerance). The conformance suite's data are exact in every float type.
define half @__truncdfhf2(double %x) nounwind {
  %f = fptrunc double %x to float
  %h = fptrunc float %f to half
  ret half %h
}

define bfloat @__truncdfbf2(double %x) nounwind {
  %f = fptrunc double %x to float
  %o = call bfloat @__truncsfbf2(float %f)
  ret bfloat %o
}
"""


def thread_main(module: Module, kernel: str) -> None:
    """``emu_thread(args, rt, tid, n0, n1, n2, smem)``: run every program of the grid as thread ``tid``."""
    module.functions.append(_Raw(f"""define void @{kernel}_thread(ptr %args, ptr %rt, i32 %tid, i32 %n0, i32 %n1, i32 %n2, ptr %smem) nounwind {{
entry:
  %ctx = alloca {CTX}, align 8
  %f0 = getelementptr inbounds {CTX}, ptr %ctx, i32 0, i32 0
  store i32 %tid, ptr %f0
  %f4 = getelementptr inbounds {CTX}, ptr %ctx, i32 0, i32 4
  store i32 %n0, ptr %f4
  %f5 = getelementptr inbounds {CTX}, ptr %ctx, i32 0, i32 5
  store i32 %n1, ptr %f5
  %f6 = getelementptr inbounds {CTX}, ptr %ctx, i32 0, i32 6
  store i32 %n2, ptr %f6
  %f8 = getelementptr inbounds {CTX}, ptr %ctx, i32 0, i32 8
  store ptr %smem, ptr %f8
  %f9 = getelementptr inbounds {CTX}, ptr %ctx, i32 0, i32 9
  store ptr %rt, ptr %f9
  %a = mul i32 %n0, %n1
  %total = mul i32 %a, %n2
  %empty = icmp eq i32 %total, 0
  br i1 %empty, label %done, label %loop
loop:
  %lin = phi i32 [0, %entry], [%next, %loop]
  %p0 = urem i32 %lin, %n0
  %rest = udiv i32 %lin, %n0
  %p1 = urem i32 %rest, %n1
  %p2 = udiv i32 %rest, %n1
  %f1 = getelementptr inbounds {CTX}, ptr %ctx, i32 0, i32 1
  store i32 %p0, ptr %f1
  %f2 = getelementptr inbounds {CTX}, ptr %ctx, i32 0, i32 2
  store i32 %p1, ptr %f2
  %f3 = getelementptr inbounds {CTX}, ptr %ctx, i32 0, i32 3
  store i32 %p2, ptr %f3
  call void @{kernel}_kernel(ptr %args, ptr %ctx)
  call void @emu_barrier(ptr %ctx)
  %next = add i32 %lin, 1
  %more = icmp ult i32 %next, %total
  br i1 %more, label %loop, label %done
done:
  ret void
}}"""))


class _Raw:
    def __init__(self, text: str) -> None:
        self._text = text

    def text(self) -> str:
        return self._text


# -- backend ---------------------------------------------------------------------------------------------
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


def new_host_machine() -> Any:
    """A target machine of the caller's own. An MCJIT engine takes ownership of the one it is given and deletes
    it with itself (llvmlite marks it owned), so every engine needs a fresh one: handing it the shared
    ``host_machine()`` let the first engine collected free the machine that later compiles and engines still
    used (a segfault or "LLVM ERROR: out of memory" after a kernel was recompiled)."""
    import llvmlite.binding as llvm
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    # the host's own features: half conversions then need no compiler-rt helpers. Not the float -> bfloat16
    # instructions (AVX512-BF16, AVX-NE-CONVERT): they flush subnormals to zero, where GPUs and Triton round them
    # exactly; without them LLVM calls __truncsfbf2, defined above with exact rounding.
    features = llvm.get_host_cpu_features().flatten() + ",-avx512bf16,-avxneconvert"
    # MCJIT maps an object's code and constants separately: once large arrays fragment the address space they can
    # land over 2 GiB apart, past the small code model's 32-bit PC-relative reach, and LLVM's loader aborts the
    # process. On x86-64 the large model reaches them with 64-bit absolutes, as static relocations: the objects
    # are never given to a system linker, and large PIC's GOT relocations are what MCJIT got wrong in the CPU
    # backend's engine (right for the first object it loaded, garbage constants for the next).
    large = llvm.get_default_triple().startswith("x86_64")
    return llvm.Target.from_default_triple().create_target_machine(
        cpu=llvm.get_host_cpu_name(), features=features, opt=1, reloc="static" if large else "pic",
        codemodel="large" if large else "default")


@functools.lru_cache(maxsize=None)
def host_machine() -> Any:
    """The process's machine for emitting objects; never give it to an engine (see ``new_host_machine``)."""
    return new_host_machine()


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


# -- driver ----------------------------------------------------------------------------------------------
_THREAD = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32,
                           ctypes.c_int32, ctypes.c_void_p)


class EmulatedAssertionError(AssertionError):
    pass


class EmulatorLauncher:
    def __init__(self, kernel: Any, engine: Any) -> None:
        md = kernel.metadata_dict
        # the kernel holds its launcher: keep only its name, so that no cycle delays freeing the engine until the
        # cyclic collector runs (each engine holds the kernel's code and a target machine)
        self.name, self.engine = kernel.name, engine
        self.fn = _THREAD(engine.get_function_address(f"{kernel.name}_thread"))
        self.types = md["arg_types"]
        self.num_warps = md["num_warps"]
        self.warp_size = md.get("warp_size", 32)
        self.num_ctas = int(md.get("num_ctas", 1) or 1)
        self.shared = max(16, md["shared"])
        self.state = engine.get_global_value_address(f"{kernel.name}_assert_state") if md.get("has_assert") else 0
        self.messages = md.get("assert_messages", [])
        # Triton's _init_handles figures (tutorials size persistent grids from them). The emulator's threads run on
        # host registers, so n_regs is the lowering's estimate from the layouts (gpu/lower/regs.py), capped as a
        # GPU register allocator must: at most MAX_REGS_PER_THREAD, and few enough that one program of
        # num_warps warps fits in a multiprocessor's MAX_NUM_REGS; the words over the cap are reported as spills.
        threads = self.num_warps * self.warp_size
        estimate = max(1, int(md.get("regs_estimate", 0) or 0))
        kernel.n_regs = min(estimate, MAX_REGS_PER_THREAD, MAX_NUM_REGS // threads)
        kernel.n_spills = estimate - kernel.n_regs
        kernel.n_max_threads = threads

    def __call__(self, grid: tuple[int, int, int], args: list[Any]) -> None:
        slots = (ctypes.c_uint64 * max(1, len(args)))(*[_pack(t, a, self.name) for t, a in zip(self.types, args)])
        threads = self.num_warps * self.warp_size
        libc = _libc()
        cta = ctypes.create_string_buffer(BARRIER_BYTES)
        warps = ctypes.create_string_buffer(BARRIER_BYTES * self.num_warps)
        libc.pthread_barrier_init(cta, None, threads)
        for w in range(self.num_warps):
            libc.pthread_barrier_init(ctypes.byref(warps, w * BARRIER_BYTES), None, self.warp_size)
        shfl = (ctypes.c_int32 * threads)()
        smem = ctypes.create_string_buffer(self.shared + 64)
        smem_addr = (ctypes.addressof(smem) + 63) // 64 * 64
        rt = (ctypes.c_void_p * 3)(ctypes.addressof(cta), ctypes.addressof(warps), ctypes.addressof(shfl))
        workers = [threading.Thread(target=self.fn, args=(ctypes.addressof(slots), ctypes.addressof(rt), t,
                                                          grid[0] * self.num_ctas, grid[1], grid[2], smem_addr))
                   for t in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        libc.pthread_barrier_destroy(cta)
        for w in range(self.num_warps):
            libc.pthread_barrier_destroy(ctypes.byref(warps, w * BARRIER_BYTES))
        libc.fflush(None)
        failed = emulator_libdevice.take_error()
        if failed is not None:
            raise RuntimeError(f"kernel `{self.name}`: a libdevice function failed on the emulator: "
                               f"{type(failed).__name__}: {failed}") from failed
        if self.state:
            st = (ctypes.c_int32 * 6).from_address(self.state)
            if st[0]:
                msg = self.messages[st[4]] if 0 <= st[4] < len(self.messages) else "assertion failed"
                pid = (st[1], st[2], st[3])
                ctypes.memset(self.state, 0, 24)
                raise EmulatedAssertionError(f"device_assert failed in kernel `{self.name}` at {msg} "
                                             f"(program id {pid}, element {st[5]})")


@functools.lru_cache(maxsize=None)
def _libc() -> Any:
    return ctypes.CDLL(None)


def _pack(t: str, v: Any, kernel: str) -> int:
    if t.startswith("ptr"):
        return int(v)
    if t == "float":
        return struct.unpack("<I", struct.pack("<f", v))[0]
    if t == "double":
        return struct.unpack("<Q", struct.pack("<d", v))[0]
    return int(v) & ((1 << 64) - 1)


class EmulatorDriver(DriverBase):
    @classmethod
    def is_active(cls) -> bool:
        return True

    def get_current_target(self) -> GPUTarget:
        return GPUTarget(NAME, "host", 32)

    def get_current_device(self) -> int:
        return 0

    def accepts_device(self, device: str) -> bool:
        return device in ("cpu", "mock")

    @property
    def utils(self) -> "EmulatorUtils":
        return EmulatorUtils()

    def make_launcher(self, kernel: Any) -> EmulatorLauncher:
        import llvmlite.binding as llvm
        emulator_link.load_symbols()
        emulator_libdevice.register(kernel.metadata_dict.get("emu_libdevice", []))
        emulator_link.check_symbols(kernel.name, kernel.kernel)
        # the engine (its code, and the machine it owns) is freed with the launcher, i.e. with the kernel
        engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), new_host_machine())
        engine.add_object_file(llvm.ObjectFileRef.from_data(kernel.kernel))
        engine.finalize_object()
        return EmulatorLauncher(kernel, engine)


class EmulatorUtils(DeviceUtils):
    """The emulated device: one multiprocessor (programs run one after another, each on num_warps * 32 host
    threads), the shared memory the target allows, and a GPU-sized register file."""

    def get_device_properties(self, device: Any = None) -> dict[str, Any]:
        return {"multiprocessor_count": 1, "max_shared_mem": EmulatorTarget.max_shared_bytes,
                "max_num_regs": MAX_NUM_REGS, "warpSize": EmulatorTarget.warp_size}


@hookimpl
def tritium_backends() -> list[BackendSpec]:
    return [BackendSpec(name=NAME, compiler="tritium.gpu.emulator:EmulatorBackend",
                        driver="tritium.gpu.emulator:EmulatorDriver",
                        description="the GPU lowering run on host threads (for tests)",
                        capabilities=EmulatorBackend.capabilities, priority=-10)]


_unused: Optional[Any] = None
