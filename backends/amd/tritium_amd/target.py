"""What the portable GPU lowering needs to know about AMD GPUs: AMDGPU intrinsics for work-item and workgroup ids,
``s_barrier`` between workgroup fences, DPP and ``ds_bpermute`` for cross-lane moves, LDS (address space 3) for
shared memory, global memory (address space 1) for pointers, LLVM's own AMDGPU lowering of math intrinsics.

No ROCm device library is linked (no ``__ocml_*``/``__ockl_*``): every call the IR makes is an LLVM intrinsic that
the AMDGPU code generator expands in place, or tritium's own IR. Functions with neither (AMDGPU has no double
precision ``exp``; LLVM would only print "no libcall available" and carry on) are refused at compile time with
the function's name, rather than left as a symbol the code object cannot resolve.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from tritium.llvmir.text import Function, Module
from tritium.llvmir.types import const
from tritium.gpu.lower.values import LoweringError
from tritium.gpu.target import TargetHooks

from .chips import Chip

TRIPLE = "amdgcn-amd-amdhsa"
#: HSA dispatch packet: grid_size_x/y/z (work-items) are u32 at these byte offsets
GRID_SIZE_OFFSET = 12
#: f32 functions that AMDGPU lowers in place (v_exp_f32, v_log_f32, v_sin_f32 ... with LLVM's range handling)
NATIVE_F32 = {"math.exp", "math.exp2", "math.log", "math.log2", "math.sin", "math.cos", "math.exp10",
              "math.log10", "math.sqrt", "tt.precise_sqrt"}
TRANSCENDENTAL = NATIVE_F32 | {"math.tan"} | {f"libm.{n}" for n in (
    "erf", "erfc", "tanh", "atan", "asin", "acos", "sinh", "cosh", "log1p", "expm1", "cbrt", "asinh", "acosh",
    "atanh", "pow", "atan2")}
#: quad_perm DPP controls that are lane ^ 1 and lane ^ 2 (four 2-bit source lanes, lowest first)
DPP_XOR = {1: 0xB1, 2: 0x4E}


class AmdTarget(TargetHooks):
    triple = TRIPLE
    global_ptr = "ptr addrspace(1)"
    shared_ptr = "ptr addrspace(3)"
    global_addrspace = 1

    def __init__(self, chip: Chip, options: Any, datalayout: str) -> None:
        self.chip = chip
        self.options = options
        self.datalayout = datalayout
        self.warp_size = options.warp_size
        self.max_shared_bytes = chip.lds_bytes
        self._ids: dict[tuple[int, str], str] = {}
        self._num_warps = 4

    def policy(self, num_warps: int) -> Any:
        from .mfma import AmdPolicy
        return AmdPolicy(num_warps, self.warp_size, self.chip, self.options)

    # -- the kernel ----------------------------------------------------------------------------------------
    def kernel_function(self, module: Module, name: str, params: list[str], num_warps: int) -> tuple[Function, list[str]]:
        self._module, self._name, self._num_warps = module, name, num_warps
        # booleans travel as bytes: the kernarg layout stays what the launcher packs
        kparams = ["i8" if t == "i1" else t for t in params]
        fn = Function(name, "void", [(t, f"%arg{i}") for i, t in enumerate(kparams)], attrs="#0",
                      cc="amdgpu_kernel")
        names = [fn.pinst(f"trunc i8 %arg{i} to i1") if t == "i1" else f"%arg{i}" for i, t in enumerate(params)]
        return fn, names

    def finish_kernel(self, module: Module, fn: Function, num_warps: int, shared_bytes: int) -> None:
        # the shared memory is static LDS: its size is in the kernel descriptor, so nothing is passed at launch
        module.globals.append(f"@global_smem = internal addrspace(3) global [{max(shared_bytes, 4)} x i8] undef, "
                              "align 16")
        threads = num_warps * self.warp_size
        attrs = [f'"amdgpu-flat-work-group-size"="1,{threads}"', '"uniform-work-group-size"="true"']
        waves = getattr(self.options, "waves_per_eu", 0)
        if waves:
            attrs.append(f'"amdgpu-waves-per-eu"="{int(waves)},{int(waves)}"')
        module.extra.append(f"attributes #0 = {{ nounwind {' '.join(attrs)} }}")

    # -- identity ------------------------------------------------------------------------------------------
    def _once(self, fn: Function, key: str, make: Callable[[], str]) -> str:
        k = (id(fn), key)
        got = self._ids.get(k)
        if got is None:
            got = self._ids[k] = make()
        return got

    def thread_id(self, fn: Function) -> str:
        intr = "llvm.amdgcn.workitem.id.x"
        self._module.intrinsic(intr, "i32", [], "nounwind readnone speculatable")
        return self._once(fn, "tid", lambda: fn.pinst(f"call i32 @{intr}()", "tid"))

    def program_id(self, fn: Function, axis: int) -> str:
        intr = f"llvm.amdgcn.workgroup.id.{'xyz'[axis]}"
        self._module.intrinsic(intr, "i32", [], "nounwind readnone speculatable")
        return self._once(fn, intr, lambda: fn.pinst(f"call i32 @{intr}()", "pid"))

    def num_programs(self, fn: Function, axis: int) -> str:
        # HSA's dispatch packet holds the grid in work-items; workgroups are (threads, 1, 1)
        intr = "llvm.amdgcn.dispatch.ptr"
        self._module.intrinsic(intr, "ptr addrspace(4)", [], "nounwind readnone speculatable")

        def make() -> str:
            packet = self._once(fn, "dispatch", lambda: fn.pinst(f"call ptr addrspace(4) @{intr}()"))
            p = fn.pinst(f"getelementptr inbounds i8, ptr addrspace(4) {packet}, i64 {GRID_SIZE_OFFSET + 4 * axis}")
            items = fn.pinst(f"load i32, ptr addrspace(4) {p}, align 4, !invariant.load !{{}}")
            if axis:
                return items
            return fn.pinst(f"udiv i32 {items}, {self._num_warps * self.warp_size}")
        return self._once(fn, f"nprog{axis}", make)

    # -- synchronization -----------------------------------------------------------------------------------
    def barrier(self, fn: Function) -> None:
        # s_barrier alone orders execution, not LDS traffic: the fences make the writes before it visible after
        self._module.intrinsic("llvm.amdgcn.s.barrier", "void", [], "convergent nounwind")
        fn.emit('fence syncscope("workgroup") release')
        fn.emit("call void @llvm.amdgcn.s.barrier()")
        fn.emit('fence syncscope("workgroup") acquire')

    def _lane(self, fn: Function) -> str:
        tid = self.thread_id(fn)
        return self._once(fn, "lane", lambda: fn.pinst(f"and i32 {tid}, {self.warp_size - 1}", "lane"))

    def shuffle_i32(self, fn: Function, kind: str, value: str, operand: str) -> str:
        m = self._module
        if kind == "xor" and operand.isdigit() and int(operand) in DPP_XOR:
            intr = "llvm.amdgcn.update.dpp.i32"
            m.intrinsic(intr, "i32", ["i32", "i32", "i32 immarg", "i32 immarg", "i32 immarg", "i1 immarg"],
                        "convergent nounwind readnone")
            return fn.inst(f"call i32 @{intr}(i32 poison, i32 {value}, i32 {DPP_XOR[int(operand)]}, i32 15, "
                           "i32 15, i1 true)")
        lane = self._lane(fn)
        if kind == "xor":
            src = fn.inst(f"xor i32 {lane}, {operand}")
        elif kind == "idx":
            src = operand
        elif kind == "up":
            d = fn.inst(f"sub i32 {lane}, {operand}")
            neg = fn.inst(f"icmp slt i32 {d}, 0")
            src = fn.inst(f"select i1 {neg}, i32 {lane}, i32 {d}")
        else:
            d = fn.inst(f"add i32 {lane}, {operand}")
            big = fn.inst(f"icmp sge i32 {d}, {self.warp_size}")
            src = fn.inst(f"select i1 {big}, i32 {lane}, i32 {d}")
        # ds_bpermute addresses lanes in bytes, modulo the wave
        addr = fn.inst(f"shl i32 {src}, 2")
        intr = "llvm.amdgcn.ds.bpermute"
        m.intrinsic(intr, "i32", ["i32", "i32"], "convergent nounwind readnone")
        return fn.inst(f"call i32 @{intr}(i32 {addr}, i32 {value})")

    def shared_base(self, fn: Function) -> str:
        return "@global_smem"

    def syncscope(self, scope: str) -> str:
        # Triton's scopes: "gpu" is the device (HSA agent), "cta" the workgroup, "sys" the whole system
        return {"gpu": 'syncscope("agent") ', "cta": 'syncscope("workgroup") '}.get(scope, "")

    # -- math ------------------------------------------------------------------------------------------------
    def math(self, fn: Function, module: Module, name: str, args: list[str], ty: str) -> Optional[str]:
        if name not in TRANSCENDENTAL:
            return None
        if ty in ("half", "bfloat") and name not in NATIVE_F32 - {"math.sqrt", "tt.precise_sqrt"}:
            wide = [fn.inst(f"fpext {ty} {a} to float") for a in args]
            r = self.math(fn, module, name, wide, "float")
            return None if r is None else fn.inst(f"fptrunc float {r} to {ty}")
        if ty == "double" and name in ("math.sqrt", "tt.precise_sqrt"):
            return None
        if ty == "float":
            if name in NATIVE_F32:
                return None
            own = _F32.get(name)
            if own is not None:
                return own(fn, module, args)
        raise LoweringError(
            f"kernel `{self._name}`: tritium-amd has no device code for {name.split('.', 1)[1]} on {ty} (AMDGPU has "
            "no such instruction and tritium-amd links no ROCm device library); compute it in float32 with "
            "exp/log/sin/cos/sqrt, or run this kernel on another backend")

    # -- what AMD code cannot do without ROCm's device libraries ---------------------------------------------
    def extern_call(self, fn: Function, module: Module, symbol: str, libpath: str, args: list[tuple[str, str]],
                    ret: str) -> str:
        raise LoweringError(f"kernel `{self._name}` calls external function {symbol} (from {libpath or 'libdevice'}):"
                            " tritium-amd links no device library (ROCm's ocml/ockl), so extern_elementwise calls "
                            "cannot be resolved; use tl.math functions instead")

    def printf(self, fn: Function, module: Module, fmt: str, args: list[tuple[str, str]]) -> None:
        if "Assertion `" in fmt:
            # device_assert records its failure in the kernel's assert state, which the launcher reports; only
            # the line it would also print is dropped
            return
        raise LoweringError(f"kernel `{self._name}` uses device_print: AMD device printf goes through ROCm's "
                            "hostcall buffer (device library ockl and the HIP runtime's printf service), which "
                            "tritium-amd does not link; remove the print, or debug the kernel on the CPU backend or "
                            "with TRITON_INTERPRET=1")

    def mfma(self, fn: Function, module: Module, kind: Any, a: list[str], b: list[str], c: list[str]) -> list[str]:
        """One matrix-core instruction (see :mod:`.mfma`): this lane's A and B elements and 4 accumulators."""
        from .mfma import emit_mfma
        return emit_mfma(fn, module, kind, a, b, c)

    def dot_strategy(self, kind: str) -> Optional[Callable[..., Any]]:
        if kind.startswith("mfma"):
            from .mfma import lower_mfma_dot
            return lower_mfma_dot
        return None


