"""Linking the emulator's kernel objects into the process: the C library functions their code calls, and a check
that every symbol an object needs is there. MCJIT does not fail on a symbol it cannot find: the call jumps to a
bad address and the process dies (as ``libdevice.pow(x, int)`` did, compiled by x86 into a call to ``__powisf2``),
so the launcher refuses such an object with the missing names instead."""
from __future__ import annotations

import ctypes
import struct

from ..llvmir.jit_symbols import add_process_symbols

LIB_SYMBOLS = ("pthread_barrier_wait", "printf", "fflush", "expf", "exp2f", "logf", "log2f", "sinf", "cosf",
               "tanf", "erff", "tanhf", "powf", "atan2f", "atanf", "asinf", "acosf", "sinhf", "coshf", "log1pf",
               "expm1f", "cbrtf", "log10f", "exp10f", "fmodf", "exp", "exp2", "log", "log2", "sin", "cos", "tan",
               "erf", "tanh", "pow", "atan2", "atan", "asin", "acos", "sinh", "cosh", "log1p", "expm1", "cbrt",
               "log10", "exp10", "fmod", "roundevenf", "roundeven", "memset", "memcpy", "sched_yield",
               # x86 code generation turns llvm.powi into these runtime calls (math.fpowi: libdevice.pow(x, int))
               "__powisf2", "__powidf2",
               # and llvm.minnum/maxnum on fp16 (no native fp16 here) into calls of the fp32 ones
               "fminf", "fmaxf")
_loaded = False


def load_symbols() -> None:
    global _loaded
    if _loaded:
        return
    libs = [ctypes.CDLL(None), ctypes.CDLL("libm.so.6")]
    try:
        libs.append(ctypes.CDLL("libgcc_s.so.1"))
    except OSError:         # then an object calling its helpers is refused by check_symbols
        pass
    add_process_symbols(LIB_SYMBOLS, libs)
    _loaded = True


def undefined_symbols(obj: bytes) -> list[str]:
    """The global symbols a 64-bit little-endian ELF relocatable object uses without defining (weak ones aside)."""
    if obj[:4] != b"\x7fELF" or obj[4] != 2 or obj[5] != 1:
        return []
    shoff, = struct.unpack_from("<Q", obj, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", obj, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", obj, shoff + i * shentsize) for i in range(shnum)]
    out = []
    for _name, kind, _flags, _addr, offset, size, link, _info, _align, entsize in sections:
        if kind != 2:                                    # SHT_SYMTAB
            continue
        strtab = sections[link][4]
        for k in range(1, size // (entsize or 24)):
            st_name, st_info, _other, shndx = struct.unpack_from("<IBBH", obj, offset + k * (entsize or 24))
            if shndx == 0 and st_name and st_info >> 4 == 1:    # undefined, STB_GLOBAL
                end = obj.index(b"\0", strtab + st_name)
                out.append(obj[strtab + st_name:end].decode())
    return out


def check_symbols(kernel: str, obj: bytes) -> None:
    import llvmlite.binding as llvm
    missing = sorted(s for s in undefined_symbols(obj) if not llvm.address_of_symbol(s))
    if missing:
        raise RuntimeError(f"kernel `{kernel}`: its code calls {', '.join(missing)}, which the GPU emulator does not "
                           "provide (it links the C math library's functions and libdevice's); add the symbol to "
                           "tritium.gpu.emulator_link.LIB_SYMBOLS if the C library has it")
