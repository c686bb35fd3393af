"""``tritium compile --emit-c`` objects link into shared libraries. The JIT's objects use x86-64's large code model
with absolute (static) relocations, which MCJIT needs (test_far_sections.py); linked into a shared library such an
object needs text relocations (DT_TEXTREL), which ``-z text``, lld's default and hardened toolchains refuse. The
object written for C hosts must be position-independent: at every x86-64 level this host runs, and for AArch64.
Each library is loaded with ctypes, run, and compared with the interpreter."""
from __future__ import annotations

import ctypes
import importlib.util
import os
import shutil
import subprocess
import textwrap

import numpy as np
import pytest

from tritium.tools import compile_cmd
from tritium_cpu import isa
from tritium_cpu.knobs import cpu as cpu_knobs

SELECTED = isa.environment_selects_level()
LEVELS = isa.levels_to_check()

# vector constants (one per term) sit in .rodata, the reduction and exp add more; the grid runs on threads
KERNELS = textwrap.dedent('''
    import tritium
    import tritium.language as tl

    @tritium.jit
    def poly(x_ptr, y_ptr, s_ptr, n, TERMS: tl.constexpr, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        x = tl.load(x_ptr + offs, mask=m, other=0.0)
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for i in tl.static_range(TERMS):
            acc = acc * x + (0.37 + 0.011 * i)
        y = tl.exp(acc)
        tl.store(y_ptr + offs, y, mask=m)
        tl.store(s_ptr + pid, tl.sum(tl.where(m, y, 0.0), axis=0))
''')
SIGNATURE = "*fp32, *fp32, *fp32, i32, 9, 64"
N, BLOCK = 1000, 64
GRID = -(-N // BLOCK)
level = isa.compiling_for


def emit_c(tmp_path, stem: str) -> None:
    (tmp_path / "kernels.py").write_text(KERNELS)
    rc = compile_cmd.main([f"{tmp_path / 'kernels.py'}:poly", "--signature", SIGNATURE, "--target", "cpu",
                           "-o", str(tmp_path / f"{stem}.tritium"), "--emit-c"])
    assert rc == 0
    assert (tmp_path / f"{stem}.o").exists()


def no_textrel(lib) -> None:
    dyn = subprocess.run(["readelf", "-dW", str(lib)], capture_output=True, text=True, check=True).stdout
    assert "TEXTREL" not in dyn, dyn


def link(cmd: list[str], cwd) -> None:
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stderr}"


def run_library(lib, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    so = ctypes.CDLL(str(lib))
    fp = ctypes.POINTER(ctypes.c_float)
    so.poly.argtypes = [ctypes.c_uint32] * 3 + [ctypes.c_int, fp, fp, fp, ctypes.c_int32]
    so.poly.restype = ctypes.c_int
    y, s = np.zeros(N, np.float32), np.zeros(GRID, np.float32)
    rc = so.poly(GRID, 1, 1, 2, *(a.ctypes.data_as(fp) for a in (x, y, s)), N)
    assert rc == 0
    return y, s


def interpreted(tmp_path, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    kernel = compile_cmd.load_kernel(f"{tmp_path / 'kernels.py'}:poly")
    y, s = np.zeros(N, np.float32), np.zeros(GRID, np.float32)
    kernel.interpret = True
    try:
        kernel[(GRID, )](x, y, s, N, TERMS=9, BLOCK=BLOCK)
    finally:
        kernel.interpret = False
    return y, s


def lld() -> list[str]:
    """An ld.lld command: the ziglang wheel's (installed with the AMD backend, so on every machine the README's
    install ran), else one on PATH; [] where there is neither."""
    spec = importlib.util.find_spec("ziglang")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        zig = os.path.join(folder, "zig")
        if os.path.isfile(zig):
            return [zig, "ld.lld"]
    return ["ld.lld"] if shutil.which("ld.lld") else []


def tools() -> list[str]:
    found = [t for t in ("cc", ) if shutil.which(t)] + (["ld.lld"] if lld() else [])
    if "cc" not in found:
        pytest.skip("no C compiler to build the launcher")
    return found


@pytest.mark.parametrize("lvl", LEVELS)
def test_emitted_object_links_into_a_shared_library_without_text_relocations(tmp_path, lvl):
    found = tools()
    with level(lvl):
        emit_c(tmp_path, "poly")
    x = np.linspace(-1.5, 1.5, N).astype(np.float32)
    want_y, want_s = interpreted(tmp_path, x)
    libs = [tmp_path / "libpoly_cc.so"]
    # the launcher is C, built as any C file of a shared library is; -z text refuses text relocations
    link(["cc", "-shared", "-fPIC", "-O1", "-Wl,-z,text", "-o", libs[0].name, "poly.c", "poly.o", "-lpthread",
          "-lm"], tmp_path)
    if "ld.lld" in found:
        link(["cc", "-fPIC", "-O1", "-c", "-o", "launcher.o", "poly.c"], tmp_path)
        libm = subprocess.run(["cc", "-print-file-name=libm.so.6"], capture_output=True, text=True).stdout.strip()
        libs.append(tmp_path / "libpoly_lld.so")
        link([*lld(), "-shared", "-z", "text", "-o", libs[1].name, "launcher.o", "poly.o", libm], tmp_path)
    for lib in libs:
        no_textrel(lib)
        y, s = run_library(lib, x)
        np.testing.assert_allclose(y, want_y, rtol=2e-6)
        np.testing.assert_allclose(s, want_s, rtol=1e-5)


def test_aarch64_object_links_into_a_shared_library(tmp_path):
    if SELECTED:
        pytest.skip("an x86 ISA level is selected: the aarch64 compile runs once, in the native pass")
    if not lld():
        pytest.skip("no ld.lld (a linker for any target): neither the ziglang wheel nor one on PATH")
    with cpu_knobs.scope():
        cpu_knobs.target_triple = "aarch64-unknown-linux-gnu"
        emit_c(tmp_path, "poly")
    head = subprocess.run(["readelf", "-hW", "poly.o"], cwd=tmp_path, capture_output=True, text=True).stdout
    assert "AArch64" in head, head
    # no AArch64 C compiler here: the kernel's object alone (its C library calls stay undefined, as in any .so)
    link([*lld(), "-shared", "-z", "text", "-o", "libpoly.so", "poly.o"], tmp_path)
    no_textrel(tmp_path / "libpoly.so")
