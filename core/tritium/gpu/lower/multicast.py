"""Bulk loads shared by the CTAs of a split cluster (``num_ctas > 1``; cluster_split.py), copied once for all.

In a kernel split along a dot's N, every CTA of the cluster reads the same block of A. Where the target can
multicast (``target.cluster_multicast``), each CTA copies ``1/num_ctas`` of that block's rows with the copy
engine and sends them to the same stage offset of every CTA in the cluster; each CTA's stage barrier still
expects the whole stage's bytes, so it completes once all CTAs' parts (and its own part of B) have landed.

Other CTAs now write into this CTA's stages, so a stage is refilled only after every CTA of the cluster is done
reading it: before each refill the pipelined loop (pipeline.py) meets at a cluster barrier, or (knob
``multicast_release`` "mbarrier") each CTA's refilling thread arrives on every CTA's "empty" barrier of the
stage and waits on its own, which completes once all CTAs have arrived. The cluster also meets after the stage
barriers' initialization (which must be visible to the other CTAs' copies before the first one lands) and after
the loop (no CTA goes on to reuse, or give back, shared memory that another CTA's copies or arrivals may still
reach).
Every CTA of a split kernel runs the same iterations (its loop bounds and predicates are the same in every CTA:
only tensors along N differ), so each reaches every cluster barrier equally often.

Qualifies: a pipelined load the split marked as the same in every CTA (``SHARED_LOAD_ATTR``), of a 2-D descriptor
with zero padding whose tensor map the launcher encodes (a second map, of the smaller box, is passed the same
way), whose boxes' rows divide by ``num_ctas`` into parts that start whole swizzle patterns (1024 bytes).
"""
from __future__ import annotations

from typing import Any, Optional

from ..cluster_split import SHARED_LOAD_ATTR, SPLIT_ATTR
from .clusters import num_ctas
from .context import Context
from .descriptor_bulk import BulkStages, _swizzle, launch_argument_fields
from .values import owner_op


def _panel_rows(m: Any) -> Optional[tuple[int, int]]:
    """(box columns, box rows) of a 2-D map."""
    box = getattr(m, "box", None)
    if box is not None:
        return (box[0], box[-1]) if len(box) == 2 else None
    return m.panel, m.box_rows


def _boxes(m: Any) -> list[tuple[int, int, int]]:
    """(column offset, row offset, byte offset in the stage) of each box of a 2-D map."""
    out = []
    for b in m.boxes():
        if len(b) == 3:
            out.append(b)
        else:
            coords, off = b
            out.append((coords[0], coords[-1], off))
    return out


class SharedMap:
    """The smaller map a CTA copies its part of a shared block with."""

    def __init__(self, addr: str, n: int, part_rows: int) -> None:
        self.addr, self.n, self.part_rows = addr, n, part_rows


def shared_map(ctx: Context, load: Any, desc_v: Any, m: Any) -> Optional[SharedMap]:
    """The map of ``load``'s part when its block can be multicast across the cluster (module doc), else None."""
    n = num_ctas(ctx.options)
    if m is None or n < 2 or SPLIT_ATTR not in ctx.func.attributes or SHARED_LOAD_ATTR not in load.attributes:
        return None
    if not ctx.target.cluster_multicast:
        return None
    c = ctx.values[desc_v]
    pr = _panel_rows(m)
    make = owner_op(desc_v)
    if pr is None or c.padding != "zero" or make is None or make.name != "tt.make_tensor_descriptor":
        return None
    panel, box_rows = pr
    part = box_rows // n
    if box_rows % n or part * panel * m.eb % 1024:
        return None
    host = launch_argument_fields(make, ctx.func)
    if host is None:
        return None
    addr = ctx.target.param_tensor_map(ctx.fn, host, [panel, part], m.eb, _swizzle(panel * m.eb))
    return SharedMap(addr, n, part) if addr is not None else None


