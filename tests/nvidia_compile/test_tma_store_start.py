"""A descriptor store or reduction through the copy engine must not start a box at a negative coordinate: on the
H200 (2026-12-02) every bulk tensor store whose box had a negative coordinate in any dimension stopped the kernel
with an illegal instruction, Triton 3.6's kernels alike, while loads at the same coordinates read the padding
and stores running past the end were clipped (backends/nvidia/notes/PERF.md, "Issue 14, sixth session").

So where the compiler cannot prove the block's start non-negative, the program checks it and stores element by
element when it is negative (descriptor_store.py); a start made of program ids and constants needs no check.
No GPU needed: ptxas assembles the PTX."""
from __future__ import annotations

import os
import re
import shutil

import pytest

import tritium
import tritium as triton
import tritium.language as tl
from tritium.backends.compiler import GPUTarget
from tritium.compiler import ASTSource

pytestmark = pytest.mark.skipif(shutil.which("ptxas") is None and not os.environ.get("TRITON_PTXAS_PATH"),
                                reason="ptxas is not on the PATH (and TRITON_PTXAS_PATH is not set)")

_BULK_STORE = re.compile(r"cp\.(reduce\.)?async\.bulk\.tensor\.\dd\.global\.shared::cta")
# the per-element path's stores or atomics (the kernels below write global memory no other way)
_MASKED = re.compile(r"\b(st|red|atom)\.global")


@triton.jit
def _store_1d(x, y, n, o, B: tl.constexpr, FROM_PID: tl.constexpr, REDUCE: tl.constexpr):
    p = tl.program_id(0)
    v = tl.load(x + p * B + tl.arange(0, B))
    d = tl.make_tensor_descriptor(y, [n], [1], [B])
    if FROM_PID:
        start = p * B
    else:
        start = o + p * B
    if REDUCE:
        d.atomic_add([start], v)
    else:
        d.store([start], v)


