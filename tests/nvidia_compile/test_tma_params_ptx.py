"""Host ``TensorDescriptor`` arguments on sm_90: their tensor maps are encoded by the launcher and passed as
128-byte ``__grid_constant__`` parameters (``.param .align 64 .b8 name[128]``), which the bulk copies address
directly; no map is built on the device (no ``tensormap.replace``, no module global), so the launcher need not
order the kernel's launches across streams. Descriptors a kernel makes itself keep the device-built maps (and
the ordering), also when mixed with host ones. The PTX assembles for sm_90a. The launcher's side that runs
without a GPU: the parameter buffer's 64-byte aligned map slots, empty tensors, and the errors for what the copy
engine cannot describe."""
from __future__ import annotations

import ctypes
import os
import re
import shutil
import sys
from types import SimpleNamespace

import pytest

import tritium
import tritium as triton
import tritium.language as tl
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "tests", "gpu"))
from test_descriptor_tma import _mm, _mm_device_desc  # noqa: E402

needs_ptxas = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                 reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")

SIG = {"a_desc": "tensordesc<fp16[128, 64]>", "b_desc": "tensordesc<fp16[128, 64]>", "c_ptr": "*fp32",
       "M": "i32", "N": "i32", "K": "i32", "shift_m": "i32", "BM": "constexpr", "BN": "constexpr",
       "BK": "constexpr"}


def _compile(fn, sig, consts, arch=90, warps=8, attrs=None):
    from tritium import plugins
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(reg):
        return tritium.compile(ASTSource(fn, sig, consts, attrs or {}), target=GPUTarget("cuda", arch, 32),
                               options={"num_warps": warps, "num_stages": 3})


def _map_params(ptx: str) -> list[str]:
    return re.findall(r"\.param \.align 64 \.b8 (\w+)\[128\]", ptx)


@needs_ptxas
def test_host_descriptors_are_grid_constant_params(isolated_tritium):
    k = _compile(_mm, SIG, {"BM": 128, "BN": 128, "BK": 64})
    ptx = k.asm["ptx"]
    # after the 13 flattened arguments (two descriptors of 4, c_ptr, M, N, K, shift_m): one map each
    assert _map_params(ptx) == ["_mm_param_13", "_mm_param_14"]
    assert ptx.count("cvta.param.u64") == 2
    for built_on_device in ("tensormap.replace", "tensormap.cp_fenceproxy", "fence.proxy.tensormap", "__tritium_tmap"):
        assert built_on_device not in ptx
    # the copies read the parameters' generic addresses
    regs = dict(re.findall(r"cvta\.param\.u64\s+(%rd\d+), (%rd\d+);", ptx))
    movs = dict(re.findall(r"mov\.b64\s+(%rd\d+), (_mm_param_1[34]);", ptx))
    addr_regs = {r for r, src in regs.items() if src in movs}
    used = set(re.findall(r"cp\.async\.bulk\.tensor\.2d\.shared::cluster[^\[]*\[[^\]]*\], \[(%rd\d+),", ptx))
    assert used and used <= addr_regs, (used, addr_regs)
    assert k.asm["cubin"]                          # ptxas for sm_90a took it
    md = k.metadata_dict
    assert not md["tensor_map_globals"]            # no module global: the launcher does not order streams
    assert md["tensor_map_params"] == [
        {"args": [0, 1, 2, 3], "box": [64, 128], "elem_bytes": 2, "elem_type": "UINT16", "swizzle": 3},
        {"args": [4, 5, 6, 7], "box": [64, 128], "elem_bytes": 2, "elem_type": "UINT16", "swizzle": 3}]
    assert md["arg_types"][:4] == ["ptr addrspace(1)", "i32", "i32", "i64"] and len(md["arg_types"]) == 13


@needs_ptxas
@pytest.mark.parametrize("dtype,bk,box,swizzle,elem", [("fp16", 16, [16, 64], 1, "UINT16"),
                                                        ("bf16", 32, [32, 64], 2, "UINT16"),
                                                        ("fp8e4nv", 128, [128, 64], 3, "UINT8"),
                                                        ("fp32", 32, [32, 64], 3, "UINT32"),
                                                        ("fp16", 128, [64, 64], 3, "UINT16")])
def test_map_metadata_records_the_compilers_choice(isolated_tritium, dtype, bk, box, swizzle, elem):
    """The swizzle follows the row width (32/64/128 bytes), rows wider than 128 bytes are 128-byte panels."""
    sig = dict(SIG, a_desc=f"tensordesc<{dtype}[64, {bk}]>", b_desc=f"tensordesc<{dtype}[64, {bk}]>")
    k = _compile(_mm, sig, {"BM": 64, "BN": 64, "BK": bk}, warps=4)
    maps = k.metadata_dict["tensor_map_params"]
    assert [m["box"] for m in maps] == [box, box] and {m["swizzle"] for m in maps} == {swizzle}
    assert {m["elem_type"] for m in maps} == {elem}
    assert len(_map_params(k.asm["ptx"])) == 2 and "tensormap.replace" not in k.asm["ptx"]