class MulticastStages(BulkStages):
    """:class:`BulkStages` whose shared loads (``shared[k]`` not None) are multicast: this CTA copies its rows of
    each box to every CTA of the cluster."""

    def __init__(self, ctx: Context, maps: list, stages: int, shared: list) -> None:
        super().__init__(ctx, maps, stages)
        self.shared = shared
        self.rank = ctx.target.cluster_rank(ctx.fn)
        self.n = num_ctas(ctx.options)
        self.by_mbarrier = ctx.target.multicast_release == "mbarrier"
        self.extra_keys: list = []
        if self.by_mbarrier:
            # per stage, an "empty" barrier every CTA arrives on once it is done reading the stage
            k, self.empty = ctx.shared_buffer(8 * stages, 8)
            self.extra_keys.append(k)

    def _empty(self, ctx: Context, stage: str) -> str:
        return ctx.smem_ptr(self.empty, ctx.imul(stage, 8))

    def after_init(self, ctx: Context) -> None:
        """After the stage barriers' initialization, before the first copy: every CTA's barriers are ready, and
        every CTA is done with these bytes' earlier use."""
        if self.by_mbarrier:
            from ..target import guarded

            def init() -> None:
                for s in range(self.stages):
                    ctx.target.cluster_barrier_init(ctx.fn, ctx.smem_ptr(self.empty, str(8 * s)), self.n)
            guarded(ctx.fn, self.leader, init)
        ctx.target.cluster_barrier(ctx.fn)

    @property
    def barrier_before_refill(self) -> bool:
        """Does the loop need its own CTA barrier between the last read of a stage and its refill?"""
        return self.by_mbarrier

    def before_refill(self, ctx: Context, wr: str, rd: str, phase: str, later: str) -> None:
        """Before the copies into stage ``wr`` (read by the previous iteration, whose reads every thread of this CTA
        has finished): wait until every CTA of the cluster is done with it. ``later``: i1, not the loop's first
        iteration (in the first, stage ``wr`` has not been read yet); ``rd``/``phase``: this iteration's stage and
        the parity of its barrier."""
        if not self.by_mbarrier:
            ctx.target.cluster_barrier(ctx.fn)
            return
        from ..target import guarded
        fn = ctx.fn
        bar = self._empty(ctx, wr)
        # stage wr = rd - 1 was released once per earlier wrap: its parity is rd's, less one where rd wrapped
        wrapped = fn.inst(f"icmp eq i32 {rd}, 0")
        parity = fn.inst(f"xor i32 {phase}, {fn.inst(f'zext i1 {wrapped} to i32')}")

        def hand_back() -> None:
            ctx.target.cluster_release(fn, bar, self.n)
            ctx.target.cluster_wait(fn, bar, parity)
        guarded(fn, ctx.and_pred(self.leader, later), hand_back)

    def after_loop(self, ctx: Context) -> None:
        """Every CTA is done with the stages (and has made its last arrivals): they may be reused, or given up."""
        ctx.target.cluster_barrier(ctx.fn)
        if self.by_mbarrier:
            self.each_empty(ctx, lambda bar: ctx.target.bulk_barrier_inval(ctx.fn, bar))

    def each_empty(self, ctx: Context, emit: Any) -> None:
        from ..target import guarded

        def all_stages() -> None:
            for s in range(self.stages):
                emit(ctx.smem_ptr(self.empty, str(8 * s)))
        guarded(ctx.fn, self.leader, all_stages)

    def issue(self, ctx: Context, operands: list, bases: list, stage: str, valid: Optional[str]) -> None:
        from ..target import guarded
        fn = ctx.fn

        def emit() -> None:
            bar = self.bar(ctx, stage)
            ctx.target.bulk_expect(fn, bar, self.nbytes)
            for m, sm, (_, idx), (proto, stage_bytes) in zip(self.maps, self.shared, operands, bases):
                if m is None:
                    continue
                dst = ctx.smem_ptr(proto.base, ctx.imul(stage, stage_bytes))
                row, col = (s.value if s.ty == "i32" else fn.inst(f"trunc {s.ty} {s.value} to i32") for s in idx)
                if sm is None:
                    for dc, dr, off in _boxes(m):
                        self._copy(ctx, m.addr, col, row, dc, dr, dst, off, bar, 0)
                    continue
                # this CTA's rows of each box: rank * part further down, in the box and in the stage
                first = fn.inst(f"mul i32 {self.rank}, {sm.part_rows}")
                panel = _panel_rows(m)[0]
                shift = fn.inst(f"mul i32 {first}, {panel * m.eb}")
                mine = fn.inst(f"add i32 {row}, {first}")
                for dc, dr, off in _boxes(m):
                    at = fn.inst(f"add i32 {shift}, {off}") if off else shift
                    self._copy(ctx, sm.addr, col, mine, dc, dr, dst, at, bar, (1 << sm.n) - 1)
        guarded(fn, ctx.and_pred(ctx.and_pred(self.leader, valid), self.ok), emit)

    @staticmethod
    def _copy(ctx: Context, tmap: str, col: str, row: str, dc: int, dr: int, dst: str, off: Any, bar: str,
              mask: int) -> None:
        fn = ctx.fn
        c = col if dc == 0 else fn.inst(f"add i32 {col}, {dc}")
        r = row if dr == 0 else fn.inst(f"add i32 {row}, {dr}")
        to = ctx.smem_ptr(dst, str(off)) if off else dst
        if mask:
            ctx.target.bulk_tensor_load_multicast(fn, to, tmap, [c, r], bar, mask)
        else:
            ctx.target.bulk_tensor_load(fn, to, tmap, [c, r], bar)


def stages_for(ctx: Context, plan: Any, maps: list, stages: int) -> Optional[BulkStages]:
    """The loop's stage barriers: multicasting where some load qualifies (module doc)."""
    if not any(m is not None for m in maps):
        return None
    shared = [shared_map(ctx, o, parts["desc"][0], m) if "desc" in parts else None
              for (o, parts), m in zip(plan.loads, maps)]
    if any(s is not None for s in shared):
        return MulticastStages(ctx, maps, stages, shared)
    return BulkStages(ctx, maps, stages)


def multicasting(bulk: Optional[BulkStages]) -> bool:
    return isinstance(bulk, MulticastStages)
