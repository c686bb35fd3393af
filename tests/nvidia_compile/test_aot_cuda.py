"""Ahead-of-time compilation for NVIDIA GPUs: ``tritium compile --target cuda:90`` builds a cubin artifact on a
machine without a GPU; on a GPU, ``tritium.load_compiled`` launches it in a fresh process that imports no MLIR,
frontend or backend compiler, and refuses a cubin the device cannot run."""
from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import sys
import textwrap

import pytest

import tritium
from tritium.runtime import aot_format
from tritium.runtime.aot_format import ArtifactError

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")

KERNELS = textwrap.dedent('''
    import tritium
    import tritium.language as tl

    @tritium.jit
    def scale_add(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        y = tl.load(y_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, alpha * x + y, mask=mask)
''')
SIGNATURE = "*fp32:16, *fp32:16, *fp32:16, fp32, i32, 512"
EM_CUDA = 190
FORBIDDEN = ("mlir", "tritium._mlir", "tritium.dialect", "tritium.compiler.code_generator", "tritium.compiler.ast_to_ir",
             "tritium.compiler.builder", "tritium.language.semantic", "tritium.gpu.lower", "tritium_nvidia.compiler",
             "tritium_nvidia.target", "llvmlite")

LOADER = textwrap.dedent('''
    import sys, time
    import torch
    torch.cuda.init()
    t0 = time.perf_counter()
    import tritium
    k = tritium.load_compiled(sys.argv[1])
    n = 100_003
    x = torch.rand(n, device="cuda"); y = torch.rand(n, device="cuda"); out = torch.empty_like(x)
    k(x, y, out, 3.0, n)
    torch.cuda.synchronize()
    cold = time.perf_counter() - t0
    torch.testing.assert_close(out, 3.0 * x + y)
    try:
        k(x.double(), y, out, 3.0, n)
        raise SystemExit("a float64 tensor was accepted for *fp32")
    except TypeError as exc:
        assert "pass an array of fp32" in str(exc), exc
    bad = [m for m in %r if m in sys.modules]
    assert not bad, f"loading imported {bad}"
    print(f"cold start (import tritium, load, first launch, sync): {cold * 1e3:.1f} ms")
''' % (FORBIDDEN, ))


def _compile(tmp, target: str, name: str = "k.tritium", *extra: str):
    (tmp / "kernels.py").write_text(KERNELS)
    out = tmp / name
    env = dict(os.environ, TRITIUM_HOME=str(tmp / "home"))
    r = subprocess.run([sys.executable, "-m", "tritium.tools.cli", "compile", f"{tmp / 'kernels.py'}:scale_add",
                        "--signature", SIGNATURE, "--grid", "cdiv(n, BLOCK)", "--target", target, "-o", str(out),
                        *extra], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    return out


def test_cuda90_artifact_is_built_without_a_gpu(tmp_path):
    out = _compile(tmp_path, "cuda:90")
    header, cubin = aot_format.read(str(out))
    assert header["target"] == ["cuda", 90, 32] and header["binary_stage"] == "cubin"
    assert header["backend"]["name"] == "nvidia" and header["backend"]["abi"] == 2
    assert header["metadata"]["arg_types"] == ["ptr addrspace(1)"] * 3 + ["float", "i32"]
    # a CUDA ELF: the ELF magic, machine EM_CUDA, sm_90 in the flags (bits 8-15 in the current ABI, bits 0-7
    # in the older one), the kernel's entry among its symbols
    assert cubin[:4] == b"\x7fELF" and cubin[4] == 2   # 64-bit
    assert struct.unpack_from("<H", cubin, 18)[0] == EM_CUDA
    flags = struct.unpack_from("<I", cubin, 48)[0]
    assert 90 in ((flags >> 8) & 0xFF, flags & 0xFF), hex(flags)
    assert b"scale_add\x00" in cubin


def test_cuda_artifact_without_a_gpu_is_refused_clearly(tmp_path):
    from tritium import plugins
    from tritium_nvidia.driver import CudaDriver
    if CudaDriver.is_active():
        pytest.skip("a GPU is present: covered by the GPU test below")
    out = _compile(tmp_path, "cuda:90")
    with pytest.raises(ArtifactError, match=r"backend 'nvidia' .*not installed here.*tritium-nvidia"):
        tritium.load_compiled(str(out))      # the test session's registry has only core and the CPU backend
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(reg), pytest.raises(ArtifactError, match=r"kernel for cuda:90, but backend 'nvidia' finds no "
                                                              r"device on this machine"):
        tritium.load_compiled(str(out))


def _gpu_capability() -> int:
    from tritium_nvidia.driver import CudaDriver
    if not CudaDriver.is_active():
        pytest.skip("no NVIDIA GPU with a working driver here")
    try:
        import torch
    except ImportError:
        pytest.skip("torch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here")
    major, minor = torch.cuda.get_device_capability()
    return major * 10 + minor


@pytest.mark.gpu
def test_gpu_loads_and_launches_in_a_fresh_process(tmp_path):
    cap = _gpu_capability()
    out = _compile(tmp_path, f"cuda:{cap}")
    (tmp_path / "loader.py").write_text(LOADER)
    r = subprocess.run([sys.executable, str(tmp_path / "loader.py"), str(out)], capture_output=True, text=True,
                       env=dict(os.environ, TRITIUM_HOME=str(tmp_path / "empty-home")), timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    print(r.stdout.strip())


@pytest.mark.gpu
def test_gpu_refuses_a_cubin_for_another_architecture(tmp_path):
    cap = _gpu_capability()
    other = 80 if cap // 10 != 8 else 90
    out = _compile(tmp_path, f"cuda:{other}")
    from tritium import plugins
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(reg), pytest.raises(ArtifactError, match=rf"compiled for sm_{other}, which device \d+ "
                                                              rf"\(sm_{cap}\) cannot run: compile it with --target "
                                                              rf"cuda:{cap}"):
        tritium.load_compiled(str(out))


def _cuda_include():
    for d in (os.environ.get("CUDA_HOME", ""), "/usr/local/cuda"):
        if d and os.path.exists(os.path.join(d, "include", "cuda.h")):
            return os.path.join(d, "include")
    ptxas = shutil.which("ptxas")
    if ptxas:
        d = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(ptxas))), "include")
        if os.path.exists(os.path.join(d, "cuda.h")):
            return d
    return None


