"""What users see when something is wrong on the GPU: errors that name the argument, the numbers, the
kernel, and what to do."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

import tritium as triton
import tritium.language as tl


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def test_cpu_tensor_is_named(cuda):
    import torch
    x = torch.ones(64)                       # on the host
    y = torch.empty(64, device="cuda")
    with pytest.raises(TypeError, match=r"argument `x_ptr` of kernel `copy_kernel` lives on device 'cpu'"):
        copy_kernel[(1, )](x, y, 64, BLOCK=64)


@triton.jit
def big_smem_kernel(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * BN + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc += tl.dot(tl.load(a_ptrs), tl.load(b_ptrs))
        a_ptrs += BK
        b_ptrs += BK * BN
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


def test_shared_memory_limit_names_numbers_and_meta_parameters(cuda):
    import torch
    from tritium_nvidia.driver import OutOfResources
    BM = BN = 256
    BK = 128
    a = torch.zeros(BM, 1024, device="cuda", dtype=torch.float16)
    b = torch.zeros(1024, BN, device="cuda", dtype=torch.float16)
    c = torch.empty(BM, BN, device="cuda")
    with pytest.raises(OutOfResources, match=r"needs \d+ bytes of shared memory per program, but device \d+ offers "
                                             r"at most \d+: lower .*BM=256, BN=256, BK=128.*num_stages=4"):
        big_smem_kernel[(1, )](a, b, c, 1024, BM=BM, BN=BN, BK=BK, num_warps=8, num_stages=4)


FAULT = textwrap.dedent("""
    import torch, tritium as triton, tritium.language as tl
    from tritium import plugins, knobs
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})

    @triton.jit
    def oob_kernel(x_ptr, far):
        tl.store(x_ptr + far + tl.arange(0, 128), tl.zeros((128,), tl.float32))

    with plugins.use(reg):
        knobs.runtime.default_backend = "nvidia"
        x = torch.empty(128, device="cuda")
        try:
            oob_kernel[(1,)](x, 1 << 40)
            torch.cuda.synchronize()
        except Exception as exc:
            print(type(exc).__name__, exc)
""")


def test_fault_names_kernel_and_suggests_interpreter(cuda, tmp_path):
    env = dict(os.environ, CUDA_LAUNCH_BLOCKING="1", TRITIUM_HOME=str(tmp_path))
    script = tmp_path / "fault.py"      # @jit reads the kernel's source from its file
    script.write_text(FAULT)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=240)
    out = proc.stdout + proc.stderr
    assert "KernelFault kernel `oob_kernel` faulted (CUDA_ERROR_ILLEGAL_ADDRESS" in out, out
    assert "TRITON_INTERPRET=1" in out
