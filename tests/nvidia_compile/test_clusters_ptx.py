"""``num_ctas > 1`` on sm_90, checked in the PTX without a GPU: the kernel requires its cluster size
(``.explicitcluster``, ``.reqnctapercluster``, so a plain cuLaunchKernel launches clusters), program ids and
counts come from ``%clusterid``/``%nclusterid``, and every CTA but the cluster's first returns before any of the
kernel's work, so no store, atomic, print or assert is done once per CTA. The cubin stage runs ptxas on it. Targets
without clusters (sm_80) and cluster sizes past 8 are refused with the reason; the C launcher multiplies grid x."""
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

SIDE_EFFECTS = re.compile(r"\b(st\.global|atom\.|red\.|call\.uni|call \(|vprintf|cp\.async\.bulk\.tensor|"
                          r"cp\.async\.bulk\.global|__assertfail)")


@triton.jit
def _effects(o, x, N: tl.constexpr):
    t = tl.atomic_add(o, 1)
    v = tl.load(x + tl.arange(0, N))
    tl.atomic_add(o + 1 + tl.arange(0, N), v)
    tl.store(o + 300 + tl.program_id(0) + tl.program_id(1), tl.num_programs(0) + t)
    tl.device_print("v", v)
    tl.device_assert(v < 1000, "big")


@triton.jit
def _mm(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        acc += tl.dot(tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :]),
                      tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :]))
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc.to(tl.float16))


@triton.jit
def _desc_mm(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(a_desc.load([pm * BM, k]), b_desc.load([k, pn * BN]), acc)
    c_desc.store([pm * BM, pn * BN], acc.to(tl.float16))


KERNELS = {
    "effects": (_effects, {"o": "*i32", "x": "*i32", "N": "constexpr"}, {"N": 256}, {"debug": True}),
    "dot": (_mm, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "K": "i32", "BM": "constexpr",
                  "BN": "constexpr", "BK": "constexpr"}, {"BM": 128, "BN": 256, "BK": 64}, {"num_warps": 8}),
    "descriptor": (_desc_mm, {"a_desc": "tensordesc<fp16[128, 64]>", "b_desc": "tensordesc<fp16[64, 256]>",
                              "c_desc": "tensordesc<fp16[128, 256]>", "K": "i32", "BM": "constexpr",
                              "BN": "constexpr", "BK": "constexpr"}, {"BM": 128, "BN": 256, "BK": 64},
                   {"num_warps": 8}),
}


def _compile(which: str, arch: int = 90, **options):
    from tritium import plugins
    fn, sig, consts, opts = KERNELS[which]
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(reg):
        return tritium.compile(ASTSource(fn, sig, consts, {}), target=GPUTarget("cuda", arch, 32),
                               options={**opts, **options})


def _body(ptx: str, name: str) -> list[str]:
    start = ptx.index(f".entry {name}(")
    text = ptx[ptx.index("{", ptx.index(")", start)) + 1:]
    lines, depth = [], 0
    for raw in text.splitlines():
        line = raw.split("//")[0].strip()
        depth += line.count("{") - line.count("}")
        if depth < 0:
            break
        if line and not line.startswith((".reg", ".loc", ".local", ".shared")):
            lines.append(line)
    return lines


def _leader_split(lines: list[str]) -> tuple[list[str], list[str]]:
    """The instructions before the branch on %cluster_ctarank == 0, and those of the block the other CTAs take."""
    rank = next(i for i, line in enumerate(lines) if "%cluster_ctarank" in line)
    reg = re.search(r"(%r\d+), %cluster_ctarank", lines[rank]).group(1)
    setp = next(i for i in range(rank, len(lines)) if re.match(rf"setp\.(eq|ne)\.[bsu]32\s+(%p\d+), {reg}, 0;",
                                                               lines[i]))
    kind, pred = re.match(rf"setp\.(eq|ne)\.[bsu]32\s+(%p\d+)", lines[setp]).groups()
    branch = setp + 1
    m = re.match(rf"@(!?){pred} bra(?:\.uni)?\s+(\$\w+);", lines[branch])
    assert m, lines[setp:setp + 3]
    taken_is_leader = (kind == "eq") != (m.group(1) == "!")
    # the other CTAs go to the branch target, or fall through (possibly through an unconditional bra)
    if taken_is_leader:
        after = lines[branch + 1:]
        if after[0].startswith("bra"):
            label = after[0].split()[-1].rstrip(";")
            after = lines[lines.index(f"{label}:") + 1:]
    else:
        after = lines[lines.index(f"{m.group(2)}:") + 1:]
    rest = []
    for line in after:
        if line.endswith(":"):
            break
        rest.append(line)
    return lines[:setp], rest


