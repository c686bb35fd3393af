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

    def warpgroup_turns(self, kinds: list) -> bool:
        from .knobs import nvidia
        # wgmma dots (A from shared memory or registers) are lowered without a CTA barrier; a turn waited for
        # inside the loop with one in the body would deadlock (pipeline_turns.py)
        return nvidia.warpgroup_turns and 90 <= self.capability < 100 and all(
            k is not None and k.startswith("wgmma") for k in kinds)

    def turn_barrier(self, fn: Function, which: str, threads: int, wait: bool) -> None:
        from .tma import _asm
        # named barriers 14 and 15 (0 is the CTA barrier; nothing else names one)
        op = "bar.sync" if wait else "bar.arrive"
        _asm(fn, f"{op} $0, {threads};", "r,~{memory}", [f"i32 {fn.inst(f'add i32 {which}, 14')}"])
