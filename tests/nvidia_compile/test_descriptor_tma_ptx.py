"""On sm_90, pipelined tensor-descriptor loads are TMA bulk tensor copies (tensor maps built on the device,
mbarriers armed with the bytes of each stage, waited on by parity), and the PTX assembles for sm_90a. Where TMA
does not apply they stay cp.async copies: sm_80, the knob off, a descriptor whose base differs per program."""
from __future__ import annotations

import os
import re
import shutil
import sys

import pytest

import tritium
import tritium as triton
import tritium.language as tl
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "tests", "gpu"))
from test_descriptor_tma import _mm, _mm_device_desc  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")

SIG = {"a_desc": "tensordesc<fp16[128, 64]>", "b_desc": "tensordesc<fp16[128, 64]>", "c_ptr": "*fp32",
       "M": "i32", "N": "i32", "K": "i32", "shift_m": "i32", "BM": "constexpr", "BN": "constexpr",
       "BK": "constexpr"}


def _compile(fn, sig, consts, arch=90, stages=3, attrs=None):
    from tritium import plugins
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(reg):
        # the cubin stage runs ptxas: the PTX assembles for sm_90a
        return tritium.compile(ASTSource(fn, sig, consts, attrs or {}), target=GPUTarget("cuda", arch, 32),
                               options={"num_warps": 8, "num_stages": stages})


@pytest.mark.parametrize("host_maps", [True, False])
@pytest.mark.parametrize("stages", [2, 3, 4])
def test_descriptor_loads_are_bulk_tensor_copies(isolated_tritium, stages, host_maps):
    from tritium_nvidia.knobs import nvidia
    with nvidia.scope():
        nvidia.tma_host_maps = host_maps       # off: host descriptors' maps built on the device, as before
        k = _compile(_mm, SIG, {"BM": 128, "BN": 128, "BK": 64}, stages=stages)
    ptx = k.asm["ptx"]
    if host_maps:
        # host descriptors: maps encoded at launch, in two 128-byte grid-constant parameters (test_tma_params_ptx)
        assert "tensormap" not in ptx and len(k.metadata_dict["tensor_map_params"]) == 2
        assert not k.metadata_dict["tensor_map_globals"]
    else:
        assert ptx.count("tensormap.cp_fenceproxy.global.shared::cta") == 2          # one map per descriptor
        assert "tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32" in ptx     # 128-byte rows: 128B swizzle
        assert re.search(r"swizzle_mode\.shared::cta\.b1024\.b32 \[%r\d+\], 3;", ptx)
        assert re.search(r"box_dim\.shared::cta\.b1024\.b32 \[%r\d+\], 0, 64;", ptx)
        assert k.metadata_dict["tensor_map_globals"] and "tensor_map_params" not in k.metadata_dict
    # S - 1 stages before the loop, one in it; two descriptors each
    assert ptx.count("mbarrier.arrive.expect_tx.shared::cta.b64") == stages
    assert re.search(r"expect_tx\.shared::cta\.b64 _, \[%r\d+\], %r\d+;", ptx)
    assert ptx.count("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes") == 2 * stages
    assert ptx.count("mbarrier.init.shared::cta.b64") == stages
    assert ptx.count("mbarrier.inval.shared::cta.b64") == stages
    assert "mbarrier.try_wait.parity.shared::cta.b64" in ptx
    assert "cp.async.cg.shared.global" not in ptx
    assert "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16" in ptx
    # the accumulating dot stays in flight into the next iteration
    assert "wgmma.wait_group.sync.aligned 1;" in ptx


def test_expected_bytes_cover_both_blocks(isolated_tritium):
    k = _compile(_mm, SIG, {"BM": 128, "BN": 128, "BK": 64})
    llir = k.asm["llir"]
    # two 128 x 64 fp16 blocks per stage
    assert re.search(r"expect_tx[^\n]*i32 32768\)", llir), re.findall(r"expect_tx[^\n]*", llir)[:1]


def test_wide_rows_are_two_panels(isolated_tritium):
    sig = dict(SIG, a_desc="tensordesc<fp16[64, 128]>", b_desc="tensordesc<fp16[64, 128]>")
    ptx = _compile(_mm, sig, {"BM": 64, "BN": 64, "BK": 128}).asm["ptx"]
    # a 256-byte row is two 128-byte boxes side by side
    assert ptx.count("cp.async.bulk.tensor.2d") == 2 * 2 * 3


def test_sm80_and_knob_off_keep_cp_async(isolated_tritium):
    ptx80 = _compile(_mm, SIG, {"BM": 128, "BN": 128, "BK": 64}, arch=80).asm["ptx"]
    from tritium_nvidia.knobs import nvidia
    with nvidia.scope():
        nvidia.tma = False
        off = _compile(_mm, SIG, {"BM": 128, "BN": 128, "BK": 64}).asm["ptx"]
    for ptx in (ptx80, off):
        assert "tensormap" not in ptx and "cp.async.bulk" not in ptx and "mbarrier" not in ptx
        assert "cp.async.cg.shared.global" in ptx


