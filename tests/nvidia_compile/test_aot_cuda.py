"""Ahead-of-time compilation for NVIDIA GPUs: ``tritium compile --target cuda:90`` builds a cubin artifact on a
machine without a GPU; on a GPU, ``tritium.load_compiled`` launches it in a fresh process that imports no MLIR,
frontend or backend compiler, and refuses a cubin the device cannot run."""
from __future__ import annotations

import os
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


def _compile(tmp, target: str, name: str = "k.tritium"):
    (tmp / "kernels.py").write_text(KERNELS)
    out = tmp / name
    env = dict(os.environ, TRITIUM_HOME=str(tmp / "home"))
    r = subprocess.run([sys.executable, "-m", "tritium.tools.cli", "compile", f"{tmp / 'kernels.py'}:scale_add",
                        "--signature", SIGNATURE, "--grid", "cdiv(n, BLOCK)", "--target", target, "-o", str(out)],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    return out


def test_cuda90_artifact_is_built_without_a_gpu(tmp_path):
    out = _compile(tmp_path, "cuda:90")
    header, cubin = aot_format.read(str(out))
    assert header["target"] == ["cuda", 90, 32] and header["binary_stage"] == "cubin"
    assert header["backend"]["name"] == "nvidia" and header["backend"]["abi"] == 1
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
