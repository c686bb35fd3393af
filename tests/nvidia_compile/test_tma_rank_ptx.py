"""Tensor descriptors of every rank on sm_90 compile to the copy engine's forms (no GPU needed; ptxas assembles
the PTX): each case of tests/gpu/test_tma_rank.py loads its block with ``cp.async.bulk.tensor.{rank}d`` into
shared memory, completing on an mbarrier, and stores with the bulk tensor store of the same rank, for
descriptors the kernel makes of its arguments (maps encoded by the launcher, ``tensor_map_params``), of values
it computes (maps built on the device, ``tensormap.replace``) and host ``TensorDescriptor`` arguments. A NaN
padding asks the engine for a NaN fill (a float element type). Where the engine cannot express the block, or
the kernel also writes through the descriptor, the portable per-element path stays."""
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

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "gpu"))
from test_tma_rank import BUILT, CASES, HOST, KERNELS, OWN, _ids, start_provably_aligned  # noqa: E402
from test_tma_rank_reduce import CASES as REDUCE_CASES  # noqa: E402
from test_tma_rank_reduce import _ids as _reduce_ids  # noqa: E402
from test_tma_rank_reduce import _reduce1, _reduce3  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")

_TY = {"float16": "fp16", "float32": "fp32", "int8": "i8"}


def _compile(fn, sig, consts, attrs, warps=4, every_rank=True):
    from tritium import plugins
    from tritium_nvidia.knobs import nvidia
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(reg), nvidia.scope():
        # TRITIUM_NVIDIA_TMA_RANKS (on by default; None: the default, whatever the environment says)
        if every_rank is None:
            del nvidia.tma_ranks
        else:
            nvidia.tma_ranks = every_rank
        return tritium.compile(ASTSource(fn, sig, consts, attrs), target=GPUTarget("cuda", 90, 32),
                               options={"num_warps": warps, "num_stages": 3})


def _case_kernel(dtype, shape, block, pad, mode, every_rank=True, offsets=None):
    rank = len(shape)
    ty = _TY[dtype]
    if mode == HOST:
        desc = f"tensordesc<{ty}[{', '.join(map(str, block))}]"
        sig = {"x": desc + (",padding=nan>" if pad == "nan" else ">"), "y": desc + ">"}
    else:
        sig = {"x": f"*{ty}", "y": f"*{ty}"}
    sig["out"] = f"*{ty}"
    names = [f"n{d}" for d in range(rank)] + [f"s{d}" for d in range(rank - 1)] + [f"o{d}" for d in range(rank)]
    sig.update({n: "i32" for n in names + ["zero"]})
    sig.update({f"B{d}": "constexpr" for d in range(rank)})
    sig.update(PAD="constexpr", MODE="constexpr")
    consts = {f"B{d}": b for d, b in enumerate(block)}
    consts.update(PAD=pad, MODE=mode)
    # pointers 16-byte aligned and strides multiples of 16, as a launch specializes them; offsets that are
    # multiples of 16 likewise (``offsets``: the values of a launch; None: all of them such multiples)
    aligned = [0, 1, 2] + [3 + rank + d for d in range(rank - 1)]
    aligned += [3 + 2 * rank - 1 + d for d in range(rank) if offsets is None or offsets[d] % 16 == 0]
    return _compile(KERNELS[rank], sig, consts, {(i, ): [["tt.divisibility", 16]] for i in aligned},
                    every_rank=every_rank)