def test_only_launch_uniform_descriptors_get_maps(isolated_tritium):
    sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32",
           "PER_PROGRAM": "constexpr", "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"}
    consts = {"BM": 64, "BN": 64, "BK": 64}
    # as launched with aligned arrays and K a multiple of 16 (rows of 16-byte multiples)
    aligned = {(i, ): [["tt.divisibility", 16]] for i in (0, 1, 2, 5)}
    uniform = _compile(_mm_device_desc, sig, dict(consts, PER_PROGRAM=False), attrs=aligned).asm["ptx"]
    per_program = _compile(_mm_device_desc, sig, dict(consts, PER_PROGRAM=True), attrs=aligned).asm["ptx"]
    # K not known to be a multiple of 16 (8 fp16 elements): rows may not be 16-byte multiples, no TMA
    unknown_k = _compile(_mm_device_desc, sig, dict(consts, PER_PROGRAM=False),
                         attrs={(i, ): [["tt.divisibility", 16]] for i in (0, 1, 2)}).asm["ptx"]
    assert "tensormap" not in unknown_k and "cp.async.bulk" not in unknown_k
    # maps of kernel arguments: encoded by the launcher, 128-byte parameters (test_tma_params_ptx.py)
    assert uniform.count(".b8 _mm_device_desc_param_") == 2 and uniform.count("cp.async.bulk.tensor.2d") == 6
    # A's base depends on the program id: its loads stay cp.async, B's are bulk copies
    assert per_program.count(".b8 _mm_device_desc_param_") == 1
    assert "cp.async.cg.shared.global" in per_program and "cp.async.bulk.tensor.2d" in per_program


@pytest.mark.parametrize("rows16", [False, True], ids=["rows-end-unknown", "rows-end-specialized"])
def test_descriptor_store_is_bulk_copies(isolated_tritium, rows16):
    """examples/08's epilogue `c_desc.store`: the tile goes through shared memory (the swizzled layout) and out
    in four 64-column boxes (128 x 256 fp16). A launch whose C has rows of a multiple of 16 elements says so
    (the descriptor's innermost extent specialized, attrs path (2, 2)): no per-element global stores then."""
    import importlib.util
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    spec = importlib.util.spec_from_file_location("ex08_ptx", os.path.join(root, "examples",
                                                                         "08-persistent-matmul-descriptors.py"))
    ex = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex)
    sig = {"a_desc": "tensordesc<fp16[128, 64]>", "b_desc": "tensordesc<fp16[256, 64]>",
           "c_desc": "tensordesc<fp16[128, 256]>", "M": "i32", "N": "i32", "K": "i32", "BLOCK_M": "constexpr",
           "BLOCK_N": "constexpr", "BLOCK_K": "constexpr", "GROUP_M": "constexpr", "NUM_SMS": "constexpr",
           "WARP_SPECIALIZE": "constexpr"}
    consts = dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8, NUM_SMS=132, WARP_SPECIALIZE=False)
    k = _compile(ex.matmul_persistent, sig, consts, attrs={(2, 2): [["tt.divisibility", 16]]} if rows16 else None)
    ptx = k.asm["ptx"]
    assert "tensormap.cp_fenceproxy" not in ptx and len(k.metadata_dict["tensor_map_params"]) == 3
    assert ptx.count("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group") == 4
    assert "cp.async.bulk.wait_group.read 0" in ptx and "fence.proxy.async.shared::cta" in ptx
    # one run-time branch: the start (tile ids through cdiv of arguments) is not proved non-negative, nor, without
    # the launch's fact, the rows' end (descriptor_store.py); its other side is a loop over the block's shared
    # copy (descriptor_fallback.py): a couple of global stores in the PTX, not one per element
    assert len(re.findall(r"^bulkneg\d*:", k.asm["llir"], re.M)) == 1
    assert 1 <= ptx.count("st.global") <= 4


def test_host_descriptor_key_specializes_the_rows_end():
    """The launch key of a host TensorDescriptor says whether its innermost extent is a multiple of 16, and the
    signature's attrs carry it to the descriptor's innermost shape argument (kernel_args.flat_args)."""
    import numpy as np

    from tritium.compiler.kernel_args import flat_args, parse
    from tritium.runtime.structured import structured_inputs
    from tritium.tools.tensor_descriptor import TensorDescriptor, descriptor_key
    x = np.zeros((64, 48), np.float16)
    for n, want in ((48, True), (40, False)):
        k, _ = descriptor_key(TensorDescriptor(x, [64, n], [48, 1], [16, 32]))
        assert k[5] is want
        attrs: dict = {}
        sig = structured_inputs(None, k, None, (3, ), (3, ), {}, attrs, [])
        assert attrs == ({(3, 2): [["tt.divisibility", 16]]} if want else {})
        assert [p for _, p, _ in flat_args(parse(sig, (3, ), {}), (3, ))] == [(3, ), None, (3, 2), None]
    k, _ = descriptor_key(TensorDescriptor(x, [64, 48], [48, 1], [16, 32]), align=False)
    assert k[5] is False


def _store_then_load(a_desc, out_ptr, BM: tl.constexpr, BN: tl.constexpr):
    a_desc.store([0, 0], a_desc.load([0, 0]) + 1)
    v = a_desc.load([0, 0])
    tl.store(out_ptr + tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :], v)


def test_descriptor_read_back_keeps_plain_stores(isolated_tritium):
    """A store through a descriptor this kernel also loads from stays a plain store: the bulk store is only
    waited for until it has read shared memory, so a later load could miss it."""
    ptx = _compile(triton.jit(_store_then_load), {"a_desc": "tensordesc<fp32[16, 16]>", "out_ptr": "*fp32",
                                                   "BM": "constexpr", "BN": "constexpr"},
                   {"BM": 16, "BN": 16}).asm["ptx"]
    assert "cp.async.bulk.tensor.2d.global" not in ptx and "st.global" in ptx
