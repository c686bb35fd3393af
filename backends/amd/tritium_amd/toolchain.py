"""The two tools a code object needs besides llvmlite, both from the ``ziglang`` wheel: its clang's integrated
assembler (AMDGCN text -> relocatable object, so that an overridden ``amdgcn`` stage is what gets linked) and its
``ld.lld`` (object -> the shared object HIP loads). Nothing from ROCm."""
from __future__ import annotations

import functools
import importlib.util
import os
import subprocess
import tempfile

from .knobs import amd as amd_knobs


class ToolchainError(RuntimeError):
    pass


@functools.lru_cache(maxsize=None)
def _wheel_zig() -> str:
    spec = importlib.util.find_spec("ziglang")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        exe = os.path.join(folder, "zig")
        if os.path.isfile(exe):
            return exe
    return ""


def find_zig() -> str:
    exe = amd_knobs.zig_path or _wheel_zig()
    if not exe or not os.path.isfile(exe):
        raise ToolchainError("tritium-amd links code objects with the LLD of the `ziglang` wheel, which is not "
                             "installed: `pip install ziglang` (or set TRITIUM_AMD_ZIG to a zig executable)")
    return exe


@functools.lru_cache(maxsize=None)
def zig_version(exe: str) -> str:
    return subprocess.run([exe, "version"], capture_output=True, text=True, timeout=60).stdout.strip()


def _run(args: list[str], kernel: str, what: str) -> None:
    done = subprocess.run(args, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise ToolchainError(f"{what} of kernel `{kernel}` failed ({' '.join(args[:3])} ...):\n"
                             f"{(done.stderr or done.stdout).strip()}")


def build_code_object(asm: str, triple: str, cpu: str, features: str, kernel: str) -> bytes:
    """Assemble AMDGCN text and link it into a code object (an AMDGPU ELF shared object)."""
    zig = find_zig()
    with tempfile.TemporaryDirectory(prefix="tritium-amd-") as tmp:
        src, obj, out = (os.path.join(tmp, f"{kernel}.{ext}") for ext in ("s", "o", "hsaco"))
        with open(src, "w") as f:
            f.write(asm)
        cmd = [zig, "clang", "-cc1as", "-triple", triple, "-target-cpu", cpu, "-filetype", "obj"]
        for feat in filter(None, features.split(",")):
            cmd += ["-target-feature", feat]
        _run(cmd + [src, "-o", obj], kernel, "assembling the AMDGCN")
        _run([zig, "ld.lld", "-shared", "--no-undefined", obj, "-o", out], kernel, "linking the code object")
        with open(out, "rb") as f:
            return f.read()
