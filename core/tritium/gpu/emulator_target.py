"""The GPU emulator's target: the hooks by which the GPU lowering's IR runs on host threads (every GPU thread an
OS thread, barriers pthread barriers, warp shuffles through a per-warp buffer), the IR of that runtime and of
each thread's loop over the grid, and the host target machine the objects are emitted for. emulator.py is the
backend and plugin; emulator_driver.py launches the objects.
"""
from __future__ import annotations

import functools
from typing import Any

from ..llvmir.text import Function, Module
from . import emulator_libdevice
from .target import TargetHooks

NAME = "gpu-emu"
CTX = "{ i32, i32, i32, i32, i32, i32, i32, i32, ptr, ptr }"   # tid, ctaid xyz, nctaid xyz, pad, smem, runtime
RT = "{ ptr, ptr, ptr }"                                      # CTA barrier, warp barriers, shuffle buffer
BARRIER_BYTES = 64                                            # >= sizeof(pthread_barrier_t)


class EmulatorTarget(TargetHooks):
    safe_int_div = True
    max_shared_bytes = 1 << 20
    #: tl.inline_asm_elementwise is GPU assembly; the emulator's code runs on the host CPU
    runs_inline_asm = False
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

    # barriers per stage (gpu/lower/pipeline_decoupled.py): word 0 the arrivals of a phase, word 1 the arrivals so
    # far, which only grows (phase k completes at (k + 1) * arrivals: no reset that a next phase's arrival could
    # race); the copies have landed when they return (async_copy copies right away), so an arrival is immediate
    decoupled_stage_warps = 0          # tests turn it on (monkeypatch): the attribute is not in the cache key

    def stage_barrier_init(self, fn: Function, bar: str, arrivals: int) -> None:
        fn.emit(f"store i32 {arrivals}, ptr {bar}, align 8")
        so_far = fn.inst(f"getelementptr inbounds i32, ptr {bar}, i32 1")
        fn.emit(f"store atomic i32 0, ptr {so_far} release, align 4")

    def stage_arrive(self, fn: Function, bar: str) -> None:
        so_far = fn.inst(f"getelementptr inbounds i32, ptr {bar}, i32 1")
        fn.inst(f"atomicrmw add ptr {so_far}, i32 1 acq_rel, align 4")

    def stage_wait(self, fn: Function, bar: str, parity: str) -> None:
        fn.emit(f"call void @emu_stage_wait(ptr {bar}, i32 {parity})")

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
    module.declare("sched_yield", "declare i32 @sched_yield()")
    module.declare("emu_stage_wait", """define internal void @emu_stage_wait(ptr %bar, i32 %parity) nounwind {
entry:
  %n = load atomic i32, ptr %bar monotonic, align 8
  %w1 = getelementptr inbounds i32, ptr %bar, i32 1
  br label %spin
spin:
  %got = load atomic i32, ptr %w1 acquire, align 4
  %ph = udiv i32 %got, %n
  %bit = and i32 %ph, 1
  %done = icmp ne i32 %bit, %parity
  br i1 %done, label %out, label %yield
yield:
  %y = call i32 @sched_yield()
  br label %spin
out:
  ret void
}""")
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
    module.functions.append(_RawFunction(f"""define void @{kernel}_thread(ptr %args, ptr %rt, i32 %tid, i32 %n0, i32 %n1, i32 %n2, ptr %smem) nounwind {{
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


class _RawFunction:
    """A function written as LLVM IR text, among the Function builders of a Module."""

    def __init__(self, text: str) -> None:
        self._text = text

    def text(self) -> str:
        return self._text


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
