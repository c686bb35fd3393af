"""NVIDIA's tools, found without a CUDA installation being required: ptxas (PTX -> cubin) and libdevice
(precise math functions as LLVM bitcode).

ptxas is looked up, in order: ``TRITON_PTXAS_PATH``; the PATH; the ``nvidia-cuda-nvcc`` wheel; the CUDA
toolkit (``CUDA_HOME``, ``/usr/local/cuda``). When none is found and an NVIDIA driver is present, the
driver's JIT turns PTX into a cubin instead (:func:`jit_cubin`).
"""
from __future__ import annotations

import functools
import glob
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from typing import Optional

from .knobs import nvidia as nv_knobs

#: newest PTX ISA that llvmlite's NVPTX target (LLVM 22) writes
LLVM_MAX_PTX = 90


class PTXASError(RuntimeError):
    """ptxas rejected the PTX of a kernel. The message holds its output and a command to reproduce it."""


class ToolchainError(RuntimeError):
    pass


def _site_dirs() -> list[str]:
    out = []
    for name in ("nvidia", "triton"):
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is not None:
            out += list(spec.submodule_search_locations or [])
    return out


def _cuda_homes() -> list[str]:
    homes = [os.environ.get(v) for v in ("CUDA_HOME", "CUDA_PATH")]
    homes += ["/usr/local/cuda"] + sorted(glob.glob("/usr/local/cuda-*"), reverse=True)
    return [h for h in homes if h and os.path.isdir(h)]


def find_ptxas() -> Optional[str]:
    explicit = nv_knobs.ptxas_path
    if explicit:
        if not (os.path.isfile(explicit) and os.access(explicit, os.X_OK)):
            raise ToolchainError(f"TRITON_PTXAS_PATH={explicit!r} is not an executable file")
        return explicit
    return _find_ptxas_default()


@functools.lru_cache(maxsize=None)
def _find_ptxas_default() -> Optional[str]:
    on_path = shutil.which("ptxas")
    if on_path:
        return on_path
    for d in _site_dirs():
        if d.endswith("triton"):
            continue
        for cand in sorted(glob.glob(os.path.join(d, "**", "bin", "ptxas"), recursive=True)):
            if os.access(cand, os.X_OK):
                return cand
    for home in _cuda_homes():
        cand = os.path.join(home, "bin", "ptxas")
        if os.access(cand, os.X_OK):
            return cand
    return None


@functools.lru_cache(maxsize=None)
def ptxas_version(path: str) -> tuple[int, int]:
    """(major, minor) of the CUDA release a ptxas belongs to."""
    out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60).stdout
    m = re.search(r"release (\d+)\.(\d+)", out)
    if not m:
        raise ToolchainError(f"cannot read the version of {path} (`{path} --version` printed {out!r})")
    return int(m.group(1)), int(m.group(2))


def ptx_isa_for_cuda(major: int, minor: int) -> int:
    """The newest PTX ISA (as 10 * version) that a CUDA release's tools and driver accept."""
    if major >= 13:
        return 90 + (major - 13) * 10 + minor
    if major == 12:
        return 80 + minor if minor < 6 else 80 + minor - 1
    if major == 11:
        return 70 + minor
    raise ToolchainError(f"CUDA {major}.{minor} is too old for sm_80 code: tritium-nvidia needs CUDA 11.1 or newer")


def ptx_isa(capability: int) -> int:
    """The PTX ISA version to write: the newest that both LLVM and the assembler (or driver) accept."""
    path = find_ptxas()
    if path is not None:
        cuda = ptxas_version(path)
    else:
        cuda = driver_cuda_version()
        if cuda is None:
            cuda = (13, 0)
    isa = min(LLVM_MAX_PTX, ptx_isa_for_cuda(*cuda))
    need = 80 if capability >= 90 else 70
    if isa < need:
        raise ToolchainError(f"sm_{capability} needs PTX ISA {need // 10}.{need % 10}, but the CUDA tools found "
                             f"(CUDA {cuda[0]}.{cuda[1]}) accept at most {isa // 10}.{isa % 10}: update them")
    return isa


def driver_cuda_version() -> Optional[tuple[int, int]]:
    try:
        from cuda.bindings import driver as cu
        err, v = cu.cuDriverGetVersion()
        if int(err) != 0:
            return None
        return v // 1000, (v % 1000) // 10
    except Exception:
        return None