@pytest.mark.parametrize("mode", [OWN, BUILT, HOST], ids=["own", "built", "host"])
@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_every_rank_copies_through_tma(isolated_tritium, case, mode):
    dtype, shape, block, _, pad, _ = case
    rank = len(shape)
    k = _case_kernel(dtype, shape, block, pad, mode)
    ptx = k.asm["ptx"]
    loads = re.findall(r"cp\.async\.bulk\.tensor\.(\d)d\.shared::cluster\.global\.mbarrier::complete_tx::bytes", ptx)
    stores = re.findall(r"cp\.async\.bulk\.tensor\.(\d)d\.global\.shared::cta\.bulk_group", ptx)
    # one copy per box: 1-D blocks in runs of 256, rows in 128-byte panels, the outer dimension in runs of 256
    eb = {"float16": 2, "float32": 4, "int8": 1}[dtype]
    if rank == 1:
        boxes = -(-block[0] // 256)
    else:
        boxes = -(-block[-1] * eb // 128) * -(-block[0] // 256)
    assert loads == [str(rank)] * boxes and stores == [str(rank)] * boxes
    assert "mbarrier.try_wait.parity" in ptx and "mbarrier.inval" in ptx
    assert not re.search(r"\bld\.global", ptx), "the block is not also read element by element"
    assert k.asm.get("cubin")
    maps = k.metadata_dict.get("tensor_map_params") or []
    if mode == BUILT:
        # x's and y's shapes are computed in the kernel: both maps are built by the program
        assert ptx.count("tensormap.cp_fenceproxy") == 2 and not maps
        assert ("tensormap.replace.tile.fill_mode.shared::cta.b1024.b32 [$0], 1" in k.asm["llir"]) == (pad == "nan")
    else:
        assert "tensormap.replace" not in ptx and len(maps) == 2
        assert [len(m["box"]) for m in maps] == [rank, rank]
        assert (maps[0].get("oob_fill") == "NAN_REQUEST_ZERO_FMA") == (pad == "nan")
        if pad == "nan":
            assert maps[0]["elem_type"] == {"float16": "FLOAT16", "float32": "FLOAT32"}[dtype]
        assert "oob_fill" not in maps[1] and maps[1]["elem_type"].startswith("UINT")


@pytest.mark.parametrize("mode", [OWN, BUILT, HOST], ids=["own", "built", "host"])
@pytest.mark.parametrize("case", [c for c in CASES if not start_provably_aligned(c[2], c[3])], ids=_ids)
def test_unaligned_start_keeps_the_portable_path(isolated_tritium, case, mode):
    """The copy engine requires a box's innermost coordinate at a multiple of 16 bytes; a box starting
    elsewhere stops the kernel with "an illegal instruction" (the H200, 2026-12-02: every kernel of
    tests/gpu/test_tma_rank.py, whose innermost offsets were -100, 5, -3, 30, 3, -8, 20, -4 elements). Where
    the compiler cannot prove it (an offset argument that is not a multiple of 16) the block is loaded and
    stored element by element."""
    dtype, shape, block, offsets, pad, _ = case
    k = _case_kernel(dtype, shape, block, pad, mode, offsets=offsets)
    ptx = k.asm["ptx"]
    assert "cp.async.bulk.tensor" not in ptx
    assert re.search(r"\bld\.global", ptx) and re.search(r"\bst\.global", ptx)


@pytest.mark.parametrize("case", REDUCE_CASES, ids=_reduce_ids)
def test_reductions_need_an_aligned_start(isolated_tritium, case):
    """A descriptor reduction is a bulk tensor reduction only where its box provably starts at a multiple of
    16 bytes (the offsets of the GPU test as a launch specializes them), else element-wise atomics."""
    dtype, op, shape, block, offsets, _ = case
    rank = len(shape)
    ty = {"float16": "fp16", "float32": "fp32", "int32": "i32", "int64": "i64"}[dtype]
    sig = {"x": f"*{ty}", "y": f"*{ty}"}
    names = [f"n{d}" for d in range(rank)] + [f"s{d}" for d in range(rank - 1)] + [f"o{d}" for d in range(rank)]
    sig.update({n: "i32" for n in names + ["zero"]})
    sig.update({f"B{d}": "constexpr" for d in range(rank)})
    sig.update(OP="constexpr", MODE="constexpr")
    consts = {f"B{d}": b for d, b in enumerate(block)}
    consts.update(OP=op, MODE=OWN)
    aligned = [0, 1] + [2 + rank + d for d in range(rank - 1)]
    aligned += [2 + 2 * rank - 1 + d for d in range(rank) if offsets[d] % 16 == 0]
    k = _compile(_reduce1 if rank == 1 else _reduce3, sig, consts,
                 {(i, ): [["tt.divisibility", 16]] for i in aligned})
    bulk = "cp.reduce.async.bulk.tensor" in k.asm["ptx"]
    assert bulk == start_provably_aligned(block, offsets)
    # element-wise atomics where the engine is not used, and (offsets are arguments, maybe negative) beside it
    # for a block starting before the tensor (test_tma_store_start.py)
    assert re.search(r"\b(red|atom)\.global", k.asm["ptx"])


@triton.jit
def _softmax_rows(x_desc, y_desc, BN: tl.constexpr):
    # one row block per program, fed to reductions (no dot, no loop): Triton 3.6 loads it through TMA too
    r = tl.program_id(0)
    v = x_desc.load([r, 0]).to(tl.float32)
    e = tl.exp(v - tl.max(v, 1)[:, None])
    y_desc.store([r, 0], (e / tl.sum(e, 1)[:, None]).to(tl.float16))


def test_single_load_feeding_reductions_is_tma(isolated_tritium):
    sig = {"x_desc": "tensordesc<fp16[1, 1024]>", "y_desc": "tensordesc<fp16[1, 1024]>", "BN": "constexpr"}
    k = _compile(_softmax_rows, sig, {"BN": 1024}, {})
    ptx = k.asm["ptx"]
    # one row: plain contiguous runs of 256 elements (no swizzle: the row's 128-byte panels would each need a
    # 1024-byte aligned start)
    assert ptx.count("cp.async.bulk.tensor.2d.shared::cluster.global") == 4
    assert ptx.count("cp.async.bulk.tensor.2d.global.shared::cta") == 4


@triton.jit
def _three(x, y, n0, n1, B0: tl.constexpr, B1: tl.constexpr, B2: tl.constexpr, SAME: tl.constexpr):
    d = tl.make_tensor_descriptor(x, [n0, n1, 64], [n1 * 64, 64, 1], [B0, B1, B2])
    if SAME:
        out = d
    else:
        out = tl.make_tensor_descriptor(y, [n0, n1, 64], [n1 * 64, 64, 1], [B0, B1, B2])
    v = d.load([tl.program_id(0) * B0, 0, 0])
    out.store([tl.program_id(0) * B0, 0, 0], v * 2)


@pytest.mark.parametrize("B1,same", [(4, True), (512, False)])
def test_portable_where_tma_cannot_or_must_not(isolated_tritium, B1, same):
    """A descriptor the kernel also stores through keeps per-element loads (the engine's reads would need a
    proxy fence after the program's own stores); a middle dimension of 512 fits no box (at most 256)."""
    sig = {"x": "*fp32", "y": "*fp32", "n0": "i32", "n1": "i32", "B0": "constexpr", "B1": "constexpr",
           "B2": "constexpr", "SAME": "constexpr"}
    k = _compile(_three, sig, {"B0": 2, "B1": B1, "B2": 32, "SAME": same},
                 {(i, ): [["tt.divisibility", 16]] for i in (0, 1)})
    ptx = k.asm["ptx"]
    assert "cp.async.bulk.tensor.3d.shared::cluster.global" not in ptx
    assert re.search(r"\bld\.global", ptx)
    # the check is the engine's, not a refusal of the kernel: the same with a middle dimension of 4 is TMA
    if not same:
        k = _compile(_three, sig, {"B0": 2, "B1": 4, "B2": 32, "SAME": same},
                     {(i, ): [["tt.divisibility", 16]] for i in (0, 1)})
        assert "cp.async.bulk.tensor.3d.shared::cluster.global" in k.asm["ptx"]


def test_knob_off_keeps_the_portable_path(isolated_tritium):
    from tritium_nvidia.knobs import nvidia
    with nvidia.scope():
        nvidia.tma = False
        k = _case_kernel("float16", (5, 7, 40), (2, 4, 64), "zero", OWN)
    assert "cp.async.bulk.tensor" not in k.asm["ptx"] and re.search(r"\bld\.global", k.asm["ptx"])


#: the map's element type per (dtype, op): the engine reduces by it (min/max signed where the data is)
_REDUCE_TYPES = {("float32", "add"): ("FLOAT32", 7), ("float16", "add"): ("FLOAT16", 6), ("int32", "add"): ("UINT32", 2),
                 ("int32", "min"): ("INT32", 3), ("int64", "max"): ("INT64", 5), ("int32", "and"): ("UINT32", 2),
                 ("int32", "or"): ("UINT32", 2), ("int64", "xor"): ("UINT64", 4)}


@pytest.mark.parametrize("mode", [OWN, BUILT, HOST], ids=["own", "built", "host"])
@pytest.mark.parametrize("case", REDUCE_CASES, ids=_reduce_ids)
def test_descriptor_reductions_are_bulk_tensor_reductions(isolated_tritium, case, mode):
    dtype, op, shape, block, _, _ = case
    rank = len(shape)
    ty = {"float16": "fp16", "float32": "fp32", "int32": "i32", "int64": "i64"}[dtype]
    sig = {"x": f"*{ty}", "y": f"tensordesc<{ty}[{', '.join(map(str, block))}]>" if mode == HOST else f"*{ty}"}
    names = [f"n{d}" for d in range(rank)] + [f"s{d}" for d in range(rank - 1)] + [f"o{d}" for d in range(rank)]
    sig.update({n: "i32" for n in names + ["zero"]})
    sig.update({f"B{d}": "constexpr" for d in range(rank)})
    sig.update(OP="constexpr", MODE="constexpr")
    consts = {f"B{d}": b for d, b in enumerate(block)}
    consts.update(OP=op, MODE=mode)
    # the offsets too: where they are not provably multiples of 16 elements the copies stay per element
    aligned = [0, 1] + [2 + rank + d for d in range(rank - 1)] + [2 + 2 * rank - 1 + d for d in range(rank)]
    k = _compile(_reduce1 if rank == 1 else _reduce3, sig, consts,
                 {(i, ): [["tt.divisibility", 16]] for i in aligned})
    ptx = k.asm["ptx"]
    eb = {"float16": 2, "float32": 4, "int32": 4, "int64": 8}[dtype]
    boxes = -(-block[0] // 256) if rank == 1 else -(-block[-1] * eb // 128)
    assert re.findall(rf"cp\.reduce\.async\.bulk\.tensor\.{rank}d\.global\.shared::cta\.(\w+)\.bulk_group", ptx) \
        == [op] * boxes
    # the offsets are arguments, maybe negative: element-wise atomics only on the branch taken by a block that
    # starts before the tensor (a bulk reduction there is an illegal instruction: test_tma_store_start.py)
    assert len(re.findall(r"^bulkneg\d*:", k.asm["llir"], re.M)) == 1 and re.search(r"\b(red|atom)\.global", ptx)
    name, code = _REDUCE_TYPES[dtype, op]
    if mode == BUILT:
        assert f"tensormap.replace.tile.elemtype.shared::cta.b1024.b32 [$0], {code};" in k.asm["llir"]
    else:
        assert [m["elem_type"] for m in k.metadata_dict["tensor_map_params"]] == [name]


@triton.jit
def _rowsum(dx, out, N, BM: tl.constexpr, BN: tl.constexpr):
    r = tl.program_id(0) * BM
    acc = tl.zeros((BM, ), tl.float32)
    for j in range(0, N, BN):
        acc += tl.sum(dx.load([r, j]).to(tl.float32), 1)
    tl.store(out + r + tl.arange(0, BM), acc)


@pytest.mark.parametrize("in_loops", [True, False])
def test_loads_in_a_loop_that_is_not_pipelined(isolated_tritium, in_loops):
    """A descriptor load feeding reductions inside a loop is one TMA copy per iteration (the loop is not
    software-pipelined: no dot); TRITIUM_NVIDIA_TMA_LOOP_LOADS=0 leaves such loads element by element."""
    from tritium_nvidia.knobs import nvidia
    sig = {"dx": "tensordesc<fp16[8, 256]>", "out": "*fp32", "N": "i32", "BM": "constexpr", "BN": "constexpr"}
    with nvidia.scope():
        nvidia.tma_loop_loads = in_loops
        k = _compile(_rowsum, sig, {"BM": 8, "BN": 256}, {(1, ): [["tt.divisibility", 16]]})
    ptx = k.asm["ptx"]
    # 256 fp16 columns: four 128-byte panels of 8 rows
    assert ptx.count("cp.async.bulk.tensor.2d.shared::cluster.global") == (4 if in_loops else 0)
    assert bool(re.search(r"\bld\.global", ptx)) != in_loops


def test_batched_matmul_loads_are_pipelined(isolated_tritium):
    """``desc.load([z, m, k]).reshape(BM, BK)`` feeding a dot: software-pipelined like a 2-D load (three stages of
    A's and B's boxes, copies issued in the prologue and in the loop), the reshape a view of the stage."""
    from test_tma_rank_dot import _bmm3
    sig = {"a": "tensordesc<fp16[1, 128, 64]>", "b": "tensordesc<fp16[1, 128, 64]>", "c": "*fp32", "Z": "i32",
           "M": "i32", "N": "i32", "K": "i32", "B_T": "constexpr", "HOST": "constexpr", "BM": "constexpr",
           "BN": "constexpr", "BK": "constexpr"}
    k = _compile(_bmm3, sig, {"B_T": True, "HOST": True, "BM": 128, "BN": 128, "BK": 64},
                 {(2, ): [["tt.divisibility", 16]]}, warps=8)
    ptx = k.asm["ptx"]
    assert len(re.findall(r"cp\.async\.bulk\.tensor\.3d\.shared::cluster\.global", ptx)) >= 4
    assert k.metadata_dict["shared"] >= 3 * 2 * 128 * 64 * 2
    assert "wgmma.mma_async" in ptx


def test_every_rank_is_on_by_default(isolated_tritium, monkeypatch):
    """TMA of every rank is the default (the H200 measured it against off: PERF.md, seventh session): a 3-D copy's
    load and store are bulk copies without any knob set."""
    monkeypatch.delenv("TRITIUM_NVIDIA_TMA_RANKS", raising=False)
    k = _case_kernel("float16", (5, 7, 40), (2, 4, 64), "zero", OWN, every_rank=None)
    assert "cp.async.bulk.tensor.3d.shared::cluster.global" in k.asm["ptx"]
    assert "cp.async.bulk.tensor.3d.global.shared::cta" in k.asm["ptx"]


def test_every_rank_knob_off(isolated_tritium):
    """TRITIUM_NVIDIA_TMA_RANKS=0: a 3-D copy goes element by element, a 2-D one keeps the bulk store it had
    (its load outside a pipelined loop stays per element), as before every rank's TMA."""
    k = _case_kernel("float16", (5, 7, 40), (2, 4, 64), "zero", OWN, every_rank=False)
    assert "cp.async.bulk.tensor" not in k.asm["ptx"] and re.search(r"\bld\.global", k.asm["ptx"])
    k = _case_kernel("float16", (37, 150), (16, 128), "zero", OWN, every_rank=False)
    assert "cp.async.bulk.tensor.2d.global.shared::cta" in k.asm["ptx"]
    assert "cp.async.bulk.tensor.2d.shared::cluster" not in k.asm["ptx"]


@triton.jit
def _mm_shifted(a_desc, b_desc, c, K, shift, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    m = tl.program_id(0) * BM
    n = tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = a_desc.load([m, k + shift])
        b = b_desc.load([k, n])
        acc = tl.dot(a, b, acc)
    tl.store(c + (m + tl.arange(0, BM))[:, None] * 256 + n + tl.arange(0, BN)[None, :], acc)


@pytest.mark.parametrize("aligned", [True, False])
def test_pipelined_load_needs_an_aligned_start(isolated_tritium, aligned):
    """In a software-pipelined loop too: A's boxes start at column ``k + shift``; unless ``shift`` is a
    multiple of 16 (as a launch specializes it) A's stages are filled by the program, B's still by the engine."""
    sig = {"a_desc": "tensordesc<fp16[128, 64]>", "b_desc": "tensordesc<fp16[64, 128]>", "c": "*fp32", "K": "i32",
           "shift": "i32", "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"}
    hints = [2, 3] + ([4] if aligned else [])
    k = _compile(_mm_shifted, sig, {"BM": 128, "BN": 128, "BK": 64}, {(i, ): [["tt.divisibility", 16]] for i in hints},
                 warps=8, every_rank=False)
    ptx = k.asm["ptx"]
    copies = re.findall(r"cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global[^\n]*", ptx)
    # per issue site (two prologue stages and the loop's): B's 128 fp16 columns are two 128-byte panels, A's 64 one
    assert len(copies) == (3 * (2 + 1) if aligned else 3 * 2)
    assert bool(re.search(r"\bld\.global", ptx)) != aligned, "A's stages are filled through registers"
