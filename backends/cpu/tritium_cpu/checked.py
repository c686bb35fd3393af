"""Launching bounds-checked kernels (``TRITIUM_CPU_BOUNDS_CHECK``; the checks themselves: codegen/oob.py).

The launcher gives the kernel, for each argument, the extent of the buffer the argument's memory belongs to:
a torch tensor's storage, the allocation at the root of a numpy view chain (or the buffer it was made from).
An access anywhere in that buffer is allowed, even outside the argument's own shape, since kernels are given a
tensor and index its storage with their own strides; an access outside it reads or writes someone else's
memory, and is reported as the interpreter reports it: kernel, source line, program id, argument, offsets.
"""
from __future__ import annotations

import ctypes
import linecache
import sys
from typing import Any, Optional

from .launcher import _SLOT_FORMATS, CPULauncher

_UNKNOWN = (0, (1 << 64) - 1)   # nothing to check against (a CompiledKernel launched with raw addresses)


class _OOBState(ctypes.Structure):
    _fields_ = [("lock", ctypes.c_int32), ("failed", ctypes.c_int32), ("site", ctypes.c_int32),
                ("pid0", ctypes.c_int32), ("pid1", ctypes.c_int32), ("pid2", ctypes.c_int32),
                ("lin", ctypes.c_uint64), ("first", ctypes.c_uint64), ("lo", ctypes.c_uint64),
                ("hi", ctypes.c_uint64)]


def _span(addr: int, shape: tuple, strides: tuple, size: int) -> tuple[int, int]:
    """The bytes an array's elements cover (strides in bytes, possibly negative)."""
    if any(n == 0 for n in shape):
        return addr, addr
    lo = sum(min(0, (n - 1) * s) for n, s in zip(shape, strides))
    hi = sum(max(0, (n - 1) * s) for n, s in zip(shape, strides)) + size
    return addr + lo, addr + hi


def _numpy_span(a: Any) -> tuple[int, int]:
    return _span(a.__array_interface__["data"][0], a.shape, a.strides, a.itemsize)


def buffer_extent(obj: Any) -> tuple[int, int]:
    """[first byte, end) of the buffer an array argument lives in; everything when it cannot be told."""
    if type(obj).__name__ == "TensorWrapper" and getattr(obj, "base", None) is not None:
        obj = obj.base   # tritium.reinterpret: the same memory under another element type
    if hasattr(obj, "untyped_storage") and hasattr(obj, "data_ptr"):   # torch.Tensor
        storage = obj.untyped_storage()
        start = storage.data_ptr()
        return start, start + storage.nbytes()
    np = sys.modules.get("numpy")
    if np is not None and isinstance(obj, np.ndarray):
        root = obj
        while True:
            if isinstance(root.base, np.ndarray):
                root = root.base
            elif isinstance(getattr(root.base, "base", None), np.ndarray):
                root = root.base.base   # as_strided's interface holder keeps the array it views
            else:
                break
        lo, hi = _numpy_span(root)
        if root.base is not None:
            try:   # an array over bytes, an mmap, a bytearray...: the whole of that buffer
                whole = np.frombuffer(root.base, np.uint8)
                start = whole.__array_interface__["data"][0]
                lo, hi = min(lo, start), max(hi, start + whole.nbytes)
            except (TypeError, ValueError, AttributeError):
                pass
        own_lo, own_hi = _numpy_span(obj)
        return min(lo, own_lo), max(hi, own_hi)
    iface = getattr(obj, "__array_interface__", None)
    if iface is not None:
        dt = np.dtype(iface["typestr"]) if np is not None else None
        size = dt.itemsize if dt is not None else 1
        shape = tuple(iface["shape"])
        strides = iface.get("strides")
        if strides is None:
            strides, acc = [], size
            for n in reversed(shape):
                strides.insert(0, acc)
                acc *= n
        return _span(int(iface["data"][0]), shape, tuple(strides), size)
    return _UNKNOWN


def slot_arguments(kernel: Any, bound: Optional[tuple]) -> Optional[list[tuple[str, Any]]]:
    """(name, array or None) for each argument slot of the compiled kernel, from the launch's bound
    arguments (every parameter, in order): tuples are flattened, descriptors give their base, constexprs none."""
    src = kernel.src
    fn = getattr(src, "fn", None)
    if bound is None or fn is None:
        return None
    sig = getattr(src, "signature", {}) or {}
    out: list[tuple[str, Any]] = []
    for p, value in zip(fn.params, bound):
        _flatten(p.name, sig.get(p.name, "constexpr"), value, out)
    return out


def _flatten(name: str, sig: Any, value: Any, out: list) -> None:
    if isinstance(sig, tuple):
        for j, (s, v) in enumerate(zip(sig, value)):
            _flatten(f"{name}[{j}]", s, v, out)
        return
    if not isinstance(sig, str) or sig == "constexpr":
        return
    if sig.startswith("tensordesc"):
        out.append((f"{name}.base", value.base))
        out.extend([(name, None)] * (2 * len(value.shape) - 1))
        return
    out.append((name, value if sig.startswith("*") else None))