@triton.jit
def _store_3d(x, y, n0, n1, n2, s0, s1, o0, o1, o2, B0: tl.constexpr, B1: tl.constexpr, B2: tl.constexpr,
              FROM_PID: tl.constexpr):
    p = tl.program_id(0)
    n: tl.constexpr = B0 * B1 * B2
    v = tl.reshape(tl.load(x + p * n + tl.arange(0, n)), [B0, B1, B2])
    d = tl.make_tensor_descriptor(y, [n0, n1, n2], [s0, s1, 1], [B0, B1, B2])
    if FROM_PID:
        d.store([p * B0, (p % 3) * B1, (p // 2) * B2], v)
    else:
        d.store([o0 + p * B0, o1, o2], v)


def _compile(fn, sig, consts, aligned, every_rank=True):
    from tritium import plugins
    from tritium_nvidia.knobs import nvidia
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(reg), nvidia.scope():
        nvidia.tma_ranks = every_rank
        return tritium.compile(ASTSource(fn, sig, consts, {(i, ): [["tt.divisibility", 16]] for i in aligned}),
                               target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})


@pytest.mark.parametrize("reduce", [False, True], ids=["store", "atomic_add"])
@pytest.mark.parametrize("from_pid", [False, True], ids=["offset-argument", "program-id"])
def test_rank1_store_start_checked_unless_proved(isolated_tritium, from_pid, reduce):
    sig = {"x": "*fp32", "y": "*fp32", "n": "i32", "o": "i32", "B": "constexpr", "FROM_PID": "constexpr",
           "REDUCE": "constexpr"}
    # o a multiple of 16 (as a launch specializes -112): the box starts at a 16-byte multiple, TMA is allowed;
    # n too (1024), so the rows end on a 16-byte boundary
    k = _compile(_store_1d, sig, {"B": 512, "FROM_PID": from_pid, "REDUCE": reduce}, aligned=(0, 1, 2, 3))
    ptx = k.asm["ptx"]
    assert len(_BULK_STORE.findall(ptx)) == 2, "two boxes of 256 through the copy engine"
    # an offset argument may be negative: the program checks the start and has the per-element path for it
    assert bool(_MASKED.search(ptx)) == (not from_pid)
    assert ("setp.lt.s32" in ptx or "setp.gt.s32" in ptx or "setp.ge.s32" in ptx) or from_pid


@pytest.mark.parametrize("from_pid", [False, True], ids=["offset-arguments", "program-id"])
def test_rank3_store_start_checked_unless_proved(isolated_tritium, from_pid):
    sig = {"x": "*fp16", "y": "*fp16", **{k: "i32" for k in ("n0", "n1", "n2", "s0", "s1", "o0", "o1", "o2")},
           "B0": "constexpr", "B1": "constexpr", "B2": "constexpr", "FROM_PID": "constexpr"}
    k = _compile(_store_3d, sig, {"B0": 2, "B1": 4, "B2": 64, "FROM_PID": from_pid},
                 aligned=(0, 1, 4, 5, 6, 9))
    ptx = k.asm["ptx"]
    assert _BULK_STORE.search(ptx)
    assert bool(_MASKED.search(ptx)) == (not from_pid)


@triton.jit
def _five(y, o, n, B: tl.constexpr):
    p = tl.program_id(0)
    d = tl.make_tensor_descriptor(y, [1024], [1], [B])
    v = tl.zeros([B], tl.float32)
    d.store([p * B], v)                       # proved
    d.store([(p // 3) % 5 * B + 16], v)       # proved
    d.store([o + p * B], v)                   # an argument: checked
    d.store([p * B - 16], v)                  # a subtraction: checked
    for i in range(2, n, 2):
        d.store([i * B], v)                   # a loop counting up from 2: proved


def test_what_is_proved_non_negative(isolated_tritium):
    """Program ids, non-negative constants, loop counters counting up from such values, and arithmetic keeping
    them so need no check; a kernel argument or a subtraction does (one branch to the per-element path each)."""
    k = _compile(_five, {"y": "*fp32", "o": "i32", "n": "i32", "B": "constexpr"}, {"B": 256}, aligned=(0, 1))
    assert len(_BULK_STORE.findall(k.asm["llir"])) == 5
    assert len(re.findall(r"^bulkneg\d*:", k.asm["llir"], re.M)) == 2


@pytest.mark.parametrize("ty", ["i8", "fp32"])
@pytest.mark.parametrize("n_aligned", [False, True], ids=["rows-end-anywhere", "rows-end-on-16-bytes"])
def test_store_checks_where_rows_may_end_inside_16_bytes(isolated_tritium, n_aligned, ty):
    """On the H200 an int8 block of 32-byte rows stored into rows ending 40 bytes in also wrote the next 8 bytes
    (and later fp16/fp32 rows ending off 16 bytes too, test_tma_store_row_end.py), while loads were right: where
    the innermost extent is not known to be a multiple of 16 bytes, the program checks it and stores element by
    element otherwise, even at a start that cannot be negative."""
    sig = {"x": f"*{ty}", "y": f"*{ty}", "n": "i32", "o": "i32", "B": "constexpr", "FROM_PID": "constexpr",
           "REDUCE": "constexpr"}
    k = _compile(_store_1d, sig, {"B": 256, "FROM_PID": True, "REDUCE": False},
                 aligned=(0, 1, 2) if n_aligned else (0, 1))
    ptx = k.asm["ptx"]
    assert _BULK_STORE.search(ptx)
    assert bool(_MASKED.search(ptx)) == (not n_aligned)


def test_swizzled_32_byte_rows_are_checked(isolated_tritium):
    """fp16 blocks of 16 columns (32-byte swizzled rows) whose rows may end off 16 bytes: the rows' end is checked."""
    sig = {"x": "*fp16", "y": "*fp16", **{k: "i32" for k in ("n0", "n1", "n2", "s0", "s1", "o0", "o1", "o2")},
           "B0": "constexpr", "B1": "constexpr", "B2": "constexpr", "FROM_PID": "constexpr"}
    k = _compile(_store_3d, sig, {"B0": 2, "B1": 4, "B2": 16, "FROM_PID": True}, aligned=(0, 1, 5, 6, 9))
    assert _BULK_STORE.search(k.asm["ptx"]) and _MASKED.search(k.asm["ptx"])


@triton.jit
def _store_2d(x, y, m, n, stride, B0: tl.constexpr, B1: tl.constexpr):
    pm, pn = tl.program_id(0) * B0, tl.program_id(1) * B1
    v = tl.load(x + (pm + tl.arange(0, B0))[:, None] * B1 + tl.arange(0, B1)[None, :])
    tl.make_tensor_descriptor(y, [m, n], [stride, 1], [B0, B1]).store([pm, pn], v)


@pytest.mark.parametrize("ty,cols", [("i8", 32), ("i8", 64), ("fp16", 16), ("fp16", 32), ("fp16", 64), ("fp32", 32)],
                         ids=["i8-32B", "i8-64B", "fp16-32B", "fp16-64B", "fp16-128B", "fp32-128B"])
@pytest.mark.parametrize("n_aligned", [False, True], ids=["rows-end-anywhere", "rows-end-on-16-bytes"])
def test_default_2d_store_checks_the_rows_end(isolated_tritium, ty, cols, n_aligned):
    """Without every rank's TMA too: the H200 showed the default path's 2-D int8 stores into rows ending 40 bytes
    in writing past that end, and fp16/fp32 rows ending 72/152 bytes in with 128-byte swizzle too
    (tests/gpu/test_tma_store_row_end.py): every store whose rows are not known to end on 16 bytes checks it."""
    sig = {"x": f"*{ty}", "y": f"*{ty}", "m": "i32", "n": "i32", "stride": "i32", "B0": "constexpr",
           "B1": "constexpr"}
    k = _compile(_store_2d, sig, {"B0": 8, "B1": cols}, aligned=(0, 1, 3, 4) if n_aligned else (0, 1, 4),
                 every_rank=False)
    ptx = k.asm["ptx"]
    assert _BULK_STORE.search(ptx)
    assert bool(_MASKED.search(ptx)) == (not n_aligned)


@triton.jit
def _seven(y, o, o2, n, B: tl.constexpr):
    p = tl.program_id(0)
    d = tl.make_tensor_descriptor(y, [4096], [1], [B])
    v = tl.zeros([B], tl.float32)
    tl.assume(o >= 0)
    d.store([o + p * B], v)                   # an argument the kernel assumes non-negative: proved
    d.store([tl.multiple_of(o2, 16)], v)      # a multiple of 16 may be negative: checked
    s = p * B
    t = 2048 + p * B
    for i in range(0, n):
        tl.assume(o2 >= 0)                    # inside the loop only: says nothing where o2 is defined
        s += B                                # carried, up from a non-negative start: proved
        t -= B                                # carried, down: checked
    d.store([s], v)
    d.store([t], v)
    d.store([o2], v)                          # checked
    if n > 5:
        q = (p >> 1) * B
    else:
        q = 2 * B
    d.store([q], v)                           # non-negative on both sides of the if: proved
    d.store([tl.where(n > 3, p * B, 16)], v)  # a select of two: proved


def test_what_else_is_proved_non_negative(isolated_tritium):
    """tl.assume bounding a value below by 0 where the value is defined, loop-carried values up from a
    non-negative start, both sides of an if or a select, right shifts: proved; a tl.multiple_of hint, a value
    counting down, an assume placed elsewhere: checked (descriptor_range.py)."""
    k = _compile(_seven, {"y": "*fp32", "o": "i32", "o2": "i32", "n": "i32", "B": "constexpr"}, {"B": 256},
                 aligned=(0, 1, 2))
    llir = k.asm["llir"]
    assert len(_BULK_STORE.findall(llir)) == 7
    assert len(re.findall(r"^bulkneg\d*:", llir, re.M)) == 3


def test_unchecked_path_is_a_loop_over_shared_memory(isolated_tritium):
    """A store whose start or rows' end is checked at run time goes the other way in a loop over the block's
    shared-memory copy (descriptor_fallback.py), not in per-element stores unrolled from registers: one or two
    global stores in the PTX however large the block (before: 64 x 128 fp16 unrolled, 64 of them)."""
    sig = {"x": "*fp16", "y": "*fp16", "m": "i32", "n": "i32", "stride": "i32", "B0": "constexpr",
           "B1": "constexpr"}
    k = _compile(_store_2d, sig, {"B0": 64, "B1": 128}, aligned=(0, 1, 4))
    ptx = k.asm["ptx"]
    assert len(_BULK_STORE.findall(ptx)) == 2
    assert 1 <= len(_MASKED.findall(ptx)) <= 4
    assert re.search(r"^dsloop\d+:", k.asm["llir"], re.M)


def test_deferred_store_checks_with_the_loop(isolated_tritium):
    """examples/08's tile store with its bulk copies' read deferred (TRITIUM_NVIDIA_DEFER_STORE_WAIT) and a start
    that is not proved non-negative (tile ids through cdiv of arguments): the other path is the loop over the
    tile's own buffer too (descriptor_store_deferred.py), not 128 unrolled global stores."""
    import importlib.util
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    spec = importlib.util.spec_from_file_location("ex08_start", os.path.join(root, "examples",
                                                                           "08-persistent-matmul-descriptors.py"))
    ex = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex)
    from tritium import plugins
    from tritium_nvidia.knobs import nvidia
    sig = {"a_desc": "tensordesc<fp16[128, 64]>", "b_desc": "tensordesc<fp16[256, 64]>",
           "c_desc": "tensordesc<fp16[128, 256]>", "M": "i32", "N": "i32", "K": "i32", "BLOCK_M": "constexpr",
           "BLOCK_N": "constexpr", "BLOCK_K": "constexpr", "GROUP_M": "constexpr", "NUM_SMS": "constexpr",
           "WARP_SPECIALIZE": "constexpr"}
    consts = dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8, NUM_SMS=132, WARP_SPECIALIZE=False)
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(reg), nvidia.scope():
        nvidia.tma_ranks = True
        nvidia.defer_store_wait = True
        k = tritium.compile(ASTSource(ex.matmul_persistent, sig, consts, {(2, 2): [["tt.divisibility", 16]]}),
                            target=GPUTarget("cuda", 90, 32), options={"num_warps": 8, "num_stages": 3})
    ptx = k.asm["ptx"]
    assert "cp.async.bulk.commit_group" in ptx and len(_BULK_STORE.findall(ptx)) == 4
    assert len(re.findall(r"^bulkneg\d*:", k.asm["llir"], re.M)) == 1
    assert 1 <= len(_MASKED.findall(ptx)) <= 4


@triton.jit
def _store_2d_at(x, y, m, n, stride, o, B0: tl.constexpr, B1: tl.constexpr):
    pm, pn = tl.program_id(0) * B0, tl.program_id(1) * B1
    v = tl.load(x + (pm + tl.arange(0, B0))[:, None] * B1 + tl.arange(0, B1)[None, :])
    tl.make_tensor_descriptor(y, [m, n], [stride, 1], [B0, B1]).store([o + pm, pn], v)


@pytest.mark.parametrize("every_rank", [False, True], ids=["2d-only", "every-rank"])
def test_2d_store_start_checked_unless_proved(isolated_tritium, every_rank):
    """A 2-D store at a start that may be negative (an offset argument) checks it with or without every rank's
    TMA: at a negative start it stores element by element (descriptor_fallback.py) where a bulk store faults, as
    Triton 3.6's does. Rows known to end on 16 bytes here, so the start is the only check."""
    sig = {"x": "*fp16", "y": "*fp16", "m": "i32", "n": "i32", "stride": "i32", "o": "i32", "B0": "constexpr",
           "B1": "constexpr"}
    k = _compile(_store_2d_at, sig, {"B0": 8, "B1": 64}, aligned=(0, 1, 3, 4, 5), every_rank=every_rank)
    assert _BULK_STORE.search(k.asm["ptx"])
    assert len(re.findall(r"^bulkneg\d*:", k.asm["llir"], re.M)) == 1


def _ptxas_registers(ptx: str, tmp_path) -> int:
    import subprocess
    p = tmp_path / "k.ptx"
    p.write_text(ptx)
    exe = os.environ.get("TRITON_PTXAS_PATH") or shutil.which("ptxas")
    r = subprocess.run([exe, "-arch=sm_90a", "-v", str(p), "-o", str(tmp_path / "k.cubin")], capture_output=True,
                       text=True, check=True)
    return int(re.search(r"Used (\d+) registers", r.stderr).group(1))


def test_checked_store_keeps_the_registers(isolated_tritium, tmp_path):
    """examples/08's tile store with its start checked (tile ids through cdiv of arguments: not proved) needs no
    more registers than the same kernel whose starts a tl.assume proves (no check): the fallback's values stay
    in its cold block (TmaHooks.cold_value). Before, LLVM hoisted C's shape and strides in 64 bits and the
    thread's offsets to the kernel's entry: 158 registers against 154 at fp16 128x256x64."""
    from tritium import plugins
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    src = open(os.path.join(root, "examples", "08-persistent-matmul-descriptors.py")).read()
    store = "        c_desc.store([offs_am, offs_bn]"
    assert src.count(store) == 1
    proved = src.replace(store, "        tl.assume(offs_am >= 0)\n        tl.assume(offs_bn >= 0)\n" + store)
    sig = {"a_desc": "tensordesc<fp16[128, 64]>", "b_desc": "tensordesc<fp16[256, 64]>",
           "c_desc": "tensordesc<fp16[128, 256]>", "M": "i32", "N": "i32", "K": "i32", "BLOCK_M": "constexpr",
           "BLOCK_N": "constexpr", "BLOCK_K": "constexpr", "GROUP_M": "constexpr", "NUM_SMS": "constexpr",
           "WARP_SPECIALIZE": "constexpr"}
    consts = dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8, NUM_SMS=132, WARP_SPECIALIZE=False)
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    out = {}
    for name, text in (("checked", src), ("proved", proved)):
        path = tmp_path / f"ex08_{name}.py"
        path.write_text(text)
        import importlib.util
        spec = importlib.util.spec_from_file_location(f"ex08_{name}", path)
        ex = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(ex)
        from tritium_nvidia.knobs import nvidia
        with plugins.use(reg), nvidia.scope():
            # the store's fallback alone: H2's tile prefetch (default on) keeps the next tile's coordinates live
            # through the epilogue, 2 registers more with the check than without (160 / 158, one CTA per SM)
            nvidia.prefetch_tiles = 0
            k = tritium.compile(ASTSource(ex.matmul_persistent, sig, consts, {(2, 2): [["tt.divisibility", 16]]}),
                                target=GPUTarget("cuda", 90, 32), options={"num_warps": 8, "num_stages": 3})
        out[name] = (len(re.findall(r"^bulkneg\d*:", k.asm["llir"], re.M)), _ptxas_registers(k.asm["ptx"], tmp_path))
    assert out["checked"][0] == 1 and out["proved"][0] == 0
    assert out["checked"][1] <= out["proved"][1], out


@triton.jit
def _store_at_dag(x, y, n, B: tl.constexpr, R: tl.constexpr):
    v = tl.load(x + tl.arange(0, B))
    d = tl.make_tensor_descriptor(y, [n], [1], [B])
    s = tl.program_id(0) + 1
    for _ in tl.static_range(R):
        s = (s + s) ^ (s * 3)       # each value used three times: a DAG, not a tree
    d.store([s * B], v)


def test_sign_analysis_visits_each_value_once(isolated_tritium, monkeypatch):
    # walked as a tree, the start's 8 levels were 32805 queries (12 levels: 2.6 million, 185 s of compile time)
    from tritium.gpu.lower import descriptor_range
    queries = []
    inner = descriptor_range.provably_nonnegative

    def counted(*args, **kwargs):
        queries.append(1)
        return inner(*args, **kwargs)
    monkeypatch.setattr(descriptor_range, "provably_nonnegative", counted)
    k = _compile(_store_at_dag, {"x": "*fp32", "y": "*fp32", "n": "i32", "B": "constexpr", "R": "constexpr"},
                 {"B": 512, "R": 8}, aligned=(0, 1, 2))
    ptx = k.asm["ptx"]
    assert _BULK_STORE.search(ptx) and not _MASKED.search(ptx), "the start is proved: no check, no per-element path"
    assert len(queries) < 500, len(queries)