@pytest.mark.parametrize("ctas", [2, 4, 8])
@pytest.mark.parametrize("which", list(KERNELS))
def test_cluster_kernel_ptx(isolated_tritium, which, ctas):
    k = _compile(which, num_ctas=ctas)
    ptx = k.asm["ptx"]
    name = KERNELS[which][0].__name__
    assert ".explicitcluster" in ptx and re.search(rf"\.reqnctapercluster {ctas}, 1, 1\b", ptx)
    assert "%ctaid." not in ptx and "%nctaid." not in ptx
    assert "%clusterid.x" in ptx
    assert k.metadata_dict["num_ctas"] == ctas
    split = "tritium.cluster_split" in k.asm["ttgir"]
    # the dots' N (256) is shared out (each CTA at least 16 columns), through pointers or tensor descriptors (each CTA
    # copies its part of B and stores its part of C); the scalar atomic keeps the one-CTA form
    assert split == (which in ("dot", "descriptor"))
    if split:
        # every CTA computes its own columns: no CTA returns early, and the wgmma is N/num_ctas wide
        reg = re.search(r"(%r\d+), %cluster_ctarank", ptx).group(1)
        assert not re.search(rf"setp\.\w+\.[bsu]32\s+%p\d+, {reg}, 0;", ptx)
        assert re.search(rf"(shl\.b32|mul\.lo\.s32)\s+%r\d+, {reg}, ", ptx)    # its columns start at rank * N/num_ctas
        assert re.search(rf"wgmma\.mma_async\.sync\.aligned\.m64n{256 // ctas}k16", ptx)
        one = _compile(which).metadata_dict["shared"]
        assert k.metadata_dict["shared"] < one
        if which == "descriptor":
            assert "cp.async.bulk.tensor" in ptx
        return
    before, others = _leader_split(_body(ptx, name))
    assert not [line for line in before if SIDE_EFFECTS.search(line)], before
    assert others == ["ret;"], others
    if which == "effects":
        assert "%nclusterid.x" in ptx and "%clusterid.y" in ptx
        assert len(re.findall(r"atom\.global", ptx)) == len(re.findall(r"atom\.global", _compile(which).asm["ptx"]))


def test_one_cta_per_program_is_unchanged(isolated_tritium):
    ptx = _compile("effects", num_ctas=1).asm["ptx"]
    assert not re.search(r"\.explicitcluster|\.reqnctapercluster|%cluster_ctarank|%n?clusterid", ptx)
    assert "%ctaid.x" in ptx and "%nctaid.x" in ptx


@pytest.mark.parametrize("ctas,arch,expect", [(2, 80, "requires NVIDIA SM90+ (Hopper): num_ctas=2 runs each program "
                                                         "on a thread-block cluster, and the target is sm_80"),
                                              (4, 89, "requires NVIDIA SM90+ (Hopper)"),
                                              (3, 90, "1, 2, 4 or 8 CTAs"), (16, 90, "1, 2, 4 or 8 CTAs"),
                                              (0, 90, "1, 2, 4 or 8 CTAs")])
def test_unsupported_cluster_sizes_are_refused(isolated_tritium, ctas, arch, expect):
    with pytest.raises(ValueError) as info:
        _compile("effects", arch=arch, num_ctas=ctas)
    text = str(info.value)
    assert f"num_ctas={ctas}" in text and expect in text and "use num_ctas=1" in text


def test_c_launcher_launches_clusters():
    from tritium_nvidia import aot
    header = {"kernel": "k", "tritium_version": "x", "params": [{"name": "n", "type": "i32"}],
              "metadata": {"num_warps": 4, "shared": 0, "arch": "sm_90a", "num_ctas": 4}}
    c = aot.c_launcher(header, b"\0", "k")[".c"].decode()
    assert "cuLaunchKernel(k_fn, gX * 4, gY, gZ, 128, 1, 1, 0, stream, args, 0)" in c
    header["metadata"]["num_ctas"] = 1
    c = aot.c_launcher(header, b"\0", "k")[".c"].decode()
    assert "cuLaunchKernel(k_fn, gX, gY, gZ, 128" in c
