"""TRITIUM_NVIDIA_TMA_L2_PROMOTION: the L2 sector promotion of the tensor maps the launcher encodes for host
descriptors (0, 64, 128 or 256 bytes; 128 by default, as Triton 3.6 encodes them). A setting other than 128 is in
the kernel's ``tensor_map_params`` (so each setting is a kernel of its own and the launcher and the AOT launcher
encode what the kernel was compiled for); the kernel's code is the same. An A/B knob for examples/08 on the H200."""
from __future__ import annotations

import os
import shutil
import sys

import pytest

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from persistent08 import compile08  # noqa: E402


def test_knob_is_128_by_default():
    from tritium_nvidia.knobs import nvidia
    assert nvidia.tma_l2_promotion == 128


def test_default_maps_name_no_promotion(isolated_tritium):
    assert all("l2_promotion" not in m for m in compile08().metadata_dict["tensor_map_params"])


@pytest.mark.parametrize("size", [0, 64, 256])
def test_promotion_is_in_the_maps_only(isolated_tritium, size):
    off, on = compile08(), compile08(tma_l2_promotion=size)
    assert [m["l2_promotion"] for m in on.metadata_dict["tensor_map_params"]] == [size] * 3
    assert on.asm["ptx"] == off.asm["ptx"]
    strip = [{k: v for k, v in m.items() if k != "l2_promotion"} for m in on.metadata_dict["tensor_map_params"]]
    assert strip == off.metadata_dict["tensor_map_params"]


def test_aot_launcher_encodes_the_promotion():
    from tritium_nvidia.aot import _encode_map
    spec = {"args": [0, 1, 2, 3], "box": [64, 128], "elem_bytes": 2, "elem_type": "UINT16", "swizzle": 3}
    params = [{"name": n, "type": t} for n, t in (("a", "*fp16"), ("m", "i32"), ("k", "i32"), ("s", "i32"))]
    assert "CU_TENSOR_MAP_L2_PROMOTION_L2_128B" in _encode_map(0, spec, params)
    assert "CU_TENSOR_MAP_L2_PROMOTION_L2_256B" in _encode_map(0, dict(spec, l2_promotion=256), params)


def test_other_sizes_are_refused(isolated_tritium):
    with pytest.raises(Exception, match="TRITIUM_NVIDIA_TMA_L2_PROMOTION=96"):
        compile08(tma_l2_promotion=96)
