"""The memory of an interpreted launch: arguments mapped into a virtual address space, bounds-checked
loads, stores and atomics, and an undo log.

Each array argument gets its own 2**41-byte slot of int64 addresses: argument ``k`` (from 1) is mapped
so that its data pointer lands in the middle of ``[2k << 40, (2k + 2) << 40)``, keeping the real
address's low 12 bits (kernels that test alignment see the same remainders). So a pointer names its
argument by its address alone, even after it has walked out of the argument's memory by any sane
amount; 0 (a null pointer) belongs to no argument. ``V.mem`` carries the argument along pointer
arithmetic too, which makes the common case one subtraction.

An access is checked against the bytes the argument spans (its strides included): the lanes that the
mask leaves on must lie inside. With the check off, such lanes touch the real memory at that address,
as compiled code would.

A pointer made from an integer that is no argument's virtual address may be a real host address that the
host program took (``a.ctypes.data``, ``t.data_ptr()``) and passed in an array, as Triton's grouped GEMM
tutorial does: Triton's interpreter runs on real addresses, so that works there. Here such an address is
accepted when it lies in the memory of a numpy array or CPU torch tensor that is alive (:class:`HostMemory`:
found once per launch, on the first such access, through the objects Python can reach), and the access is
checked against that memory like an argument's. Memory no live array holds (freed, foreign, null) is refused.

Stores and atomics go straight to memory (later loads of the same launch must see them). While the
launcher runs several programs as one batch it keeps an undo log, so that a batch whose programs turn
out to take different paths can be rolled back and rerun (see :mod:`.launcher`).
"""
from __future__ import annotations

import ctypes
import gc
import sys
import weakref
from typing import Any, Callable, Optional

import numpy as np

from .values import MEMORY

SLOT_SHIFT = 41


_BUFFERS: dict[tuple[int, int], tuple[np.ndarray, dict]] = {}
# ids of the arrays this module makes over other arrays' memory (weakly held): HostMemory.scan must not take
# them for the user's, or a read-only array would look writable through them
_OWN: dict[int, Any] = {}


def _own(a: np.ndarray) -> np.ndarray:
    _OWN[id(a)] = weakref.ref(a, lambda _ref, key=id(a): _OWN.pop(key, None))
    return a


def _bytes_at(address: int, nbytes: int) -> tuple[np.ndarray, dict]:
    """A uint8 array over ``nbytes`` of memory at ``address`` (and a cache of its typed views). Launches pass
    the same arrays again and again: the arrays are remembered by address and size, which stays correct when
    the memory changes hands, since the array reads whatever is at that address now."""
    key = (address, nbytes)
    hit = _BUFFERS.get(key)
    if hit is not None:
        return hit
    if nbytes > 0:
        buf = _own(np.ctypeslib.as_array((ctypes.c_uint8 * nbytes).from_address(address)))
    else:
        buf = np.zeros(0, np.uint8)
    if len(_BUFFERS) >= 256:
        _BUFFERS.clear()
    hit = _BUFFERS[key] = (buf, {})
    return hit


class Region:
    """One array argument's bytes."""

    def __init__(self, index: int, name: str, obj: Any, data_ptr: int, lo: int, hi: int, desc: str) -> None:
        self.index = index
        self.name = name
        self.obj = obj                      # kept alive while the launch runs
        self.nbytes = hi - lo
        self.real_start = data_ptr + lo
        self.vdata = ((2 * index + 1) << 40) + (data_ptr & 0xFFF)
        self.vstart = self.vdata + lo       # virtual address of the span's first byte
        self.data_off = -lo                 # where element 0 lies in the span
        self.desc = desc
        self.readonly = False               # read-only memory: stores through it are refused (the launcher sets it)
        self.buf, self._views = _bytes_at(self.real_start, self.nbytes)

    def view(self, dt: np.dtype) -> np.ndarray:
        v = self._views.get(dt)
        if v is None:
            n = self.nbytes - self.nbytes % dt.itemsize
            v = self._views[dt] = _own(self.buf[:n].view(dt))
        return v


