"""What the portable GPU lowering needs to know about NVIDIA GPUs: NVVM intrinsics for thread identity,
barriers and shuffles; predicated PTX loads and stores (inline asm, as Triton does, so masked vector
accesses need no branches); fast math as Triton chooses it (``ex2.approx`` for ``exp``, approximate
fp32 ``/``) and libdevice for the precise functions; ``vprintf`` for ``device_print``.

Why LLVM IR text rather than MLIR's nvvm/nvgpu dialects: the tile IR's layouts are ours, so the
distribution of every op over threads is done in Python anyway; writing LLVM IR directly keeps one
lowering for all GPU targets (with these hooks as the only vendor code) and lets llvmlite's NVPTX backend
do register allocation and instruction selection. Tensor-core instructions missing from NVVM intrinsics
are inline PTX (see :mod:`.mma`).
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from tritium.llvmir.text import Function, Module
from tritium.llvmir.types import const

# the word packing of inline-asm loads and stores, and the TMA hooks, live in their own modules; their names
# stay importable from here
from . import atomics
from .ptx_words import _evict, _from_words, _to_words, _words  # noqa: F401
from .target_stages import StageBarrierHooks
from .target_tma import TmaHooks

TRIPLE = "nvptx64-nvidia-cuda"
SREG = {"tid": "tid", "ctaid": "ctaid", "nctaid": "nctaid"}
LOG2E = 1.4426950408889634
LN2 = 0.6931471805599453
#: f32 functions Triton computes with libdevice, by math op
LIBDEVICE_F32 = {"math.sin": "sinf", "math.cos": "cosf", "math.tan": "tanf", "math.log10": "log10f",
                 "math.exp10": "exp10f", "libm.erf": "erff", "libm.tanh": "tanhf", "libm.atan": "atanf",
                 "libm.asin": "asinf", "libm.acos": "acosf", "libm.sinh": "sinhf", "libm.cosh": "coshf",
                 "libm.log1p": "log1pf", "libm.expm1": "expm1f", "libm.cbrt": "cbrtf", "libm.pow": "powf",
                 "libm.atan2": "atan2f", "libm.asinh": "asinhf", "libm.acosh": "acoshf", "libm.atanh": "atanhf",
                 "libm.erfc": "erfcf"}
LIBDEVICE_F64 = {"math.exp": "exp", "math.exp2": "exp2", "math.log": "log", "math.log2": "log2", "math.sin": "sin",
                 "math.cos": "cos", "math.tan": "tan", "math.log10": "log10", "math.exp10": "exp10",
                 "libm.erf": "erf", "libm.tanh": "tanh", "libm.atan": "atan", "libm.asin": "asin",
                 "libm.acos": "acos", "libm.sinh": "sinh", "libm.cosh": "cosh", "libm.log1p": "log1p",
                 "libm.expm1": "expm1", "libm.cbrt": "cbrt", "libm.pow": "pow", "libm.atan2": "atan2",
                 "libm.asinh": "asinh", "libm.acosh": "acosh", "libm.atanh": "atanh", "libm.erfc": "erfc"}
FAST_F32 = {"math.exp", "math.exp2", "math.log", "math.log2", "math.sqrt", "math.rsqrt"}
HALF_UPCAST = set(FAST_F32) | set(LIBDEVICE_F32)
SHARED_LIMITS = {80: 163 * 1024, 86: 99 * 1024, 87: 163 * 1024, 89: 99 * 1024, 90: 227 * 1024}


class NvidiaTarget(TmaHooks, StageBarrierHooks):
    warp_size = 32
    triple = TRIPLE
    global_ptr = "ptr addrspace(1)"
    shared_ptr = "ptr addrspace(3)"
    global_addrspace = 1
    # .file/.loc directives only: LineTablesOnly would also write DWARF sections and mark the PTX
    # `.target sm_XX, debug`, which makes ptxas build an unoptimized debug cubin; ptxas -lineinfo makes the
    # cubin's line table from the directives
    line_table_kind = "DebugDirectivesOnly"

    def __init__(self, capability: int, options: Any, datalayout: str) -> None:
        self.capability = capability
        self.options = options
        self.datalayout = datalayout
        self.max_shared_bytes = SHARED_LIMITS.get(capability, 99 * 1024 if capability < 90 else 227 * 1024)
        self.uses_libdevice = False
        self._sregs: dict[tuple[int, str], str] = {}
        # sm_90's thread-block clusters: 8 CTAs is the portable limit (16 needs a non-portable opt-in)
        self.max_cluster_ctas = 8 if capability >= 90 else 1
        self.num_ctas = int(getattr(options, "num_ctas", 1) or 1)

    def policy(self, num_warps: int) -> Any:
        from .mma import NvidiaPolicy
        return NvidiaPolicy(num_warps, self.warp_size, self.capability, self.options)

    # -- the kernel ----------------------------------------------------------------------------------------
    def kernel_function(self, module: Module, name: str, params: list[str], num_warps: int) -> tuple[Function, list[str]]:
        self._module = module
        self._param_maps: list[dict] = []
        # PTX has no predicate parameters: booleans travel as bytes
        kparams = ["i8" if t == "i1" else t for t in params]
        fn = Function(name, "void", [(t, f"%arg{i}") for i, t in enumerate(kparams)], attrs="#0", cc="ptx_kernel")
        names = []
        for i, t in enumerate(params):
            names.append(fn.pinst(f"trunc i8 %arg{i} to i1") if t == "i1" else f"%arg{i}")
        return fn, names

    def finish_kernel(self, module: Module, fn: Function, num_warps: int, shared_bytes: int) -> None:
        module.declare("global_smem", "@global_smem = external addrspace(3) global [0 x i8], align 16")
        from .warp_roles import finish_roles
        threads = num_warps * self.warp_size + finish_roles(self, module, fn)    # producer warps (none by default)
        attrs = [f'"nvvm.maxntid"="{threads}"']
        maxnreg = getattr(self.options, "maxnreg", None)
        if maxnreg:
            attrs.append(f'"nvvm.maxnreg"="{int(maxnreg)}"')
        if self.num_ctas > 1:   # .explicitcluster .reqnctapercluster: cuLaunchKernel then launches clusters
            attrs.append(f'"nvvm.cluster_dim"="{self.num_ctas},1,1"')
        module.extra.append(f"attributes #0 = {{ nounwind {' '.join(attrs)} }}")

    # -- identity ------------------------------------------------------------------------------------------
    def _sreg(self, fn: Function, name: str, axis: str) -> str:
        key = (id(fn), f"{name}.{axis}")
        got = self._sregs.get(key)
        if got is None:
            intr = f"llvm.nvvm.read.ptx.sreg.{name}.{axis}"
            self._module.intrinsic(intr, "i32", [], "nounwind readnone")
            got = self._sregs[key] = fn.pinst(f"call i32 @{intr}()", name)
        return got

    def thread_id(self, fn: Function) -> str:
        return self._sreg(fn, "tid", "x")

    def uniform_warp(self, fn: Function, tid: str, num_warps: int) -> str:
        # lane 0's warp index, as Triton 3.6 computes its warp id: ptxas then knows it is warp-uniform and keeps
        # what follows from it (a warpgroup's wgmma descriptors) in uniform registers: without it each descriptor
        # went through R2UR, 8 of them per K step in a 128x128x64 matmul
        from .knobs import nvidia
        warp = fn.pinst(f"lshr i32 {tid}, 5", "warp")
        if not nvidia.uniform_warp:
            return warp
        intr = "llvm.nvvm.shfl.sync.idx.i32"
        self._module.intrinsic(intr, "i32", ["i32", "i32", "i32", "i32"], "convergent nounwind")
        return fn.pinst(f"call range(i32 0, {max(num_warps, 1)}) i32 @{intr}(i32 -1, i32 {warp}, i32 0, i32 31)",
                        "warp")

    def program_id(self, fn: Function, axis: int) -> str:
        # a program is a cluster when num_ctas > 1 (Triton: %clusterid)
        return self._sreg(fn, "clusterid" if self.num_ctas > 1 else "ctaid", "xyz"[axis])

    def num_programs(self, fn: Function, axis: int) -> str:
        return self._sreg(fn, "nclusterid" if self.num_ctas > 1 else "nctaid", "xyz"[axis])

    def cluster_rank(self, fn: Function) -> str:
        return self._sreg(fn, "cluster", "ctarank")   # %cluster_ctarank

    def barrier(self, fn: Function) -> None:
        self._module.intrinsic("llvm.nvvm.barrier0", "void", [], "convergent nounwind")
        fn.emit("call void @llvm.nvvm.barrier0()")

    def shuffle_i32(self, fn: Function, kind: str, value: str, operand: str) -> str:
        mode = {"xor": "bfly", "up": "up", "down": "down", "idx": "idx"}[kind]
        intr = f"llvm.nvvm.shfl.sync.{mode}.i32"
        self._module.intrinsic(intr, "i32", ["i32", "i32", "i32", "i32"], "convergent nounwind")
        clamp = 0 if kind == "up" else 31
        return fn.inst(f"call i32 @{intr}(i32 -1, i32 {value}, i32 {operand}, i32 {clamp})")

    def shared_base(self, fn: Function) -> str:
        return "@global_smem"

    def syncscope(self, scope: str) -> str:
        return {"gpu": 'syncscope("device") ', "cta": 'syncscope("block") '}.get(scope, "")

    def atomic_rmw(self, fn: Function, module: Module, kind: str, ptr: str, elem: str, value: str,
                   pred: Optional[str], sem: str, scope: str) -> str:
        return atomics.atomic_rmw(fn, self.global_ptr, self.capability, kind, ptr, elem, value, pred, sem, scope,
                                  self.syncscope)

    def atomic_cas(self, fn: Function, module: Module, ptr: str, elem: str, cmp: str, value: str,
                   pred: Optional[str], sem: str, scope: str) -> str:
        old = atomics.atomic_cas(fn, self.global_ptr, self.capability, ptr, elem, cmp, value, pred, sem, scope)
        return old if old is not None else super().atomic_cas(fn, module, ptr, elem, cmp, value, pred, sem, scope)

    # -- global memory ---------------------------------------------------------------------------------------
    def load(self, fn: Function, module: Module, ptr: str, elem: str, vec: int, align: int, pred: Optional[str],
             other: Optional[list[str]], cache: str = "", evict: str = "", volatile: bool = False) -> list[str]:
        if (pred is None or pred == "true") and not cache and not evict and not volatile:
            return super().load(fn, module, ptr, elem, vec, align, None, None)
        words, wty, cons, bits = _words(elem, vec)
        mods = (".volatile" if volatile else "") + (cache if cache and not volatile else "") + \
            _evict(evict, cache or (".volatile" if volatile else ""))
        v = f".v{len(words)}" if len(words) > 1 else ""
        outs = ", ".join(f"${i}" for i in range(len(words)))
        n = len(words)
        other = other if other is not None else [const(elem, 0)] * vec
        owords = _to_words(fn, other, elem, wty, n)
        if pred is None or pred == "true":
            asm = f"ld.global{mods}{v}.b{bits} {{{outs}}}, [${n}];" if n > 1 else f"ld.global{mods}.b{bits} $0, [$1];"
            constraint = ",".join([f"={cons}"] * n + ["l"])
            args = [f"{self.global_ptr} {ptr}"]
        else:
            body = f"{{{outs}}}" if n > 1 else "$0"
            asm = f"@${n + 1} ld.global{mods}{v}.b{bits} {body}, [${n}];"
            constraint = ",".join([f"={cons}"] * n + ["l", "b"] + [str(i) for i in range(n)])
            args = [f"{self.global_ptr} {ptr}", f"i1 {pred}"] + [f"{wty} {w}" for w in owords]
        rty = wty if n == 1 else "{ " + ", ".join([wty] * n) + " }"
        r = fn.inst(f'call {rty} asm sideeffect "{asm}", "{constraint}"({", ".join(args)})')
        got = [r] if n == 1 else [fn.inst(f"extractvalue {rty} {r}, {i}") for i in range(n)]
        return _from_words(fn, got, wty, elem, vec)

    def store(self, fn: Function, module: Module, ptr: str, elem: str, values: list[str], align: int,
              pred: Optional[str], cache: str = "", evict: str = "") -> None:
        if (pred is None or pred == "true") and not cache and not evict:
            return super().store(fn, module, ptr, elem, values, align, None)
        words, wty, cons, bits = _words(elem, len(values))
        n = len(words)
        vals = _to_words(fn, values, elem, wty, n)
        mods = (cache if cache else "") + _evict(evict, cache)
        v = f".v{n}" if n > 1 else ""
        body = "{" + ", ".join(f"${i + 1}" for i in range(n)) + "}" if n > 1 else "$1"
        if pred is None or pred == "true":
            asm = f"st.global{mods}{v}.b{bits} [$0], {body};"
            constraint = ",".join(["l"] + [cons] * n)
            args = [f"{self.global_ptr} {ptr}"] + [f"{wty} {w}" for w in vals]
        else:
            asm = f"@${n + 1} st.global{mods}{v}.b{bits} [$0], {body};"
            constraint = ",".join(["l"] + [cons] * n + ["b"])
            args = [f"{self.global_ptr} {ptr}"] + [f"{wty} {w}" for w in vals] + [f"i1 {pred}"]
        fn.emit(f'call void asm sideeffect "{asm}", "{constraint}"({", ".join(args)})')

    # -- math ------------------------------------------------------------------------------------------------
    def math(self, fn: Function, module: Module, name: str, args: list[str], ty: str) -> Optional[str]:
        if ty in ("half", "bfloat") and name in HALF_UPCAST:
            wide = [fn.inst(f"fpext {ty} {a} to float") for a in args]
            r = self.math(fn, module, name, wide, "float")
            if r is None:
                return None
            return fn.inst(f"fptrunc float {r} to {ty}")
        if ty == "float":
            if name == "math.exp":
                x = fn.inst(f"fmul float {args[0]}, {const('float', LOG2E)}")
                return self._intr1(fn, module, "llvm.nvvm.ex2.approx.f", x)
            if name == "math.exp2":
                # flushing subnormal results to zero, as Triton's exp2 does unless enable_reflect_ftz=False: without
                # .ftz ptxas wraps every ex2 in a range test and two scalings (attention's inner loop: 136 more FMUL)
                ftz = getattr(self.options, "enable_reflect_ftz", True)
                return self._intr1(fn, module, "llvm.nvvm.ex2.approx.ftz.f" if ftz else "llvm.nvvm.ex2.approx.f",
                                   args[0])
            if name == "math.log":
                y = self._intr1(fn, module, "llvm.nvvm.lg2.approx.f", args[0])
                return fn.inst(f"fmul float {y}, {const('float', LN2)}")
            if name == "math.log2":
                return self._intr1(fn, module, "llvm.nvvm.lg2.approx.f", args[0])
            if name == "math.sqrt":
                return self._intr1(fn, module, "llvm.nvvm.sqrt.approx.f", args[0])
            if name == "math.rsqrt":
                return self._intr1(fn, module, "llvm.nvvm.rsqrt.approx.f", args[0])
            if name == "arith.divf":
                # Triton's `/` on fp32 is div.full.f32 (full range, 2 ulp), not IEEE division: tl.math.div_rn
                # (tt.precise_divf) is the correctly rounded one. ptxas turns div.full into a reciprocal and a
                # multiply, sharing the reciprocal across divisions by one value (attention's epilogue: 64
                # div.rn subroutine calls per thread became 2 MUFU.RCP and FMULs)
                module.intrinsic("llvm.nvvm.div.full", "float", ["float", "float"], "nounwind readnone")
                return fn.inst(f"call float @llvm.nvvm.div.full(float {args[0]}, float {args[1]})")
            if name in LIBDEVICE_F32:
                return self._libdevice(fn, module, "__nv_" + LIBDEVICE_F32[name], args, ty)
        if ty == "double" and name in LIBDEVICE_F64:
            return self._libdevice(fn, module, "__nv_" + LIBDEVICE_F64[name], args, ty)
        if ty == "double" and name == "math.rsqrt":
            return self._libdevice(fn, module, "__nv_rsqrt", args, ty)
        if name == "math.fpowi" and ty in ("float", "double"):
            self.uses_libdevice = True
            sym = "__nv_powif" if ty == "float" else "__nv_powi"
            module.declare(sym, f"declare {ty} @{sym}({ty}, i32)")
            return fn.inst(f"call {ty} @{sym}({ty} {args[0]}, i32 {args[1]})")
        return None

    def _intr1(self, fn: Function, module: Module, name: str, x: str) -> str:
        module.intrinsic(name, "float", ["float"], "nounwind readnone")
        return fn.inst(f"call float @{name}(float {x})")

    def _libdevice(self, fn: Function, module: Module, symbol: str, args: list[str], ty: str) -> str:
        self.uses_libdevice = True
        module.declare(symbol, f"declare {ty} @{symbol}({', '.join([ty] * len(args))})")
        return fn.inst(f"call {ty} @{symbol}({', '.join(f'{ty} {a}' for a in args)})")

    def extern_call(self, fn: Function, module: Module, symbol: str, libpath: str, args: list[tuple[str, str]],
                    ret: str) -> str:
        from . import libdevice
        from .toolchain import ToolchainError, find_libdevice
        path = libpath if libpath and libpath.endswith(".bc") else find_libdevice()
        if path is None:
            raise ToolchainError(f"`{symbol}` needs libdevice.10.bc, which was not found: install the CUDA toolkit or "
                                 "`pip install nvidia-cuda-nvcc`, or set TRITON_LIBDEVICE_PATH")
        got = libdevice.resolve(symbol, path)
        if got is None:
            raise ToolchainError(f"libdevice ({path}) has no function for `{symbol}`")
        name, lret, lparams = got
        _, codes = libdevice.split_variant(symbol)
        self.uses_libdevice = True
        module.declare(name, f"declare {lret} @{name}({', '.join(lparams)})")
        vals = [libdevice.convert(fn, v, t, p, not (i < len(codes) and codes[i].startswith("u")))
                for i, ((t, v), p) in enumerate(zip(args, lparams))]
        r = fn.inst(f"call {lret} @{name}({', '.join(f'{p} {v}' for p, v in zip(lparams, vals))})")
        return libdevice.convert(fn, r, lret, ret)

    # -- debugging -------------------------------------------------------------------------------------------
    def printf(self, fn: Function, module: Module, fmt: str, args: list[tuple[str, str]]) -> None:
        module.declare("vprintf", "declare i32 @vprintf(ptr, ptr)")
        g = module.string(fmt, addrspace=1)
        fmtp = fn.inst(f"addrspacecast ptr addrspace(1) {g} to ptr")
        if not args:
            fn.emit(f"call i32 @vprintf(ptr {fmtp}, ptr null)")
            return
        st = "{ " + ", ".join(t for t, _ in args) + " }"
        buf = fn.pinst(f"alloca {st}, align 8", "pbuf")
        for i, (t, v) in enumerate(args):
            p = fn.inst(f"getelementptr inbounds {st}, ptr {buf}, i32 0, i32 {i}")
            fn.emit(f"store {t} {v}, ptr {p}")
        fn.emit(f"call i32 @vprintf(ptr {fmtp}, ptr {buf})")

    # -- asynchronous copies (cp.async, sm_80+) ---------------------------------------------------------------
    def async_copy(self, fn: Function, module: Module, dst: str, src: str, nbytes: int, pred: Optional[str],
                   src_bytes: Optional[str] = None) -> None:
        if nbytes < 4:
            # cp.async moves 4, 8 or 16 bytes: narrower (unaligned) accesses are copied right away
            return super().async_copy(fn, module, dst, src, nbytes, pred, src_bytes)
        # 16-byte copies bypass L1 (.cg), as Triton's; smaller ones must go through it (.ca)
        kind = "cg" if nbytes == 16 else "ca"
        d = fn.inst(f"ptrtoint {self.shared_ptr} {dst} to i32")
        if src_bytes is not None:
            # cp.async reads src-size bytes and zero-fills the rest of the copy
            size = src_bytes if pred is None or pred == "true" else fn.inst(f"select i1 {pred}, i32 {src_bytes}, i32 0")
            fn.emit(f'call void asm sideeffect "cp.async.{kind}.shared.global [$0], [$1], {nbytes}, $2;", '
                    f'"r,l,r,~{{memory}}"(i32 {d}, {self.global_ptr} {src}, i32 {size})')
            return
        if pred is None or pred == "true":
            fn.emit(f'call void asm sideeffect "cp.async.{kind}.shared.global [$0], [$1], {nbytes};", '
                    f'"r,l,~{{memory}}"(i32 {d}, {self.global_ptr} {src})')
            return
        size = fn.inst(f"select i1 {pred}, i32 {nbytes}, i32 0")   # 0 bytes read: the destination is zeroed
        fn.emit(f'call void asm sideeffect "cp.async.{kind}.shared.global [$0], [$1], {nbytes}, $2;", '
                f'"r,l,r,~{{memory}}"(i32 {d}, {self.global_ptr} {src}, i32 {size})')

    def async_commit(self, fn: Function) -> None:
        fn.emit('call void asm sideeffect "cp.async.commit_group;", "~{memory}"()')

    def async_wait(self, fn: Function, pending: int) -> None:
        fn.emit(f'call void asm sideeffect "cp.async.wait_group {pending};", "~{{memory}}"()')
        from .knobs import nvidia
        if self.capability >= 90 and nvidia.cp_async_fence:
            # what cp.async wrote may be read next by wgmma, through the async proxy
            fn.emit('call void asm sideeffect "fence.proxy.async.shared::cta;", "~{memory}"()')

    @property
    def bulk_store_deferred(self) -> bool:
        from .knobs import nvidia
        return nvidia.defer_store_wait and self.bulk_tensor_copies

    @property
    def prefetch_next_tile(self) -> int:
        from .knobs import nvidia
        return nvidia.prefetch_tiles if nvidia.prefetch_tiles in (1, 2) and self.bulk_tensor_copies else 0

    @property
    def bulk_loop_top_barrier(self) -> bool:
        from .knobs import nvidia
        return nvidia.bulk_loop_top_barrier

    def bulk_store_commit(self, fn: Function) -> None:
        from .tma import _asm
        _asm(fn, "cp.async.bulk.commit_group;", "~{memory}", [])

    def bulk_store_drain(self, fn: Function) -> None:
        from .tma import _asm
        _asm(fn, "cp.async.bulk.wait_group.read 0;", "~{memory}", [])

    @property
    def async_dots(self) -> bool:
        return 90 <= self.capability < 100

    @property
    def early_row_reads(self) -> bool:
        """Staged row vectors read ahead of the dot before their first use (gpu/lower/pipeline_rows.py)."""
        from .knobs import nvidia
        return self.async_dots and nvidia.early_row_reads

    def carries_dot(self, kind: str, register_a: bool = False, acc_regs: int = 0) -> bool:
        """Whether a loop's dot of strategy ``kind`` may be left running into the next iteration (carry_dot.py);
        ``register_a``: a last dot reading A from registers in a loop whose other accumulators (``acc_regs``
        registers per thread) are already left in flight (attention's backward: dK, dQ)."""
        from .knobs import nvidia
        # an fp16 accumulator (f16acc) is held packed, two elements per register, only until its own wait
        if not (self.async_dots and kind.startswith("wgmma")) or kind.endswith(".f16acc"):
            return False
        if register_a:
            return 0 < nvidia.carry_register_a <= acc_regs
        return nvidia.carry_dots

    def async_dot_wait(self, fn: Function, pending: int, regs: list[str], ty: str = "float") -> list[str]:
        from .wgmma import wait_group
        return wait_group(fn, pending, regs, ty=ty)

    def read_shared_tile(self, lowering: Any, tile: Any, dst: Any, ty: str) -> Any:
        from .ldmatrix import read_operand
        return read_operand(lowering, tile, dst, ty)

    def write_shared_tile(self, lowering: Any, value: Any, tile: Any) -> bool:
        from .knobs import nvidia
        if not (nvidia.stmatrix and self.capability >= 90):
            return False
        from .stmatrix import write_matrices
        return write_matrices(lowering, value, tile)

    def dot_strategy(self, kind: str) -> Optional[Callable[..., Any]]:
        if kind.startswith("wgmma"):
            from .wgmma import lower_wgmma_dot
            return lower_wgmma_dot
        if kind.startswith("mma"):
            from .mma import lower_mma_dot
            return lower_mma_dot
        return None

    def convert_layout(self, lowering: Any, value: Any, dst: Any) -> Any:
        from .ldmatrix import convert_to_operand
        return convert_to_operand(lowering, value, dst)