def arch_name(capability: int) -> str:
    """ptxas's name for a target: Hopper's and Blackwell's arch-specific features need the "a" variant."""
    return f"sm_{capability}a" if capability in (90, 100, 101, 103, 120, 121) else f"sm_{capability}"


@dataclass
class PtxasReport:
    registers: int = 0
    spill_bytes: int = 0
    stack_bytes: int = 0
    shared_bytes: int = 0
    text: str = ""


def parse_report(text: str) -> PtxasReport:
    rep = PtxasReport(text=text)
    m = re.search(r"Used (\d+) registers", text)
    if m:
        rep.registers = int(m.group(1))
    m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", text)
    if m:
        rep.stack_bytes, rep.spill_bytes = int(m.group(1)), int(m.group(2))
    m = re.search(r"(\d+) bytes smem", text)
    if m:
        rep.shared_bytes = int(m.group(1))
    return rep


def assemble(ptx: str, capability: int, kernel: str, extra: Optional[list[str]] = None) -> tuple[bytes, PtxasReport]:
    """PTX -> cubin with ptxas (``PTXAS_OPTIONS`` appended). On failure the PTX is kept and the error holds
    the command that reproduces it."""
    path = find_ptxas()
    if path is None:
        return jit_cubin(ptx, capability, kernel), PtxasReport()
    arch = arch_name(capability)
    opts = list(extra or []) + shlex.split(nv_knobs.ptxas_options or "")
    with tempfile.TemporaryDirectory(prefix="tritium-ptxas-") as tmp:
        src = os.path.join(tmp, f"{kernel}.ptx")
        out = os.path.join(tmp, f"{kernel}.cubin")
        with open(src, "w") as f:
            f.write(ptx)
        cmd = [path, "-v", f"--gpu-name={arch}", *opts, src, "-o", out]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            keep = tempfile.mkdtemp(prefix="tritium-ptxas-failed-")
            kept = os.path.join(keep, f"{kernel}.ptx")
            shutil.copy(src, kept)
            repro = " ".join(shlex.quote(c) for c in [path, f"--gpu-name={arch}", *opts, kept, "-o",
                                                        os.path.join(keep, f"{kernel}.cubin")])
            raise PTXASError(f"ptxas failed on kernel `{kernel}` (exit status {proc.returncode}):\n"
                             f"{proc.stderr.strip() or proc.stdout.strip()}\nreproduce with: {repro}")
        with open(out, "rb") as f:
            cubin = f.read()
    return cubin, parse_report(proc.stderr + proc.stdout)


def jit_cubin(ptx: str, capability: int, kernel: str) -> bytes:
    """PTX -> cubin through the NVIDIA driver's JIT (no ptxas on this machine)."""
    try:
        from .cuda import ensure_context, jit_link
    except ImportError as exc:
        raise ToolchainError(f"cannot make a cubin for kernel `{kernel}`: no ptxas was found (TRITON_PTXAS_PATH, "
                             "the PATH, the nvidia-cuda-nvcc wheel, CUDA_HOME) and the NVIDIA driver is not "
                             f"usable ({exc}); install ptxas with `pip install nvidia-cuda-nvcc` or set "
                             "TRITON_PTXAS_PATH") from None
    ensure_context()
    return jit_link(ptx, kernel)


def find_libdevice() -> Optional[str]:
    explicit = nv_knobs.libdevice_path
    if explicit:
        if not os.path.isfile(explicit):
            raise ToolchainError(f"TRITON_LIBDEVICE_PATH={explicit!r} is not a file")
        return explicit
    return _find_libdevice_default()


@functools.lru_cache(maxsize=None)
def _find_libdevice_default() -> Optional[str]:
    cands = []
    ptxas = _find_ptxas_default()
    if ptxas:
        cands.append(os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(ptxas))), "nvvm", "libdevice"))
    cands += [os.path.join(h, "nvvm", "libdevice") for h in _cuda_homes()]
    for d in _site_dirs():
        cands += glob.glob(os.path.join(d, "**", "libdevice"), recursive=True)
        cands.append(os.path.join(d, "backends", "nvidia", "lib"))
    for c in cands:
        f = os.path.join(c, "libdevice.10.bc")
        if os.path.isfile(f):
            return f
    return None


def file_digest(path: Optional[str]) -> str:
    if not path:
        return "none"
    import hashlib
    st = os.stat(path)
    return hashlib.sha256(f"{path}:{st.st_size}:{int(st.st_mtime)}".encode()).hexdigest()[:16]