class CheckedLauncher(CPULauncher):
    """A CPULauncher that appends the arguments' buffer extents and raises what the kernel recorded."""

    #: the runtime passes the launch's bound arguments too (launch.py), for their buffers
    needs_arguments = True

    def __init__(self, kernel: Any, engine: Any, address: int, arg_names: list[str]) -> None:
        super().__init__(kernel, engine, address, arg_names)
        md = kernel.metadata_dict
        self.n_slots = len(self.types)
        self.sites = md.get("oob_sites", [])
        self.state = _OOBState.from_address(engine.get_global_value_address(f"{md['symbol']}_oob_state"))
        self.types = self.types + ["ptr"] * (2 * self.n_slots)   # [lo, hi) per argument, unsigned
        import struct
        self.pack = struct.Struct("<" + "".join("Q" if t == "ptr" else _fmt(t) for t in self.types)).pack

    def __call__(self, grid: tuple[int, int, int], args: tuple, bound: Optional[tuple] = None) -> None:
        slots = slot_arguments(self.kernel, bound)
        if slots is not None and len(slots) != self.n_slots:
            raise RuntimeError(f"internal error: kernel `{self.kernel.name}` has {self.n_slots} argument slots, "
                               f"the launch gave {len(slots)}")
        extents: list[int] = []
        for k, t in enumerate(self.types[:self.n_slots]):
            if t != "ptr":
                extents += [0, 0]
            elif slots is None or slots[k][1] is None:
                extents += list(_UNKNOWN)
            else:
                extents += list(buffer_extent(slots[k][1]))
        super().__call__(grid, tuple(args) + tuple(extents))
        if self.state.failed:
            self._raise(args, slots, extents)

    def _raise(self, args: tuple, slots: Optional[list], extents: list[int]) -> None:
        s = self.state
        found = (s.site, (s.pid0, s.pid1, s.pid2), s.first, s.lo, s.hi)
        ctypes.memset(ctypes.addressof(s), 0, ctypes.sizeof(s))
        from tritium.interpreter.errors import OutOfBoundsError
        raise OutOfBoundsError(oob_message(self.kernel, self.sites[found[0]], found[1:], args, slots, extents)) \
            from None


def _fmt(t: str) -> str:
    return _SLOT_FORMATS.get(t, "q") if t != "bfloat" else "H6x"


def oob_message(kernel: Any, site: list, found: tuple, args: tuple, slots: Optional[list],
                extents: list[int]) -> str:
    kind, file, line, col, roots, masked, size, scalar = site
    pid, first, lo, hi = found
    lines = [f"out-of-bounds {kind} in kernel `{kernel.name}` at {file}:{line}, program id {pid}:"]
    lines += _source(kernel, file, line, col)
    if scalar:
        lanes = "the access, which the mask enables," if masked else "the access (it has no mask)"
    else:
        lanes = "lanes that the mask enables" if masked else "lanes (the access has no mask)"
    verb = "falls" if scalar else "fall"
    if roots is None or slots is None:
        where = hex(lo) if lo == hi else f"{hex(lo)} to {hex(hi)} (first: {hex(first)})"
        lines.append(f"the pointer does not come from an argument (it was loaded from memory or made from an "
                     f"integer) and {lanes} {verb} in the null page: addresses {where}")
    else:
        names = ", ".join(f"`{slots[k][0]}`" for k in roots)
        if len(roots) == 1:
            k = roots[0]
            lines.append(f"the pointer was derived from argument {names} "
                         f"({_describe(slots[k][1], extents[2 * k + 1] - extents[2 * k])}); {lanes} {verb} outside "
                         "its buffer")
        else:
            lines.append(f"the pointer was derived from one of the arguments {names} (chosen at run time); {lanes} "
                         f"{verb} outside all of their buffers")
        for k in roots:
            whose = "the argument's" if len(roots) == 1 else f"`{slots[k][0]}`'s"
            lines.append(_offsets(int(args[k]), extents[2 * k], extents[2 * k + 1], size, (lo, hi, first), whose))
    lines.append("Fix the offsets, or mask the access (e.g. mask=offs < n); masked-off lanes are never checked. "
                 "The access was not made. TRITIUM_CPU_BOUNDS_CHECK=0 turns the check off.")
    return "\n".join(lines)


def _offsets(data: int, b_lo: int, b_hi: int, size: int, found: tuple, whose: str) -> str:
    """The offending offsets (lowest to highest, first) and the valid ones, from the argument's first element."""
    offs = [v - data for v in found]
    aligned = all(o % size == 0 for o in offs) and (data - b_lo) % size == 0
    unit = "element offsets" if aligned else "byte offsets"
    shown = [o // size for o in offs] if aligned else offs
    what = f"{shown[0]}" if shown[0] == shown[1] else f"{shown[0]} to {shown[1]} (first: {shown[2]})"
    if aligned:
        first_ok, last_ok = -((data - b_lo) // size), (b_hi - data) // size - 1
    else:
        first_ok, last_ok = b_lo - data, b_hi - data - size
    valid = f"{first_ok} to {last_ok}" if b_hi - b_lo >= size else "none: the buffer is empty"
    return f"{unit} from {whose} first element: {what} (valid: {valid})"


def _source(kernel: Any, file: str, line: int, col: int) -> list[str]:
    """The source line, stripped, with a caret under the access's column (columns are those of the kernel's
    dedented source; a device function elsewhere is taken as written)."""
    fn = getattr(kernel.src, "fn", None)
    text = None
    if fn is not None and getattr(fn, "filename", None) == file:
        rel = line - fn.first_line
        src_lines = fn.src.splitlines()
        if 0 <= rel < len(src_lines):
            text = src_lines[rel]
    if text is None:
        text = linecache.getline(file, line).rstrip("\n")
    if not text.strip():
        return []
    indent = len(text) - len(text.lstrip())
    caret = max(0, col - 1 - indent)
    return ["    " + text.strip(), "    " + " " * caret + "^"]


def _describe(obj: Any, nbytes: int) -> str:
    dtype = str(getattr(obj, "dtype", "?")).replace("torch.", "")
    shape = list(getattr(obj, "shape", []))
    return f"{dtype}{shape}, in a buffer of {nbytes} bytes"
