"""``tritium compile --emit-c`` for a kernel whose descriptors are made of its arguments: on sm_90 their tensor maps
are kernel parameters (test_tma_params_ptx.py), so the C launcher encodes them from the launch's arguments with
``cuTensorMapEncodeTiled`` (zeros for an empty tensor) and passes them after the arguments, as CudaLauncher
does. Checked without a GPU: the metadata, the generated C, and that it compiles warning-free; on an sm_90 GPU a C
host runs it (partial blocks at both edges, against doubled inputs)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from tritium.runtime import aot_format

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")

KERNELS = textwrap.dedent('''
    import tritium
    import tritium.language as tl

    @tritium.jit
    def copy2d(x_ptr, o_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
        src = tl.make_tensor_descriptor(x_ptr, [M, N], [N, 1], [BM, BN])
        dst = tl.make_tensor_descriptor(o_ptr, [M, 64], [64, 1], [BM, BN])
        pm, pn = tl.program_id(0) * BM, tl.program_id(1) * BN
        dst.store([pm, pn], src.load([pm, pn]) * 2)
''')


def _cuda_include():
    for d in (os.environ.get("CUDA_HOME", ""), "/usr/local/cuda"):
        if d and os.path.exists(os.path.join(d, "include", "cuda.h")):
            return os.path.join(d, "include")
    return None


def _compile(tmp_path, target="cuda:90"):
    (tmp_path / "kernels.py").write_text(KERNELS)
    env = dict(os.environ, TRITIUM_HOME=str(tmp_path / "home"))
    r = subprocess.run([sys.executable, "-m", "tritium.tools.cli", "compile", f"{tmp_path / 'kernels.py'}:copy2d",
                        "--signature", "*fp16:16, *fp16:16, i32, i32:16, 32, 64", "--target", target, "-o",
                        str(tmp_path / "k.tritium"), "--emit-c"], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr


def test_c_launcher_encodes_tensor_maps(tmp_path):
    _compile(tmp_path)
    header, _ = aot_format.read(str(tmp_path / "k.tritium"))
    maps = header["metadata"]["tensor_map_params"]
    assert [m["args"] for m in maps] == [[0, 2, 3, 3], [1, 2, ["const", 64], ["const", 64]]]
    source = (tmp_path / "k.c").read_text()
    assert source.count("cuTensorMapEncodeTiled(") == 2
    assert "cuuint64_t dims[2] = {(cuuint64_t)((int64_t)N), (cuuint64_t)((int64_t)M)};" in source
    assert "cuuint64_t strides[1] = {(cuuint64_t)(64LL) * 2};" in source
    assert "(void *)(uintptr_t)((int64_t)x_ptr)" in source and "(CUtensorMapSwizzle)3" in source
    assert "if (((int64_t)M) <= 0 || ((int64_t)N) <= 0) {" in source
    assert "void *args[6] = {(void *)&x_ptr, (void *)&o_ptr, (void *)&M, (void *)&N, (void *)&tmap0, " \
           "(void *)&tmap1};" in source
    inc = _cuda_include()
    if shutil.which("cc") is None or inc is None:
        pytest.skip("no C compiler or no cuda.h (set CUDA_HOME)")
    r = subprocess.run(["cc", "-c", "-Wall", "-Wextra", "-Werror", f"-I{inc}", "k.c", "-o", "k_launcher.o"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr


C_HOST = r"""
#include "k.h"
#include <stdio.h>
#include <stdlib.h>
#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { printf("%s: error %d\n", #x, (int)r_); return 1; } } while (0)
int main(void) {
    CUdevice dev; CUcontext ctx; CUdeviceptr x, o;
    int M = 100, N = 64, n = M * N;             /* 100 rows: the last block of 32 is partial */
    unsigned short *hx = malloc(n * 2), *ho = malloc(n * 2);
    for (int i = 0; i < n; i++) hx[i] = (unsigned short)(0x3c00 + (i % 512));   /* fp16 1.0 .. 1.5 */
    CK(cuInit(0)); CK(cuDeviceGet(&dev, 0)); CK(cuDevicePrimaryCtxRetain(&ctx, dev)); CK(cuCtxSetCurrent(ctx));
    CK(cuMemAlloc(&x, n * 2)); CK(cuMemAlloc(&o, n * 2 + 4096)); CK(cuMemsetD8(o, 0, n * 2 + 4096));
    CK(cuMemcpyHtoD(x, hx, n * 2));
    CK(copy2d(0, (M + 31) / 32, 1, 1, x, o, M, N));
    CK(cuCtxSynchronize()); CK(cuMemcpyDtoH(ho, o, n * 2));
    for (int i = 0; i < n; i++) if (ho[i] != hx[i] + 0x400) { printf("wrong at %d: %x\n", i, ho[i]); return 1; }
    unsigned short tail[2048]; CK(cuMemcpyDtoH(tail, o + n * 2, 4096));
    for (int i = 0; i < 2048; i++) if (tail[i]) { printf("wrote past the end at %d\n", i); return 1; }
    printf("C host ok\n");
    return 0;
}
"""


@pytest.mark.gpu
def test_gpu_c_host_runs_tensor_map_kernel(tmp_path):
    try:
        from tritium_nvidia.driver import CudaDriver
        active = CudaDriver.is_active()
    except ImportError:
        active = False
    if not active:
        pytest.skip("no NVIDIA GPU with a working driver here")
    from tritium_nvidia import cuda
    cap = cuda.capability(0)
    if not 90 <= cap < 100:
        pytest.skip(f"tensor maps are kernel parameters on sm_90 only; this GPU is sm_{cap}")
    inc = _cuda_include()
    if shutil.which("cc") is None or inc is None:
        pytest.skip("no C compiler or no cuda.h (set CUDA_HOME)")
    _compile(tmp_path, f"cuda:{cap}")
    (tmp_path / "main.c").write_text(C_HOST)
    lib = [f"-L{d}" for d in ("/usr/lib/x86_64-linux-gnu", "/usr/local/cuda/lib64/stubs") if os.path.isdir(d)]
    build = subprocess.run(["cc", "-O1", f"-I{inc}", "-o", "host", "main.c", "k.c", *lib, "-lcuda"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr
    r = subprocess.run([str(tmp_path / "host")], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "C host ok" in r.stdout, r.stdout + r.stderr