# -- float32 functions built from the native ones -----------------------------------------------------------
def _call(fn: Function, module: Module, intr: str, *xs: str) -> str:
    module.intrinsic(f"llvm.{intr}.f32", "float", ["float"] * len(xs))
    return fn.inst(f"call float @llvm.{intr}.f32({', '.join('float ' + x for x in xs)})")


def _tan(fn: Function, module: Module, args: list[str]) -> str:
    s = _call(fn, module, "sin", args[0])
    c = _call(fn, module, "cos", args[0])
    return fn.inst(f"fdiv float {s}, {c}")


def _odd_series(fn: Function, x: str, coefs: tuple[float, ...]) -> str:
    """x * (c0 + x^2 (c1 + x^2 (...))): the small-argument branch where exp-based forms cancel."""
    x2 = fn.inst(f"fmul float {x}, {x}")
    acc = const("float", coefs[-1])
    for c in reversed(coefs[:-1]):
        acc = fn.inst(f"fmul float {acc}, {x2}")
        acc = fn.inst(f"fadd float {acc}, {const('float', c)}")
    return fn.inst(f"fmul float {acc}, {x}")


def _tanh(fn: Function, module: Module, args: list[str]) -> str:
    x = args[0]
    ax = _call(fn, module, "fabs", x)
    # |x| >= 0.25: 1 - 2 / (exp(2|x|) + 1), exact at the saturation ends; below, the series to x^9 (< 1e-8 rel.)
    e = _call(fn, module, "exp", fn.inst(f"fmul float {ax}, 2.0"))
    q = fn.inst(f"fdiv float 2.0, {fn.inst(f'fadd float {e}, 1.0')}")
    big = fn.inst(f"fsub float 1.0, {q}")
    module.intrinsic("llvm.copysign.f32", "float", ["float", "float"])
    big = fn.inst(f"call float @llvm.copysign.f32(float {big}, float {x})")
    small = _odd_series(fn, x, (1.0, -1 / 3, 2 / 15, -17 / 315, 62 / 2835))
    cond = fn.inst(f"fcmp olt float {ax}, 0.25")
    return fn.inst(f"select i1 {cond}, float {small}, float {big}")


