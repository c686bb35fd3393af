"""The PTX order is chosen by registers (``TRITIUM_NVIDIA_REGROUP=auto``, the default; regroup.py): layer norm at 4
warps (examples/04) needs 62 registers op-major and 56 element-major, so 8 or 9 programs per multiprocessor; the
persistent softmax (examples/02) needs fewer op-major. The default must take the cheaper order for each kernel,
never more registers than either forced order, and leave kernels on tensor cores alone."""
from __future__ import annotations

import importlib.util
import os
import shutil

import pytest

import tritium
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples")


def _example(name: str):
    spec = importlib.util.spec_from_file_location(name.replace("-", "_"), os.path.join(EXAMPLES, name))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _compile(fn, sig: dict, consts: dict, warps: int, mode: str | None):
    from tritium import plugins
    from tritium_nvidia.knobs import nvidia
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    attrs = {k: [["tt.divisibility", 16]] for k, v in sig.items() if v in ("i32", ) or v.startswith("*")}
    with plugins.use(reg), nvidia.scope():
        if mode is not None:
            nvidia.regroup = mode
        k = tritium.compile(ASTSource(fn, sig, consts, attrs), target=GPUTarget("cuda", 90, 32),
                            options={"num_warps": warps})
    return k.metadata_dict


def _steps(regs: int) -> int:
    from tritium_nvidia.regroup import allocated
    return allocated(regs)


LAYER_NORM = ("04-layer-norm.py", "layer_norm_fwd",
              {"X": "*fp16", "Y": "*fp16", "W": "*fp16", "B": "*fp16", "Mean": "*fp32", "Rstd": "*fp32",
               "stride": "i32", "N": "i32", "eps": "fp32", "BLOCK_SIZE": "constexpr"}, {"BLOCK_SIZE": 4096}, 4)
SOFTMAX = ("02-fused-softmax.py", "softmax_kernel",
           {"out_ptr": "*fp32", "in_ptr": "*fp32", "in_row_stride": "i32", "out_row_stride": "i32", "n_rows": "i32",
            "n_cols": "i32", "BLOCK_SIZE": "constexpr"}, {"BLOCK_SIZE": 4096}, 4)


@pytest.mark.parametrize("case", [LAYER_NORM, SOFTMAX], ids=["layer_norm_4_warps", "persistent_softmax"])
def test_default_order_needs_the_fewest_registers(isolated_tritium, case):
    file, kernel, sig, consts, warps = case
    fn = getattr(_example(file), kernel)
    op_major = _compile(fn, sig, consts, warps, "0")
    element_major = _compile(fn, sig, consts, warps, "1")
    default = _compile(fn, sig, consts, warps, None)
    assert default["n_spills"] == 0
    assert _steps(default["n_regs"]) == min(_steps(op_major["n_regs"]), _steps(element_major["n_regs"])), \
        (default["n_regs"], op_major["n_regs"], element_major["n_regs"])
    assert default["ptx_order"] in ("op-major", "element-major")


def test_layer_norm_at_4_warps_fits_nine_programs(isolated_tritium):
    """The measured case (PERF.md): at 56 registers 9 programs of 4 warps share a multiprocessor, at 62 only 8."""
    file, kernel, sig, consts, warps = LAYER_NORM
    md = _compile(getattr(_example(file), kernel), sig, consts, warps, None)
    assert 65536 // (_steps(md["n_regs"]) * 32 * warps) >= 9, md["n_regs"]


def test_tensor_core_kernels_are_not_tried(isolated_tritium):
    mod = _example("03-matrix-multiplication.py")
    fn, sig, consts = mod.COMPILE_CASES[0]
    md = _compile(fn, sig, consts, 4, None)
    assert "ptx_order" not in md