class HostMemory:
    """The memory of the numpy arrays and CPU torch tensors alive at the time of the scan, as disjoint byte
    intervals (overlapping arrays, e.g. views, merge into one), each usable as a :class:`Region` whose virtual
    addresses are the real ones. An interval is read-only when every array over it is."""

    def __init__(self, spans: list[tuple[int, int, bool]]) -> None:
        merged: list[list[Any]] = []
        for start, end, writeable in sorted(spans):
            if merged and start < merged[-1][1]:
                last = merged[-1]
                last[1] = max(last[1], end)
                last[2] = last[2] or writeable
            else:
                merged.append([start, end, writeable])
        self.starts = np.array([m[0] for m in merged], np.int64)
        self.ends = np.array([m[1] for m in merged], np.int64)
        self.writeable = [m[2] for m in merged]
        self.regions: dict[int, Region] = {}

    @classmethod
    def scan(cls) -> "HostMemory":
        """Every array reachable from the objects the garbage collector tracks or from the frames on the stack,
        descending into the containers it does not track (a tuple or dict holding only arrays is untracked, and
        numpy arrays never are tracked)."""
        torch = sys.modules.get("torch")
        tensor_type = getattr(torch, "Tensor", None)
        # plain tensors only: a subclass (torch.compile's FakeTensor, wrappers) has no memory of its own to accept
        plain_tensors = (tensor_type, getattr(getattr(torch, "nn", None), "Parameter", None))
        byte_bounds = getattr(np, "byte_bounds", None)   # numpy 1; numpy 2 moved it
        if byte_bounds is None:
            from numpy.lib.array_utils import byte_bounds
        spans: list[tuple[int, int, bool]] = []
        seen: set[int] = set()

        def record(o: Any) -> None:
            if isinstance(o, np.ndarray):
                if o.size and id(o) not in _OWN:
                    lo, hi = byte_bounds(o)
                    spans.append((int(lo), int(hi), bool(o.flags.writeable)))
            elif type(o) in plain_tensors:
                try:
                    if o.device.type != "cpu":
                        return
                    storage = o.untyped_storage()
                    start, nbytes = int(storage.data_ptr()), int(storage.nbytes())
                except (RuntimeError, TypeError, NotImplementedError, AttributeError):
                    return   # a tensor without plain storage (sparse, a wrapper): its memory is not accepted
                if nbytes:
                    spans.append((start, start + nbytes, True))

        roots: list[Any] = gc.get_objects()
        f: Any = sys._getframe()
        while f is not None:
            # a running frame's locals are no referents of its frame object: ask for them
            roots.append(f.f_locals)
            f = f.f_back
        kinds = (np.ndarray, ) if tensor_type is None else (np.ndarray, tensor_type)
        work = roots
        while work:
            more = []
            for o in work:
                if issubclass(type(o), kinds):
                    if id(o) not in seen:
                        seen.add(id(o))
                        record(o)
                    continue
                for r in gc.get_referents(o):
                    if issubclass(type(r), kinds):   # type(): no __class__ of proxies
                        if id(r) not in seen:
                            seen.add(id(r))
                            record(r)
                    elif type(r) in (tuple, list, dict, set, frozenset) and not gc.is_tracked(r) and id(r) not in seen:
                        seen.add(id(r))
                        more.append(r)
            work = more
        return cls(spans)

    def lookup(self, addrs: np.ndarray) -> np.ndarray:
        """The interval holding each address (its first byte), or -1."""
        i = np.searchsorted(self.starts, addrs, side="right") - 1
        ok = i >= 0
        ok[ok] = addrs[ok] < self.ends[i[ok]]
        return np.where(ok, i, -1)

    def region(self, i: int) -> Region:
        r = self.regions.get(i)
        if r is None:
            start, end = int(self.starts[i]), int(self.ends[i])
            # negative indices: host intervals are no argument slot, and the undo log keys snapshots by index
            r = Region(-1 - i, f"host memory at {start:#x}", None, start, 0, end - start,
                       f"{end - start} bytes of a live array, reached through an address")
            r.vdata = r.vstart = start
            r.readonly = not self.writeable[i]
            self.regions[i] = r
        return r


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
        if region is not None and not isinstance(arr, _RawBytes):
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
        groups.append((_RawBytes(region.real_start + off[lanes], dt), np.arange(lanes.size), lanes))
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


class _RawBytes:
    """Elements at arbitrary real addresses (misaligned ones, or any address with the bounds check off),
    indexable like an array by lane position."""

    def __init__(self, addrs: np.ndarray, dt: np.dtype) -> None:
        self.addrs = addrs.astype(np.int64)
        self.dt = dt

    def _cell(self, i: int) -> np.ndarray:
        size = self.dt.itemsize
        cbuf = (ctypes.c_uint8 * size).from_address(int(self.addrs[i]))
        return np.ctypeslib.as_array(cbuf)

    def __getitem__(self, idx: Any) -> np.ndarray:
        idx = np.atleast_1d(idx)
        out = np.empty(idx.size, self.dt)
        raw = out.view(np.uint8).reshape(idx.size, self.dt.itemsize)
        for k, i in enumerate(idx):
            raw[k] = self._cell(int(i))
        return out

    def __setitem__(self, idx: Any, vals: Any) -> None:
        idx = np.atleast_1d(idx)
        vals = np.broadcast_to(np.asarray(vals, self.dt), idx.shape)
        raw = np.ascontiguousarray(vals).view(np.uint8).reshape(idx.size, self.dt.itemsize)
        for k, i in enumerate(idx):
            self._cell(int(i))[:] = raw[k]