def _sinh(fn: Function, module: Module, args: list[str]) -> str:
    x = args[0]
    ax = _call(fn, module, "fabs", x)
    e = _call(fn, module, "exp", ax)
    inv = fn.inst(f"fdiv float 1.0, {e}")
    big = fn.inst(f"fmul float {fn.inst(f'fsub float {e}, {inv}')}, 0.5")
    module.intrinsic("llvm.copysign.f32", "float", ["float", "float"])
    big = fn.inst(f"call float @llvm.copysign.f32(float {big}, float {x})")
    small = _odd_series(fn, x, (1.0, 1 / 6, 1 / 120, 1 / 5040, 1 / 362880))
    cond = fn.inst(f"fcmp olt float {ax}, 0.25")
    return fn.inst(f"select i1 {cond}, float {small}, float {big}")


def _cosh(fn: Function, module: Module, args: list[str]) -> str:
    e = _call(fn, module, "exp", _call(fn, module, "fabs", args[0]))
    inv = fn.inst(f"fdiv float 1.0, {e}")
    return fn.inst(f"fmul float {fn.inst(f'fadd float {e}, {inv}')}, 0.5")


# erf's two polynomials are the CPU backend's (tritium_cpu/codegen/mathlib.py, minimax fits): erf(a) = a + a * P(a^2)
# below 0.875, 1 - exp(Q(a)) up to 3.9375 (log erfc is smooth where erfc falls off too fast), then 1
_ERF_SMALL = tuple(float.fromhex(h) for h in (
    "0x1.06eba6p-3", "-0x1.81270ap-2", "0x1.ce2100p-4", "-0x1.b6f18ep-6", "0x1.49bcd8p-8", "-0x1.44fe52p-11"))
