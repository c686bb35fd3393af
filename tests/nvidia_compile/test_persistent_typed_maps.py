"""TRITIUM_NVIDIA_TMA_TYPED_MAPS: a tensor map of floats carries the float type (FLOAT16, BFLOAT16, FLOAT32) as
Triton 3.6 encodes a host descriptor's, instead of the unsigned integer of the element's size. examples/08's fp16
and bf16 kernels differ in nothing else between the two frameworks (PERF.md, seventh session, H5): same PTX but
for the types, same SASS but for HGMMA's and F2FP's type, same registers and shared memory on each side; the map's
data type is the one thing Triton encodes per dtype that tritium did not. The knob changes the launcher's encoding
(the kernel's ``tensor_map_params``) and, for maps built on the device, ``tensormap.replace``'s elemtype; the
copies themselves are the same instructions. Default off."""
from __future__ import annotations

import os
import shutil
import sys

import pytest

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from persistent08 import compile08  # noqa: E402

# examples/08's configurations (BLOCK_M, BLOCK_N, BLOCK_K) by the descriptors' element type
CONFIGS = {"fp16": (128, 256, 64), "bf16": (128, 256, 64), "fp32": (128, 128, 32)}


def _compile08(dt: str, typed: bool, host_maps: bool = True):
    return compile08(dt, *CONFIGS[dt], tma_typed_maps=typed, tma_host_maps=host_maps)


def _types(k) -> list[str]:
    return [m["elem_type"] for m in k.metadata_dict["tensor_map_params"]]


def test_knob_is_off_by_default():
    from tritium_nvidia.knobs import nvidia
    assert nvidia.tma_typed_maps is False


@pytest.mark.parametrize("dt,bits,typed", [("fp16", "UINT16", "FLOAT16"), ("bf16", "UINT16", "BFLOAT16")])
def test_host_maps_carry_the_float_type(dt, bits, typed):
    off, on = _compile08(dt, False), _compile08(dt, True)
    assert _types(off) == [bits] * 3
    assert _types(on) == [typed] * 3
    # only the launcher's encoding changes: the kernel is the same
    assert on.asm["ptx"] == off.asm["ptx"]
    strip = [{k: v for k, v in m.items() if k != "elem_type"} for m in on.metadata_dict["tensor_map_params"]]
    assert strip == [{k: v for k, v in m.items() if k != "elem_type"} for m in off.metadata_dict["tensor_map_params"]]


def test_maps_built_on_the_device_name_the_float_type():
    off, on = _compile08("bf16", False, host_maps=False), _compile08("bf16", True, host_maps=False)
    assert "tensor_map_params" not in off.metadata_dict and "tensor_map_params" not in on.metadata_dict

    def elemtypes(ptx):
        return sorted({ln.split(",")[-1].strip(" ;") for ln in ptx.splitlines() if ".elemtype." in ln})

    assert elemtypes(off.asm["ptx"]) == ["1"]        # UINT16
    assert elemtypes(on.asm["ptx"]) == ["10"]        # BFLOAT16
