"""Where an interpreted launch's pointers land in real memory: each array argument's bytes (:class:`Region`),
the live arrays a host-made address may point into (:class:`HostMemory`) and bytes at arbitrary addresses
(:class:`RawBytes`). The accesses, their checks and the undo log are memory.py.

Each array argument gets its own 2**41-byte slot of int64 addresses: argument ``k`` (from 1) is mapped
so that its data pointer lands in the middle of ``[2k << 40, (2k + 2) << 40)``, keeping the real
address's low 12 bits (kernels that test alignment see the same remainders). So a pointer names its
argument by its address alone, even after it has walked out of the argument's memory by any sane
amount; 0 (a null pointer) belongs to no argument. ``V.mem`` carries the argument along pointer
arithmetic too, which makes the common case one subtraction.

A pointer made from an integer that is no argument's virtual address may be a real host address that the
host program took (``a.ctypes.data``, ``t.data_ptr()``) and passed in an array, as Triton's grouped GEMM
tutorial does: Triton's interpreter runs on real addresses, so that works there. Here such an address is
accepted when it lies in the memory of a numpy array or CPU torch tensor that is alive (:class:`HostMemory`:
found once per launch, on the first such access, through the objects Python can reach), and the access is
checked against that memory like an argument's. Memory no live array holds (freed, foreign, null) is refused.
"""
from __future__ import annotations

import ctypes
import gc
import sys
import weakref
from typing import Any

import numpy as np

#: ``address >> SLOT_SHIFT`` is the index of the argument whose slot holds the address
SLOT_SHIFT = 41

# arrays over argument memory by (address, size), reused by later launches that pass the same arrays
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


class RawBytes:
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