_OWN_SIG = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32",
            "PER_PROGRAM": "constexpr", "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"}
_ALIGNED = {(i, ): [["tt.divisibility", 16]] for i in (0, 1, 2, 5)}


@needs_ptxas
def test_kernels_own_descriptors_of_arguments_are_params(isolated_tritium):
    """``tl.make_tensor_descriptor(a_ptr, [M, K], [K, 1], ...)``: every field is a kernel argument (K's stride
    through its sign extension), so the launcher encodes it too."""
    k = _compile(_mm_device_desc, _OWN_SIG, {"BM": 64, "BN": 64, "BK": 64, "PER_PROGRAM": False}, attrs=_ALIGNED)
    ptx = k.asm["ptx"]
    assert "tensormap" not in ptx and len(_map_params(ptx)) == 2
    assert [m["args"] for m in k.metadata_dict["tensor_map_params"]] == [[0, 3, 5, 5], [1, 4, 5, 5]]
    assert not k.metadata_dict["tensor_map_globals"]
    # A's base from the program id: no TMA for it (cp.async), B's map a parameter
    k = _compile(_mm_device_desc, _OWN_SIG, {"BM": 64, "BN": 64, "BK": 64, "PER_PROGRAM": True}, attrs=_ALIGNED)
    assert [m["args"] for m in k.metadata_dict["tensor_map_params"]] == [[1, 4, 5, 5]]
    assert "cp.async.cg.shared.global" in k.asm["ptx"] and "tensormap" not in k.asm["ptx"]


@triton.jit
def _own(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # A: a constant row length; B: a shape computed in the kernel (its map is built on the device)
    a_desc = tl.make_tensor_descriptor(a_ptr, [M, 256], [256, 1], [BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, [tl.maximum(N, 1), K], [K, 1], [BN, BK])
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, 256, BK):
        acc = tl.dot(a_desc.load([tl.program_id(0) * BM, k]), b_desc.load([tl.program_id(1) * BN, k]).T, acc)
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.program_id(1) * BN + tl.arange(0, BN)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc)


@needs_ptxas
def test_constant_fields_and_computed_fields(isolated_tritium):
    sig = {k: v for k, v in _OWN_SIG.items() if k != "PER_PROGRAM"}
    k = _compile(_own, sig, {"BM": 64, "BN": 64, "BK": 64}, attrs=_ALIGNED)
    ptx = k.asm["ptx"]
    md = k.metadata_dict
    assert [m["args"] for m in md["tensor_map_params"]] == [[0, 3, ["const", 256], ["const", 256]]]
    assert len(_map_params(ptx)) == 1 and ptx.count("tensormap.cp_fenceproxy") == 1
    assert md["tensor_map_globals"]        # B's map is a module global: launches on two streams stay ordered


@triton.jit
def _mixed(a_desc, b_ptr, c_ptr, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    b_desc = tl.make_tensor_descriptor(b_ptr, [tl.maximum(N, 1), K], [K, 1], [BN, BK])
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(a_desc.load([tl.program_id(0) * BM, k]), b_desc.load([tl.program_id(1) * BN, k]).T, acc)
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.program_id(1) * BN + tl.arange(0, BN)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc)


@needs_ptxas
def test_mixed_kernel_keeps_stream_ordering(isolated_tritium):
    sig = {"a_desc": "tensordesc<fp16[64, 64]>", "b_ptr": "*fp16", "c_ptr": "*fp32", "N": "i32", "K": "i32",
           "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"}
    k = _compile(_mixed, sig, {"BM": 64, "BN": 64, "BK": 64}, warps=4,
                 attrs={(i, ): [["tt.divisibility", 16]] for i in (1, 2, 4)})
    ptx = k.asm["ptx"]
    assert len(_map_params(ptx)) == 1 and ptx.count("tensormap.cp_fenceproxy") == 1
    md = k.metadata_dict
    assert [m["args"] for m in md["tensor_map_params"]] == [[0, 1, 2, 3]] and md["tensor_map_globals"]


@needs_ptxas
def test_knob_off_builds_host_maps_on_device(isolated_tritium):
    from tritium_nvidia.knobs import nvidia
    with nvidia.scope():
        nvidia.tma_host_maps = False
        k = _compile(_mm, SIG, {"BM": 128, "BN": 128, "BK": 64})
    assert not _map_params(k.asm["ptx"]) and k.asm["ptx"].count("tensormap.cp_fenceproxy") == 2
    assert k.metadata_dict["tensor_map_globals"]


