"""What tritium-amd knows about each AMD GPU it compiles for: the ELF machine flag the code object must carry,
the wavefront size, and the per-kernel limits the code-object checks hold it to.

Sources: LLVM's AMDGPUUsage (EF_AMDGPU_MACH values, register files) and AMD's CDNA ISA guides (LDS sizes)."""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Chip:
    name: str
    mach: int                  #: EF_AMDGPU_MACH_AMDGCN_* (low byte of e_flags)
    wave: int                  #: default wavefront size (64 on GCN/CDNA, 32 on RDNA)
    lds_bytes: int             #: LDS one workgroup may allocate
    vgprs: int                 #: architectural VGPRs per lane (v0..)
    agprs: int                 #: accumulation VGPRs per lane (CDNA's MFMA results); 0 where there are none
    sgprs: int                 #: addressable SGPRs (without VCC and the trap registers)
    #: MFMA operand types ("f16", "bf16", "f32", "xf32", "i8"; "fp8fnuz"/"fp8ocp": the fp8 encodings its fp8 MFMA reads)
    mfma: frozenset = frozenset()
    family: str = "cdna"

    @property
    def register_file(self) -> int:
        """VGPRs one lane may use in all: CDNA2 and later allocate arch VGPRs and AGPRs from one file (the
        metadata's ``.vgpr_count`` then counts both)."""
        return self.vgprs + self.agprs

    @property
    def wave32_capable(self) -> bool:
        return self.family == "rdna"


_CDNA2_MFMA = frozenset({"f16", "bf16", "f32", "i8"})
CHIPS = {c.name: c for c in (
    Chip("gfx90a", 0x3F, 64, 64 * 1024, 256, 256, 102, _CDNA2_MFMA),
    Chip("gfx942", 0x4C, 64, 64 * 1024, 256, 256, 102, _CDNA2_MFMA | {"xf32", "fp8fnuz"}),
    Chip("gfx950", 0x4F, 64, 160 * 1024, 256, 256, 102, _CDNA2_MFMA | {"fp8ocp"}),
    Chip("gfx1100", 0x41, 32, 64 * 1024, 256, 0, 106, family="rdna"),
    Chip("gfx1101", 0x46, 32, 64 * 1024, 256, 0, 106, family="rdna"),
    Chip("gfx1200", 0x48, 32, 64 * 1024, 256, 0, 106, family="rdna"),
    Chip("gfx1201", 0x4E, 32, 64 * 1024, 256, 0, 106, family="rdna"),
)}
#: the chips every test compiles for
CDNA = ("gfx90a", "gfx942", "gfx950")
MACH_NAMES = {c.mach: c.name for c in CHIPS.values()}


class UnsupportedChip(ValueError):
    pass


def chip(arch: object) -> Chip:
    """The chip of an architecture name: 'gfx942', 'gfx942:sramecc+:xnack-' (features are ignored here)."""
    name = str(arch).split(":", 1)[0].strip().lower()
    if not re.fullmatch(r"gfx[0-9a-f]+", name):
        raise UnsupportedChip(f"cannot read AMD architecture {arch!r}: expected a name like 'gfx942'")
    got = CHIPS.get(name)
    if got is None:
        raise UnsupportedChip(f"tritium-amd does not know {name}; it compiles for {', '.join(sorted(CHIPS))}: "
                              f"compile for one of those with GPUTarget('hip', 'gfx942', 64)")
    return got
