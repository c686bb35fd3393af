"""Reading an AMDGPU code object without ROCm: the ELF header (machine 0xE0, the chip in ``e_flags``), the dynamic
symbols (kernels, their ``.kd`` descriptors, anything left undefined), the 64-byte kernel descriptors, and the
``NT_AMDGPU_METADATA`` note (MessagePack: kernel names, argument offsets, register and LDS use).

The compiler reads its resource figures from here; the tests check every code object with :func:`check`.
Layouts: LLVM's AMDGPUUsage ("Code Object V5 Metadata", "Kernel Descriptor").
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any, Optional

EM_AMDGPU = 0xE0
ET_DYN = 3
NT_AMDGPU_METADATA = 32
EF_AMDGPU_MACH = 0xFF
SHT_SYMTAB, SHT_NOTE, SHT_DYNSYM = 2, 7, 11


class CodeObjectError(ValueError):
    pass


@dataclass
class KernelInfo:
    name: str
    kernarg_size: int            # bytes of the kernarg segment (explicit arguments, then hidden ones)
    group_segment: int           # static LDS bytes
    private_segment: int         # scratch bytes per work-item (spills, stack)
    vgprs: int
    agprs: int
    sgprs: int
    vgpr_spills: int
    sgpr_spills: int
    wavefront_size: int
    max_flat_workgroup_size: int
    args: list[dict] = field(default_factory=list)      # {"offset", "size", "value_kind"}
    descriptor: dict = field(default_factory=dict)       # fields of the 64-byte kernel descriptor

    @property
    def explicit_args(self) -> list[dict]:
        return [a for a in self.args if not str(a.get("value_kind", "")).startswith("hidden_")]


@dataclass
class CodeObject:
    e_type: int
    machine: int
    flags: int
    abi_version: int
    kernels: list[KernelInfo]
    undefined: list[str]
    metadata: dict

    @property
    def mach(self) -> int:
        return self.flags & EF_AMDGPU_MACH


def _sections(data: bytes) -> list[tuple[str, int, int, int, int, int]]:
    """(name, type, offset, size, link, entsize) of every section."""
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    raw = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab_off = raw[shstrndx][4]

    def name(off: int) -> str:
        end = data.index(b"\0", strtab_off + off)
        return data[strtab_off + off:end].decode()
    return [(name(s[0]), s[1], s[4], s[5], s[6], s[9]) for s in raw]


def _symbols(data: bytes, secs: list, kind: int) -> list[tuple[str, int, int, int]]:
    """(name, value, size, section index) of the symbols of the first section of ``kind``."""
    for _, t, off, size, link, ent in secs:
        if t != kind:
            continue
        stroff = secs[link][2]
        out = []
        for i in range(1, size // ent):
            st_name, st_info, st_other, st_shndx, st_value, st_size = struct.unpack_from("<IBBHQQ", data, off + i * ent)
            end = data.index(b"\0", stroff + st_name)
            out.append((data[stroff + st_name:end].decode(), st_value, st_size, st_shndx))
        return out
    return []


def _file_offset(data: bytes, vaddr: int) -> int:
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    for i in range(phnum):
        p_type, _, p_offset, p_vaddr, _, p_filesz, _, _ = struct.unpack_from("<IIQQQQQQ", data, phoff + i * phentsize)
        if p_type == 1 and p_vaddr <= vaddr < p_vaddr + p_filesz:
            return p_offset + vaddr - p_vaddr
    raise CodeObjectError(f"address {vaddr:#x} is in no loaded segment")


def _descriptor(raw: bytes) -> dict:
    group, private, kernarg = struct.unpack_from("<III", raw, 0)
    rsrc3, rsrc1, rsrc2 = struct.unpack_from("<III", raw, 44)
    props, = struct.unpack_from("<H", raw, 56)
    return {"group_segment_fixed_size": group, "private_segment_fixed_size": private, "kernarg_size": kernarg,
            "compute_pgm_rsrc1": rsrc1, "compute_pgm_rsrc2": rsrc2, "compute_pgm_rsrc3": rsrc3,
            "kernel_code_properties": props,
            # granulated VGPR count (rsrc1 bits 0-5): blocks of 8 registers for wave64 on CDNA
            "vgpr_blocks": (rsrc1 & 0x3F) + 1, "wavefront_size32": bool(props & (1 << 10))}


def _notes(data: bytes, off: int, size: int) -> list[tuple[str, int, bytes]]:
    out, i = [], off
    while i + 12 <= off + size:
        namesz, descsz, ntype = struct.unpack_from("<III", data, i)
        name = data[i + 12:i + 12 + namesz].rstrip(b"\0").decode(errors="replace")
        d0 = i + 12 + (namesz + 3) // 4 * 4
        out.append((name, ntype, data[d0:d0 + descsz]))
        i = d0 + (descsz + 3) // 4 * 4
    return out


def read(data: bytes) -> CodeObject:
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise CodeObjectError("not a 64-bit ELF file")
    e_type, machine = struct.unpack_from("<HH", data, 16)
    flags, = struct.unpack_from("<I", data, 0x30)
    secs = _sections(data)
    meta: dict = {}
    for _, t, off, size, _, _ in secs:
        if t == SHT_NOTE:
            for name, ntype, desc in _notes(data, off, size):
                if name == "AMDGPU" and ntype == NT_AMDGPU_METADATA:
                    meta = unpackb(desc)
    syms = _symbols(data, secs, SHT_DYNSYM) or _symbols(data, secs, SHT_SYMTAB)
    undefined = [n for n, _, _, shndx in syms if shndx == 0 and n]
    by_name = {n: (v, s) for n, v, s, _ in syms}
    kernels = []
    for k in meta.get("amdhsa.kernels", []):
        sym = k.get(".symbol", k.get(".name", "") + ".kd")
        desc = {}
        if sym in by_name:
            v, s = by_name[sym]
            start = _file_offset(data, v)
            desc = _descriptor(data[start:start + 64])
        kernels.append(KernelInfo(
            name=k.get(".name", ""), kernarg_size=k.get(".kernarg_segment_size", 0),
            group_segment=k.get(".group_segment_fixed_size", 0),
            private_segment=k.get(".private_segment_fixed_size", 0), vgprs=k.get(".vgpr_count", 0),
            agprs=k.get(".agpr_count", 0), sgprs=k.get(".sgpr_count", 0),
            vgpr_spills=k.get(".vgpr_spill_count", 0), sgpr_spills=k.get(".sgpr_spill_count", 0),
            wavefront_size=k.get(".wavefront_size", 0), max_flat_workgroup_size=k.get(".max_flat_workgroup_size", 0),
            args=[{key.lstrip("."): v for key, v in a.items()} for a in k.get(".args", [])], descriptor=desc))
    return CodeObject(e_type, machine, flags, data[8], kernels, undefined, meta)


def check(data: bytes, chip: Any, kernel: str, arg_sizes: list[int], threads: Optional[int] = None) -> CodeObject:
    """Everything a loader and the chip require of a tritium code object, or CodeObjectError naming what is wrong:
    an AMDGPU shared object for ``chip`` with exactly one kernel, ``kernel``, whose explicit arguments are the
    signature's (sizes ``arg_sizes``, each at its natural alignment), whose LDS and registers fit the chip, and no
    undefined symbol."""
    co = read(data)
    problems = []
    if co.machine != EM_AMDGPU:
        problems.append(f"e_machine is {co.machine:#x}, not EM_AMDGPU (0xE0)")
    if co.e_type != ET_DYN:
        problems.append(f"e_type is {co.e_type}, not a shared object")
    if co.mach != chip.mach:
        problems.append(f"e_flags name machine {co.mach:#x}, not {chip.name} ({chip.mach:#x})")
    if co.undefined:
        problems.append(f"undefined symbols: {', '.join(co.undefined)}")
    if [k.name for k in co.kernels] != [kernel]:
        problems.append(f"kernels {[k.name for k in co.kernels]}, expected [{kernel!r}]")
    for k in co.kernels:
        want, off = [], 0
        for size in arg_sizes:
            off = (off + size - 1) // size * size
            want.append((off, size))
            off += size
        got = [(a.get("offset"), a.get("size")) for a in k.explicit_args]
        if got != want:
            problems.append(f"explicit kernel arguments (offset, size) {got}, signature needs {want}")
        if k.kernarg_size < off or k.descriptor.get("kernarg_size") != k.kernarg_size:
            problems.append(f"kernarg segment of {k.kernarg_size} bytes (descriptor: "
                            f"{k.descriptor.get('kernarg_size')}) for {off} bytes of arguments")
        if not k.descriptor:
            problems.append(f"no kernel descriptor {kernel}.kd")
        if k.descriptor.get("group_segment_fixed_size") != k.group_segment or k.group_segment > chip.lds_bytes:
            problems.append(f"LDS {k.group_segment} bytes (descriptor {k.descriptor.get('group_segment_fixed_size')})"
                            f", {chip.name} has {chip.lds_bytes}")
        # on CDNA2+ .vgpr_count is arch VGPRs (rounded up to 4) plus AGPRs, out of one 512-register file
        arch = k.vgprs - k.agprs if chip.agprs else k.vgprs
        if k.vgprs > chip.register_file or arch > chip.vgprs or k.agprs > chip.agprs or k.sgprs > chip.sgprs:
            problems.append(f"registers v{k.vgprs} (a{k.agprs}) s{k.sgprs} over {chip.name}'s "
                            f"{chip.register_file} (v{chip.vgprs} a{chip.agprs}) s{chip.sgprs}")
        if threads is not None and k.max_flat_workgroup_size < threads:
            problems.append(f"max flat workgroup size {k.max_flat_workgroup_size} < {threads} threads launched")
    if problems:
        raise CodeObjectError(f"code object of `{kernel}` for {chip.name}: " + "; ".join(problems))
    return co


# -- MessagePack (the metadata note's encoding), decoding only ------------------------------------------------
def unpackb(data: bytes) -> Any:
    value, end = _unpack(data, 0)
    return value


def _unpack(b: bytes, i: int) -> tuple[Any, int]:
    c = b[i]
    i += 1
    if c <= 0x7F:
        return c, i
    if c >= 0xE0:
        return c - 0x100, i
    if 0x80 <= c <= 0x8F:
        return _map(b, i, c & 0x0F)
    if 0x90 <= c <= 0x9F:
        return _array(b, i, c & 0x0F)
    if 0xA0 <= c <= 0xBF:
        n = c & 0x1F
        return b[i:i + n].decode(), i + n
    simple = {0xC0: None, 0xC2: False, 0xC3: True}
    if c in simple:
        return simple[c], i
    fixed = {0xCC: "B", 0xCD: ">H", 0xCE: ">I", 0xCF: ">Q", 0xD0: "b", 0xD1: ">h", 0xD2: ">i", 0xD3: ">q",
             0xCA: ">f", 0xCB: ">d"}
    if c in fixed:
        fmt = fixed[c]
        return struct.unpack_from(fmt, b, i)[0], i + struct.calcsize(fmt)
    if c in (0xD9, 0xDA, 0xDB, 0xC4, 0xC5, 0xC6):
        width = {0xD9: 1, 0xDA: 2, 0xDB: 4, 0xC4: 1, 0xC5: 2, 0xC6: 4}[c]
        n = int.from_bytes(b[i:i + width], "big")
        i += width
        raw = b[i:i + n]
        return (raw.decode() if c >= 0xD9 else bytes(raw)), i + n
    if c in (0xDC, 0xDD):
        width = 2 if c == 0xDC else 4
        return _array(b, i + width, int.from_bytes(b[i:i + width], "big"))
    if c in (0xDE, 0xDF):
        width = 2 if c == 0xDE else 4
        return _map(b, i + width, int.from_bytes(b[i:i + width], "big"))
    raise CodeObjectError(f"unsupported MessagePack type byte {c:#x} in the metadata note")


def _array(b: bytes, i: int, n: int) -> tuple[list, int]:
    out = []
    for _ in range(n):
        v, i = _unpack(b, i)
        out.append(v)
    return out, i


def _map(b: bytes, i: int, n: int) -> tuple[dict, int]:
    out = {}
    for _ in range(n):
        k, i = _unpack(b, i)
        v, i = _unpack(b, i)
        out[k] = v
    return out, i
