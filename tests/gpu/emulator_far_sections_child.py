"""Run by test_emulator_far_sections.py in its own process: the GPU emulator loads a kernel object (code and
constants in separate sections) after the address space was arranged so that a loader placing sections one by one
puts the code in a one-page gap and the constants more than 4 GiB below it (tests/cpu/far_sections_child.py does
the arranging), then runs it."""
import importlib.util
import sys
from pathlib import Path

import numpy as np

import tritium
from tritium import knobs, plugins
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource

_spec = importlib.util.spec_from_file_location("far_sections_child",
                                               Path(__file__).parents[1] / "cpu" / "far_sections_child.py")
far = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(far)


def main() -> None:
    from tritium.gpu.emulator import EmulatorDriver
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "gpu-emu": "tritium.gpu.emulator"})
    with plugins.use(reg), knobs.runtime.scope():
        knobs.runtime.default_backend = "gpu-emu"
        x = np.linspace(-1, 1, 64).astype(np.float32)
        y = np.empty_like(x)
        far.horner[(1,)](x, y, 64, TERMS=2, BLOCK=64)    # LLVM's JIT and its first mappings exist from here on
        sig = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "TERMS": "constexpr", "BLOCK": "constexpr"}
        kernel = tritium.compile(ASTSource(far.horner, sig, {"TERMS": 9, "BLOCK": 64}),
                                 target=GPUTarget("gpu-emu", "host", 32))        # compiled, not loaded

        far.fill_gaps_near_mappings()
        page = far.reserve(far.PAGE)
        far.reserve(4 << 30)
        far.fill_gaps_near_mappings()
        far.libc.munmap(page, far.PAGE)
        launcher = EmulatorDriver().make_launcher(kernel)     # a JIT engine of its own loads the object

        launcher((1, 1, 1), [x.ctypes.data, y.ctypes.data, 64])
        ref = np.zeros_like(x)
        for i in range(9):
            ref = ref * x + np.float32(0.37 + 0.011 * i)
        assert np.allclose(y, ref, rtol=1e-5), (y, ref)
        print("ok")


if __name__ == "__main__":
    sys.exit(main())
