"""Run by test_far_sections.py in its own process: loads a compiled kernel whose code and constants
(.text, .rodata.cst*) would land more than 2 GiB apart if each section got its own mapping, and runs it.

The address space is arranged so that the only free gap near the other mappings is one page (enough for
a small kernel's code alone) and everything below lies past a 4 GiB reservation: a loader that maps sections
one by one puts the code in that page and the constants past the reservation, out of reach of the code's
32-bit PC-relative references."""
import ctypes
import sys

import numpy as np

import tritium
import tritium.language as tl
from tritium.compiler import ASTSource
from tritium.runtime.driver import driver

PAGE = 4096
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
MAP_PRIVATE, MAP_ANONYMOUS, MAP_NORESERVE, MAP_FIXED_NOREPLACE = 0x02, 0x20, 0x4000, 0x100000


def reserve(size: int, at: int = 0) -> int:
    """Address space only (PROT_NONE, no memory committed)."""
    flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | (MAP_FIXED_NOREPLACE if at else 0)
    addr = libc.mmap(at or None, size, 0, flags, -1, 0)
    if addr in (None, ctypes.c_void_p(-1).value) or (at and addr != at):
        raise OSError(ctypes.get_errno(), "mmap")
    return addr


def fill_gaps_near_mappings() -> None:
    """Reserve every gap between the mappings of the shared-library/mmap area, so that the next mappings go
    below all of them (the kernel places mmap top-down, in the highest gap that fits)."""
    spans = []
    for line in open("/proc/self/maps"):
        lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
        if "[stack]" in line:
            break
        spans.append((lo, hi))
    spans.sort()
    top = [s for s in spans if s[0] >= spans[-1][1] - (1 << 40)]   # the mmap area, not the heap or the binary
    for (_, hi), (lo, _) in zip(top, top[1:]):
        if lo > hi:
            reserve(lo - hi, hi)


@tritium.jit
def horner(x_ptr, y_ptr, n, TERMS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in tl.static_range(TERMS):
        acc = acc * x + (0.37 + 0.011 * i)   # a vector constant per term: they sit in the object's .rodata
    tl.store(y_ptr + offs, acc, mask=m)


def main() -> None:
    x = np.linspace(-1, 1, 64).astype(np.float32)
    y = np.empty_like(x)
    horner[(1,)](x, y, 64, TERMS=2, BLOCK=64)      # the JIT engine and its first mappings exist from here on
    sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "TERMS": "constexpr", "BLOCK": "constexpr"}
    kernel = tritium.compile(ASTSource(horner, sig, {"TERMS": 9, "BLOCK": 64}))   # compiled, not loaded

    fill_gaps_near_mappings()
    page = reserve(PAGE)           # lands just below the lowest mapping...
    reserve(4 << 30)               # ...and this below it (aligned: it may leave a gap above)
    fill_gaps_near_mappings()
    libc.munmap(page, PAGE)        # the one free page above the 4 GiB reservation
    launcher = driver.active.make_launcher(kernel)   # loads the object into the process's JIT engine

    ref = np.zeros_like(x)
    for i in range(9):
        ref = ref * x + np.float32(0.37 + 0.011 * i)
    horner[(1,)](x, y, 64, TERMS=9, BLOCK=64)
    assert np.allclose(y, ref, rtol=1e-5), (y, ref)
    print("ok", launcher is not None)


if __name__ == "__main__":
    sys.exit(main())