_ERF_BIG = tuple(float.fromhex(h) for h in (
    "0x1.567776p-13", "-0x1.212446p+0", "-0x1.4454cap-1", "-0x1.bb013ep-4", "0x1.9a3a92p-6", "-0x1.0f53ecp-8",
    "0x1.c0d8c8p-12", "-0x1.589630p-16"))


def _horner(fn: Function, module: Module, x: str, coefs: tuple[float, ...]) -> str:
    module.intrinsic("llvm.fma.f32", "float", ["float", "float", "float"])
    acc = const("float", coefs[-1])
    for c in reversed(coefs[:-1]):
        acc = fn.inst(f"call float @llvm.fma.f32(float {acc}, float {x}, float {const('float', c)})")
    return acc


def _erf(fn: Function, module: Module, args: list[str]) -> str:
    x = args[0]
    a = _call(fn, module, "fabs", x)
    small = _horner(fn, module, fn.inst(f"fmul float {a}, {a}"), _ERF_SMALL)
    small = fn.inst(f"call float @llvm.fma.f32(float {a}, float {small}, float {a})")
    big = fn.inst(f"fsub float 1.0, {_call(fn, module, 'exp', _horner(fn, module, a, _ERF_BIG))}")
    y = fn.inst(f"select i1 {fn.inst(f'fcmp olt float {a}, 0.875')}, float {small}, float {big}")
    y = fn.inst(f"select i1 {fn.inst(f'fcmp oge float {a}, 3.9375')}, float 1.0, float {y}")
    module.intrinsic("llvm.copysign.f32", "float", ["float", "float"])
    return fn.inst(f"call float @llvm.copysign.f32(float {y}, float {x})")


_F32: dict[str, Callable[[Function, Module, list[str]], str]] = {
    "math.tan": _tan, "libm.tanh": _tanh, "libm.sinh": _sinh, "libm.cosh": _cosh, "libm.erf": _erf}
