"""NvidiaTarget's hooks for barriers per stage of a cp.async pipeline (gpu/lower/pipeline_decoupled.py): an
mbarrier per stage that every thread arrives on with ``cp.async.mbarrier.arrive.noinc`` (the arrival happens when
the thread's earlier cp.async copies have landed, without a wait_group) and waits on by phase parity. On sm_90
this lets a D128 attention forward's two warpgroups drift apart instead of meeting at a CTA barrier at the top of
every iteration (knob ``decoupled_stages``)."""
from __future__ import annotations

from tritium.gpu.target import TargetHooks
from tritium.llvmir.text import Function


class StageBarrierHooks(TargetHooks):
    """Mixed into NvidiaTarget (which sets ``capability``)."""

    @property
    def decoupled_stage_warps(self) -> int:
        from .knobs import nvidia
        # sm_90 only: measured there (the wgmma loops that wait for themselves); cp.async.mbarrier.arrive is sm_80+
        return nvidia.decoupled_stages if 90 <= self.capability < 100 else 0

    def stage_barrier_init(self, fn: Function, bar: str, arrivals: int) -> None:
        from .tma import mbarrier_init
        mbarrier_init(fn, bar, arrivals)

    def stage_barrier_inval(self, fn: Function, bar: str) -> None:
        from .tma import mbarrier_inval
        mbarrier_inval(fn, bar)

    def stage_arrive(self, fn: Function, bar: str) -> None:
        from .tma import _asm, _saddr
        # .noinc: the barrier was initialized with one arrival per thread, which this asynchronous arrival is
        _asm(fn, "cp.async.mbarrier.arrive.noinc.shared::cta.b64 [$0];", "r,~{memory}", [f"i32 {_saddr(fn, bar)}"])

    def stage_wait(self, fn: Function, bar: str, parity: str) -> None:
        from .tma import wait_parity
        wait_parity(fn, bar, parity)
