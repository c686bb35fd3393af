"""The memory of an interpreted launch: arguments mapped into a virtual address space, bounds-checked
loads, stores and atomics, and an undo log.

Pointers are virtual addresses: each array argument has its own slot, and an address outside every slot
may be a real host address into a live array (regions.py describes the scheme and finds the memory).

An access is checked against the bytes the argument spans (its strides included): the lanes that the
mask leaves on must lie inside. With the check off, such lanes touch the real memory at that address,
as compiled code would.

Stores and atomics go straight to memory (later loads of the same launch must see them). While the
launcher runs several programs as one batch it keeps an undo log, so that a batch whose programs turn
out to take different paths can be rolled back and rerun (see :mod:`.launcher`).
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from .regions import SLOT_SHIFT, HostMemory, RawBytes, Region
from .values import MEMORY


class OutOfBounds(Exception):
    """Raised by an access with enabled lanes outside the argument's memory; the launcher adds the kernel,
    the source line and the program ids, and turns it into an :class:`~.errors.OutOfBoundsError`."""

    def __init__(self, kind: str, region: Optional[Region], elt: str, size: int, offsets: np.ndarray,
                 lanes: np.ndarray, n_lanes: int, masked: bool) -> None:
        self.kind, self.region, self.elt, self.size = kind, region, elt, size
        self.offsets = offsets      # byte offsets from the argument's element 0, of the bad lanes
        self.lanes = lanes          # flat indices (batch-major) of the bad lanes
        self.n_lanes = n_lanes      # lanes per program
        self.masked = masked
        self.shape: tuple[int, ...] = ()  # of the access: (batch, *tile)
        super().__init__(kind)


class ReadOnlyStore(Exception):
    """Raised by a store or atomic through a pointer into a read-only argument (whatever its mask: the compiled
    path refuses such a launch outright); the launcher names the kernel and the line."""

    def __init__(self, kind: str, region: Region) -> None:
        self.kind, self.region = kind, region
        super().__init__(kind)


#: a batch copies a region it writes (once) instead of logging each store when the region is this small
SNAPSHOT_BYTES = 1 << 22


class Memory:
    """One launch's memory: its arguments' regions (index 0 is the null pointer's), the accesses through
    them, and the undo log of a batch."""

    def __init__(self, check: bool = True) -> None:
        self.regions: list[Optional[Region]] = [None]
        self.check = check
        # what a batch overwrote, oldest first: (array, indices or slice(None) for a whole region, old values)
        self.log: Optional[list[tuple[Any, Any, np.ndarray]]] = None
        self.snapshotted: set[int] = set()
        self.host: Optional[HostMemory] = None    # scanned on the first access through a real host address

    def add(self, name: str, obj: Any, data_ptr: int, lo: int, hi: int, desc: str) -> Region:
        r = Region(len(self.regions), name, obj, data_ptr, lo, hi, desc)
        self.regions.append(r)
        return r

    # -- undo log ----------------------------------------------------------------------------------
    def begin(self) -> None:
        self.log = []
        self.snapshotted = set()

    def commit(self) -> None:
        self.log = None
        self.snapshotted = set()

    def rollback(self) -> None:
        # newest first, so that arguments sharing memory come back right whatever order they were written in
        log, self.log = self.log or [], None
        for arr, idx, old in reversed(log):
            arr[idx] = old
        self.snapshotted = set()

    def _remember(self, arr: Any, idx: np.ndarray, region: Optional[Region]) -> None:
        """Before a write in a batch: keep what it overwrites (small regions whole, once per batch)."""
        log = self.log
        if region is not None and not isinstance(arr, RawBytes):
            if region.index in self.snapshotted:
                return
            if region.nbytes <= SNAPSHOT_BYTES or region.nbytes <= 8 * idx.size * arr.itemsize:
                self.snapshotted.add(region.index)
                log.append((region.buf, slice(None), region.buf.copy()))  # type: ignore[union-attr]
                return
        log.append((arr, idx, arr[idx]))  # type: ignore[union-attr]

    def _fast(self, v: np.ndarray, mask: Optional[np.ndarray], region: Optional[Region], dt: np.dtype,
              compress: bool) -> Optional[tuple[np.ndarray, np.ndarray]]:
        """(typed view, element indices) when every enabled lane lies inside ``region``; the indices keep
        ``v``'s shape with masked-off lanes at 0, or (``compress``) list the enabled lanes only. None when
        the general path must decide. A pointer that knows its region was derived from the argument by
        element-sized steps, so it is aligned."""
        if region is None or region.nbytes < dt.itemsize:
            return None
        off = v - region.vstart
        bad = off.view(np.uint64) > (region.nbytes - dt.itemsize)
        if mask is not None:
            bad &= mask
        if bad.any():
            return None
        np.right_shift(off, dt.itemsize.bit_length() - 1, out=off)
        if mask is not None:
            off = off[mask] if compress else np.where(mask, off, 0)
        return region.view(dt), off

    # -- addressing --------------------------------------------------------------------------------
    def _locate(self, kind: str, v: np.ndarray, mask: Optional[np.ndarray], region: Optional[Region],
                dt: np.dtype, elt: str) -> list[tuple[np.ndarray, np.ndarray, Optional[np.ndarray]]]:
        """Split the enabled lanes into (array, flat element indices, flat lane positions or None for
        all lanes) groups, checking bounds. ``v`` and ``mask`` are flat."""
        if region is None:
            return self._locate_by_address(kind, v, mask, dt, elt)
        if region.readonly and kind != "load":
            raise ReadOnlyStore(kind, region)
        size = dt.itemsize
        off = v - region.vstart
        bad = (off < 0) | (off > region.nbytes - size)
        if size > 1:
            bad |= (off & (size - 1)) != 0
        if mask is not None:
            bad &= mask
        if not bad.any():
            idx = off >> (size.bit_length() - 1)
            if mask is None:
                return [(region.view(dt), idx, None)]
            lanes = np.flatnonzero(mask)
            return [(region.view(dt), idx[lanes], lanes)]
        inside = (off >= 0) & (off <= region.nbytes - size)
        out_of_span = bad & ~inside
        if out_of_span.any() and self.check:
            lanes = np.flatnonzero(out_of_span)
            raise OutOfBounds(kind, region, elt, size, off[lanes] - region.data_off, lanes, v.size,
                              mask is not None)
        # misaligned lanes inside the span, or (with the check off) lanes outside it: byte-wise access
        enabled = np.ones(v.shape, bool) if mask is None else mask
        fast = enabled & ~bad
        groups = []
        if fast.any():
            lanes = np.flatnonzero(fast)
            groups.append((region.view(dt), off[lanes] >> (size.bit_length() - 1), lanes))
        lanes = np.flatnonzero(enabled & bad)
        groups.append((RawBytes(region.real_start + off[lanes], dt), np.arange(lanes.size), lanes))
        return groups

    def _locate_by_address(self, kind: str, v: np.ndarray, mask: Optional[np.ndarray], dt: np.dtype,
                           elt: str) -> list[tuple[np.ndarray, np.ndarray, Optional[np.ndarray]]]:
        enabled = np.ones(v.shape, bool) if mask is None else mask
        slots = v >> SLOT_SHIFT
        groups = []
        for k in np.unique(slots[enabled]):
            sel = enabled & (slots == k)
            region = self.regions[int(k)] if 0 < k < len(self.regions) else None
            if region is None:
                groups += self._locate_host(kind, v, sel, mask, dt, elt)
                continue
            for arr, idx, lanes in self._locate(kind, v, sel, region, dt, elt):
                groups.append((arr, idx, lanes))
        return groups

    def _locate_host(self, kind: str, v: np.ndarray, sel: np.ndarray, mask: Optional[np.ndarray], dt: np.dtype,
                     elt: str) -> list[tuple[np.ndarray, np.ndarray, Optional[np.ndarray]]]:
        """The lanes ``sel`` of addresses in no argument's slot: real host addresses (see HostMemory)."""
        if self.host is None:
            self.host = HostMemory.scan()
        lanes = np.flatnonzero(sel)
        which = self.host.lookup(v[lanes])
        hit = np.unique(which[which >= 0])
        if hit.size and (which < 0).any():
            # lanes that missed while others of the access hit: an overrun of the array the others are in (the
            # nearest one below), which _locate reports against it (or, with the check off, lets through as
            # compiled code would)
            miss = which < 0
            below = np.searchsorted(self.host.starts[hit], v[lanes[miss]], side="right") - 1
            which[miss] = hit[np.maximum(below, 0)]
        if (which < 0).any():
            bad = lanes[which < 0]
            if not self.check:
                raise RuntimeError(f"{kind} through an address that belongs to no argument and to no live array "
                                   f"({int(v[bad[0]]):#x}); the interpreter cannot access it")
            raise OutOfBounds(kind, None, elt, dt.itemsize, v[bad], bad, v.size, mask is not None)
        groups = []
        for i in np.unique(which).tolist():
            part = np.zeros(v.shape, bool)
            part[lanes[which == i]] = True
            groups += self._locate(kind, v, part, self.host.region(i), dt, elt)
        return groups

    def _checked(self, kind: str, v: np.ndarray, mask: Optional[np.ndarray], region: Optional[Region],
                 dt: np.dtype, elt: str, shape: tuple[int, ...]) -> list:
        try:
            return self._locate(kind, v, mask, region, dt, elt)
        except OutOfBounds as exc:
            exc.shape = shape
            raise

    # -- accesses ----------------------------------------------------------------------------------
    def load(self, v: np.ndarray, mask: Optional[np.ndarray], region: Optional[Region], elt: str) -> np.ndarray:
        """Gather ``elt`` values (memory encoding) at addresses ``v``; what masked-off lanes hold is
        unspecified (the caller selects ``other``)."""
        dt = MEMORY[elt]
        fast = self._fast(v, mask, region, dt, False)
        if fast is not None:
            return fast[0][fast[1]]
        shape = v.shape
        fv = v.reshape(-1)
        fm = None if mask is None else mask.reshape(-1)
        groups = self._checked("load", fv, fm, region, dt, elt, shape)
        if len(groups) == 1 and groups[0][2] is None:
            arr, idx, _ = groups[0]
            return arr[idx].reshape(shape)
        out = np.zeros(fv.size, dt)
        for arr, idx, lanes in groups:
            out[lanes] = arr[idx]
        return out.reshape(shape)

    def store(self, v: np.ndarray, vals: np.ndarray, mask: Optional[np.ndarray], region: Optional[Region],
              elt: str) -> None:
        dt = MEMORY[elt]
        if region is not None and region.readonly:
            raise ReadOnlyStore("store", region)
        fast = self._fast(v, mask, region, dt, True)
        if fast is not None:
            arr, idx = fast
            if self.log is not None:
                self._remember(arr, idx, region)
            arr[idx] = vals if mask is None else vals[mask]
            return
        fv = v.reshape(-1)
        fvals = vals.reshape(-1)
        fm = None if mask is None else mask.reshape(-1)
        for arr, idx, lanes in self._checked("store", fv, fm, region, dt, elt, v.shape):
            src = fvals if lanes is None else fvals[lanes]
            if self.log is not None:
                self._remember(arr, idx, region)
            arr[idx] = src

    def rmw(self, v: np.ndarray, mask: Optional[np.ndarray], region: Optional[Region], elt: str,
            vals: np.ndarray, update: Callable[[np.ndarray, np.ndarray], np.ndarray],
            scan: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]], kind: str = "atomic") -> np.ndarray:
        """Atomic read-modify-write with the result of doing it lane by lane in order (programs in order,
        then each program's lanes in order). ``update(old, val) -> new`` handles lanes whose address no
        other enabled lane shares; ``scan(initial[1], vals[n]) -> (olds[n], final[1])`` the lanes of one
        address. Returns the old values (0 for masked-off lanes), in memory encoding."""
        dt = MEMORY[elt]
        fv = v.reshape(-1)
        fvals = vals.reshape(-1)
        fm = None if mask is None else mask.reshape(-1)
        out = np.zeros(fv.size, dt)
        for arr, idx, lanes in self._checked(kind, fv, fm, region, dt, elt, v.shape):
            src = fvals if lanes is None else fvals[lanes]
            uniq, inverse, counts = np.unique(idx, return_inverse=True, return_counts=True)
            if self.log is not None:
                self._remember(arr, uniq, region)
            if counts.size == idx.size:
                old = arr[idx]
                arr[idx] = update(old, src)
            else:
                old = np.empty(idx.size, dt)
                single = counts[inverse] == 1
                if single.any():
                    pos = np.flatnonzero(single)
                    old[pos] = arr[idx[pos]]
                    arr[idx[pos]] = update(old[pos], src[pos])
                order = np.argsort(inverse, kind="stable")
                order = order[~single[order]]
                grp = inverse[order]
                starts = np.flatnonzero(np.r_[True, grp[1:] != grp[:-1]])
                ends = np.r_[starts[1:], grp.size]
                for s0, e0 in zip(starts.tolist(), ends.tolist()):
                    pos = order[s0:e0]
                    at = idx[pos[:1]]
                    olds, final = scan(arr[at], src[pos])
                    old[pos] = olds
                    arr[at] = final
            if lanes is None:
                out[:] = old
            else:
                out[lanes] = old
        return out.reshape(v.shape)
