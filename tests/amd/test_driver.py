"""The HIP driver without an AMD GPU: it is inactive with a clear reason, hip-python is not imported to compile,
arguments are packed as the code object's kernarg layout expects, and compile-only launches build and check code
objects and run nothing. Launching on a GPU skips here with the driver's reason."""
from __future__ import annotations

import ctypes
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl

tritium_amd = pytest.importorskip("tritium_amd", reason="tritium-amd is not installed")
from tritium_amd import driver as hipdrv  # noqa: E402
from tritium_amd.knobs import amd as amd_knobs  # noqa: E402


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@pytest.fixture
def amd_backend(amd_registry):
    from tritium import knobs, plugins
    with plugins.use(amd_registry), knobs.runtime.scope():
        knobs.runtime.default_backend = "amd"
        yield amd_registry


def test_inactive_here_with_a_reason():
    reason = hipdrv.inactive_reason()
    if not reason:
        pytest.skip("an AMD GPU with the HIP runtime is present")
    assert not hipdrv.HipDriver.is_active()
    assert "HIP runtime" in reason or "hip-python" in reason


def test_compiling_does_not_import_hip_python(tmp_path):
    code = ("import tritium, tritium.language as tl\n"
            "from tritium import plugins\n"
            "from tritium.backends.compiler import GPUTarget\nfrom tritium.compiler import ASTSource\n"
            "@tritium.jit\ndef k(x, N: tl.constexpr):\n    tl.store(x + tl.arange(0, N), tl.arange(0, N))\n"
            "reg = plugins.PluginRegistry.from_objects({'core': 'tritium.builtin_plugin', 'amd': 'tritium_amd.plugin'})\n"
            "with plugins.use(reg):\n"
            "    c = tritium.compile(ASTSource(k, {'x': '*i32', 'N': 'constexpr'}, {'N': 64}), "
            "target=GPUTarget('hip', 'gfx90a', 64))\n"
            "import sys\nassert c.asm['hsaco'][:4] == b'\\x7fELF'\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('hip', 'rocm')))\n")
    script = tmp_path / "compile_for_amd.py"      # @jit reads its source from a file
    script.write_text(code)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "TRITIUM_HOME": str(tmp_path / "home")})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_arguments_are_packed_as_the_kernarg_layout_expects():
    types = ["ptr addrspace(1)", "i1", "i8", "i32", "i64", "half", "bfloat", "float", "double"]
    names = [f"a{i}" for i in range(len(types))]
    packed = hipdrv.pack_args("k", names, types, (0x1234, True, -1, 2**32 + 5, -7, 1.5, 1.0 + 2**-9, 0.25, -2.5))
    assert [type(p) for p in packed] == [ctypes.c_void_p, ctypes.c_uint8, ctypes.c_int8, ctypes.c_int32,
                                         ctypes.c_int64, ctypes.c_uint16, ctypes.c_uint16, ctypes.c_float,
                                         ctypes.c_double]
    vals = [p.value for p in packed]
    assert vals[:5] == [0x1234, 1, -1, 5, -7]
    assert vals[5] == 0x3E00                   # 1.5 in binary16
    assert vals[6] == 0x3F80                   # 1 + 2^-9 rounds to even: 1.0 in bfloat16
    assert vals[7:] == [0.25, -2.5]


def test_argument_errors_name_the_kernel_and_argument():
    with pytest.raises(TypeError, match=r"argument `n` of kernel `add_kernel` must be a i32 value"):
        hipdrv.pack_args("add_kernel", ["x", "n"], ["ptr addrspace(1)", "i32"], (1, "ten"))
    with pytest.raises(TypeError, match=r"kernel `add_kernel` takes 2 run-time arguments \(x, n\), got 1"):
        hipdrv.pack_args("add_kernel", ["x", "n"], ["ptr addrspace(1)", "i32"], (1, ))


def test_compile_only_launch_builds_a_checked_code_object_and_runs_nothing(amd_backend):
    x = np.arange(300, dtype=np.float32)
    out = np.zeros_like(x)
    with amd_knobs.scope():
        amd_knobs.compile_only = True
        amd_knobs.arch = "gfx950"
        from tritium.runtime.driver import driver
        assert driver.active.is_active()
        k = add_kernel[(3, )](x, x, out, 300, BLOCK=128)
    assert k.metadata_dict["arch"] == "gfx950" and k.asm["hsaco"][:4] == b"\x7fELF"
    assert k in hipdrv.compiled
    assert not out.any()


def test_launch_on_an_amd_gpu(amd_backend):
    reason = hipdrv.inactive_reason()
    if reason:
        pytest.skip(f"no AMD GPU: {reason}")
    torch = pytest.importorskip("torch")
    x = torch.arange(1000, dtype=torch.float32, device="cuda")
    out = torch.empty_like(x)
    add_kernel[(8, )](x, x, out, 1000, BLOCK=128)
    assert torch.equal(out, 2 * x)


def test_the_driver_uses_only_what_hip_python_offers():
    """Every HIP function, property and error name the driver refers to exists in the installed bindings (they
    import without ROCm; calling them needs it)."""
    hip = pytest.importorskip("hip", reason="hip-python is not installed").hip
    import inspect
    src = inspect.getsource(hipdrv)
    used = set(re.findall(r"hip\.(hip\w+)", src))
    assert {"hipModuleLoadData", "hipModuleGetFunction", "hipModuleLaunchKernel"} <= used
    assert sorted(n for n in used if not hasattr(hip, n)) == []
    assert [f for f in hipdrv._FAULTS if not hasattr(hip.hipError_t, f)] == []
    props = hip.hipDeviceProp_t()
    fields = set(re.findall(r"props\.(\w+)", src))
    assert fields and sorted(f for f in fields if not hasattr(props, f)) == []


def test_tritium_plugins_lists_the_backend_and_its_capabilities(tmp_path):
    """The installed distribution, found through its entry point as any third-party backend is."""
    out = subprocess.run([sys.executable, "-c", "import sys; from tritium.tools.cli import main; "
                          "sys.exit(main(['plugins']))"], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "TRITIUM_HOME": str(tmp_path)})
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().startswith("amd ") and "tritium-amd" in line)
    assert "hsaco" in lines[at + 1] and "gfx942" in lines[at + 1]
    caps = lines[at + 2]
    assert all(c in caps for c in ("tensor-cores", "warp-shuffle", "device-assert", "fp64"))
    assert "device-print" not in caps and "host-memory" not in caps