def _needs_c_toolchain():
    if shutil.which("cc") is None:
        pytest.skip("no C compiler")
    inc = _cuda_include()
    if inc is None:
        pytest.skip("no cuda.h (set CUDA_HOME)")
    return inc


def test_c_launcher_embeds_the_cubin_and_compiles(tmp_path):
    inc = _needs_c_toolchain()
    out = _compile(tmp_path, "cuda:90", "k.tritium", "--emit-c")
    _, cubin = aot_format.read(str(out))
    source = (tmp_path / "k.c").read_text()
    body = source[source.index("scale_add_cubin["):]
    embedded = bytes(int(h, 16) for h in re.findall(r"0x([0-9a-f]{2})", body[:body.index("};")]))
    assert embedded == cubin
    assert "cuLaunchKernel(scale_add_fn, gX, gY, gZ, 128, 1, 1, 0, stream, args, 0)" in source
    r = subprocess.run(["cc", "-c", "-Wall", "-Wextra", "-Werror", f"-I{inc}", "k.c", "-o", "k_launcher.o"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr


C_HOST = r"""
#include "k.h"
#include <stdio.h>
#include <stdlib.h>
#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { printf("%s: error %d\n", #x, (int)r_); return 1; } } while (0)
int main(void) {
    CUdevice dev; CUcontext ctx; CUdeviceptr x, y, o;
    int n = 100003; size_t bytes = n * sizeof(float);
    float *hx = malloc(bytes), *hy = malloc(bytes), *ho = malloc(bytes);
    for (int i = 0; i < n; i++) { hx[i] = i * 0.5f; hy[i] = 1.0f; }
    CK(cuInit(0)); CK(cuDeviceGet(&dev, 0)); CK(cuDevicePrimaryCtxRetain(&ctx, dev)); CK(cuCtxSetCurrent(ctx));
    CK(cuMemAlloc(&x, bytes)); CK(cuMemAlloc(&y, bytes)); CK(cuMemAlloc(&o, bytes));
    CK(cuMemcpyHtoD(x, hx, bytes)); CK(cuMemcpyHtoD(y, hy, bytes));
    CK(scale_add(0, (n + 511) / 512, 1, 1, x, y, o, 3.0f, n));
    CK(cuCtxSynchronize()); CK(cuMemcpyDtoH(ho, o, bytes));
    for (int i = 0; i < n; i++) if (ho[i] != 3.0f * hx[i] + hy[i]) { printf("wrong at %d: %f\n", i, ho[i]); return 1; }
    if (scale_add(0, 1, 1, 1, x + 4, y, o, 3.0f, n) != CUDA_ERROR_INVALID_VALUE) { printf("misaligned accepted\n"); return 1; }
    printf("C host ok\n");
    return 0;
}
"""


@pytest.mark.gpu
def test_gpu_c_host_launches_the_kernel(tmp_path):
    cap = _gpu_capability()
    inc = _needs_c_toolchain()
    _compile(tmp_path, f"cuda:{cap}", "k.tritium", "--emit-c")
    (tmp_path / "main.c").write_text(C_HOST)
    lib = [f"-L{d}" for d in ("/usr/lib/x86_64-linux-gnu", "/usr/local/cuda/lib64/stubs") if os.path.isdir(d)]
    build = subprocess.run(["cc", "-O1", f"-I{inc}", "-o", "host", "main.c", "k.c", *lib, "-lcuda"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr
    r = subprocess.run([str(tmp_path / "host")], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "C host ok" in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize("built_for, device, ok", [
    ("sm_90a", 90, True), ("sm_90a", 100, False), ("sm_90a", 89, False), ("sm_80", 86, True),
    ("sm_86", 80, False), ("sm_80", 90, False), ("sm_100a", 103, False), (75, 75, True),
])
def test_which_devices_run_a_cubin(built_for, device, ok):
    from tritium_nvidia.aot import check_arch
    md = {"name": "k", "arch": built_for}
    if ok:
        check_arch(md, 0, device)
    else:
        with pytest.raises(RuntimeError, match=rf"compiled for sm_\d+, which device 0 \(sm_{device}\) cannot run: "
                                               rf"compile it with --target cuda:{device}"):
            check_arch(md, 0, device)
