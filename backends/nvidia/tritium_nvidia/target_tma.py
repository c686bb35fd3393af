"""NvidiaTarget's hooks for the Tensor Memory Accelerator (sm_90): bulk tensor copies of descriptor blocks, the
tensor maps they name (built on the device, or encoded on the host and passed as kernel parameters) and the
mbarriers they complete on; the PTX itself is written by tma.py."""
from __future__ import annotations

from typing import Optional

from tritium.gpu.target import TargetHooks
from tritium.llvmir.text import Function, Module


class TmaHooks(TargetHooks):
    """Mixed into NvidiaTarget (which sets ``capability`` and ``_param_maps``)."""

    @property
    def bulk_tensor_copies(self) -> bool:
        from .knobs import nvidia
        if not (90 <= self.capability < 100 and nvidia.tma):
            return False
        from . import toolchain
        from .tma import MIN_ISA
        return toolchain.ptx_isa(self.capability) >= MIN_ISA

    @property
    def bulk_loads_in_loops(self) -> bool:
        from .knobs import nvidia
        return nvidia.tma_loop_loads

    @property
    def tensor_map_value_types(self) -> bool:
        from .knobs import nvidia
        return nvidia.tma_typed_maps

    @property
    def bulk_tensor_every_rank(self) -> bool:
        from .knobs import nvidia
        return nvidia.tma_ranks

    def build_tensor_map(self, fn: Function, module: Module, template: str, base: str, dims: list[str],
                         stride_bytes: list[str], box: list[int], eb: int, swizzle: int,
                         elem: Optional[str] = None, nan_fill: bool = False) -> str:
        from .tma import build_tensor_map
        return build_tensor_map(self, fn, module, template, base, dims, stride_bytes, box, eb, swizzle, elem,
                                nan_fill)

    def param_tensor_map(self, fn: Function, args: list, box: list[int], eb: int, swizzle: int,
                         elem: Optional[str] = None, nan_fill: bool = False) -> Optional[str]:
        from .knobs import nvidia
        if not nvidia.tma_host_maps:
            return None
        from .tma import param_tensor_map
        return param_tensor_map(fn, self._param_maps, args, box, eb, swizzle, elem, nan_fill)

    def kernel_metadata(self) -> dict:
        meta = {"tensor_map_params": list(self._param_maps)} if getattr(self, "_param_maps", None) else {}
        if getattr(self, "_roles_meta", None):
            meta["num_warps"] = self._roles_meta         # the producer warps too (warp_roles.py)
        return meta

    @property
    def producer_warps(self) -> int:
        from .knobs import nvidia
        return nvidia.producer_warps if nvidia.producer_warps in (1, 4) and self.bulk_empty_barriers else 0

    @property
    def ws_producer_warps(self) -> int:
        from .knobs import nvidia
        return nvidia.ws_producer_warps if nvidia.ws_producer_warps in (1, 4) and self.bulk_tensor_copies else 0

    def producer_start(self, fn: Function, warps: int) -> None:
        pass

    def split_warp_roles(self, fn: Function, consumers: str, consumer_warps: int, producer_warps: int) -> None:
        self._roles = (fn, consumers, consumer_warps, producer_warps)

    def bulk_barrier_init(self, fn: Function, bar: str) -> None:
        from .tma import mbarrier_init, mbarrier_init_fence
        mbarrier_init(fn, bar)
        mbarrier_init_fence(fn)

    @property
    def bulk_empty_barriers(self) -> bool:
        from .knobs import nvidia
        return nvidia.empty_barriers and self.bulk_tensor_copies

    def bulk_release_init(self, fn: Function, bar: str, arrivals: int) -> None:
        from .tma import mbarrier_init, mbarrier_init_fence
        mbarrier_init(fn, bar, arrivals)
        mbarrier_init_fence(fn)

    def bulk_release(self, fn: Function, bar: str) -> None:
        from .tma import mbarrier_arrive
        mbarrier_arrive(fn, bar)

    def bulk_barrier_inval(self, fn: Function, bar: str) -> None:
        from .tma import mbarrier_inval
        mbarrier_inval(fn, bar)

    def bulk_expect(self, fn: Function, bar: str, nbytes: int) -> None:
        from .tma import expect_bytes
        expect_bytes(fn, bar, nbytes)

    def bulk_wait(self, fn: Function, bar: str, parity: str) -> None:
        from .tma import wait_parity
        wait_parity(fn, bar, parity)

    def bulk_tensor_load(self, fn: Function, dst: str, tmap: str, coords: list[str], bar: str) -> None:
        from .tma import tensor_load
        tensor_load(fn, dst, tmap, coords, bar)

    def bulk_store_fence(self, fn: Function) -> None:
        fn.emit('call void asm sideeffect "fence.proxy.async.shared::cta;", "~{memory}"()')

    def bulk_tensor_store(self, fn: Function, tmap: str, coords: list[str], src: str) -> None:
        from .tma import tensor_store
        tensor_store(fn, tmap, coords, src)

    def bulk_tensor_reduce(self, fn: Function, tmap: str, coords: list[str], src: str, kind: str) -> None:
        from .tma import tensor_reduce
        tensor_reduce(fn, tmap, coords, src, kind)

    def cold_value(self, fn: Function, ty: str, v: str) -> str:
        """``v`` (i32/i64) through a register copy LLVM cannot move: values derived from it stay in the cold
        block that asks (a descriptor store's per-element fallback) instead of being hoisted to the kernel's
        entry, where they held registers through examples/08's whole tile loop (154 -> 158)."""
        bits, reg = {"i32": (32, "r"), "i64": (64, "l")}[ty]
        return fn.inst(f'call {ty} asm sideeffect "mov.b{bits} $0, $1;", "={reg},{reg}"({ty} {v})')

    def bulk_store_wait_read(self, fn: Function) -> None:
        from .tma import store_wait_read
        store_wait_read(fn)