@needs_ptxas
def test_sm80_has_no_map_params(isolated_tritium):
    k = _compile(_mm, SIG, {"BM": 128, "BN": 128, "BK": 64}, arch=80)
    assert not _map_params(k.asm["ptx"]) and "tensor_map_params" not in k.metadata_dict


# -- the launcher's parameter buffer (no GPU: the driver's encoder is never reached) ----------------------------

_SPEC = {"args": [0, 1, 2, 3], "box": [64, 128], "elem_bytes": 2, "elem_type": "UINT16", "swizzle": 3}
_KERNEL = SimpleNamespace(name="_mm", src=SimpleNamespace(signature=SIG))


def _buffer(n_maps=2):
    from tritium_nvidia.driver import ArgumentBuffer
    types = ["ptr addrspace(1)", "i32", "i32", "i64"] * 2 + ["ptr addrspace(1)", "i32", "i32", "i32", "i32"]
    specs = [_SPEC, dict(_SPEC, args=[4, 5, 6, 7])][:n_maps]
    return ArgumentBuffer(types, specs, _KERNEL)


def test_map_slots_follow_the_arguments_64_byte_aligned():
    buf = _buffer()
    params = [buf.params[i] for i in range(15)]
    base = ctypes.addressof(buf.buffer)
    assert params[:13] == [base + o for o in buf.offsets]
    assert params[13] % 64 == 0 and params[14] % 64 == 0 and params[14] - params[13] == 128
    assert params[13] >= base + buf.packer.size
    assert params[14] + 128 <= base + ctypes.sizeof(buf.buffer)


def test_empty_tensor_gets_a_zero_map():
    """A descriptor with an empty dimension (a direct launch with shape 0): the kernel never copies through
    its map (descriptor_bulk's ok predicate), so zeros do, and the driver is not asked."""
    buf = _buffer(1)
    view = memoryview(buf.buffer).cast("B")
    off = buf.params[13] - ctypes.addressof(buf.buffer)
    view[off:off + 128] = b"\xff" * 128
    args = (0x7000_0000, 0, 64, 64, 0x7000_0000, 64, 64, 64, 0x7100_0000, 1, 1, 1, 0)
    assert buf.pack(args)
    assert bytes(view[off:off + 128]) == bytes(128)
    assert len(buf.maps.caches[0]) == 1


@pytest.mark.parametrize("args,what", [
    ((0x7000_0008, 128, 64, 64), "base address 0x70000008 is not a multiple of 16 bytes"),
    ((0x7000_0000, 128, 60, 60), "not positive multiples of 16 bytes"),
    ((0x7000_0000, 128, 64, -64), "not positive multiples of 16 bytes")])
def test_encoder_errors_name_kernel_and_argument(args, what):
    from tritium_nvidia.tensor_maps import TensorMapError
    buf = _buffer(1)
    with pytest.raises(TensorMapError) as info:
        buf.pack(args + (0x7000_0000, 64, 64, 64, 0x7100_0000, 1, 1, 1, 0))
    msg = str(info.value)
    assert "kernel `_mm`" in msg and "descriptor argument `a_desc`" in msg and what in msg
    assert "16-byte aligned" in msg and "TRITIUM_NVIDIA_TMA_HOST_MAPS=0" in msg


def test_flat_argument_names():
    from tritium_nvidia.tensor_maps import flat_arg_names
    names = flat_arg_names({"x": "tensordesc<fp16[1, 2, 4]>", "t": ("*fp32", "constexpr", "i32"), "n": "i32",
                            "B": "constexpr"})
    assert names == ["x.base", "x.shape[0]", "x.shape[1]", "x.shape[2]", "x.strides[0]", "x.strides[1]", "t[0]",
                     "t[2]", "n"]


def test_constant_fields_come_from_the_kernel():
    """A kernel's own descriptor with a compiled-in row length: the constants join the launch's values."""
    from tritium_nvidia.driver import ArgumentBuffer
    from tritium_nvidia.tensor_maps import TensorMapError
    kernel = SimpleNamespace(name="_own", src=SimpleNamespace(signature={"a_ptr": "*fp16", "M": "i32"}))
    spec = dict(_SPEC, args=[0, 1, ["const", 256], ["const", 256]])
    buf = ArgumentBuffer(["ptr addrspace(1)", "i32"], [spec], kernel)
    assert buf.pack((0x7000_0000, 0))
    assert list(buf.maps.caches[0]) == [(0x7000_0000, 0, 256, 256)]
    bad = ArgumentBuffer(["ptr addrspace(1)", "i32"], [dict(spec, args=[0, 1, ["const", 256], ["const", 20]])],
                         kernel)
    with pytest.raises(TensorMapError, match=r"kernel `_own`: .*descriptor made from argument `a_ptr`.*not "
                                             r"positive multiples of 16 bytes"):
        bad.pack((0x7000_0000, 64))
