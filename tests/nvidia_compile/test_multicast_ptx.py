"""TMA multicast in a split cluster (``num_ctas > 1``, gpu/lower/multicast.py), checked in the PTX without a GPU:
each CTA copies 1/num_ctas of A's box (a smaller tensor map, passed as a parameter) and multicasts it to every
CTA of the cluster (mask 0b11 / 0b1111); B, which the split shares out, is copied as before; a cluster barrier
comes after the stage barriers' initialization, before each refill and after the loop. Off with the knob, with
num_ctas=1, and where A's part would not start a whole swizzle pattern. ptxas assembles every variant."""
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

MULTICAST = re.compile(r"cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.mbarrier::complete_tx::bytes"
                       r"\.multicast::cluster \[%r\d+\], \[%rd\d+, \{%r\d+, %r\d+\}\], \[%r\d+\], %rs\d+;")


@triton.jit
def _desc_mm(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        acc = tl.dot(a_desc.load([pm * BM, k]), b_desc.load([k, pn * BN]), acc)
    c_desc.store([pm * BM, pn * BN], acc.to(tl.float16))


def _compile(BM=128, BN=256, BK=64, multicast=True, release="cluster_barrier", **options):
    from tritium import plugins
    from tritium_nvidia.knobs import nvidia
    sig = {"a_desc": f"tensordesc<fp16[{BM}, {BK}]>", "b_desc": f"tensordesc<fp16[{BK}, {BN}]>",
           "c_desc": f"tensordesc<fp16[{BM}, {BN}]>", "K": "i32", "BM": "constexpr", "BN": "constexpr",
           "BK": "constexpr"}
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(reg), nvidia.scope():
        nvidia.multicast = multicast
        nvidia.multicast_release = release
        return tritium.compile(ASTSource(_desc_mm, sig, {"BM": BM, "BN": BN, "BK": BK}, {}),
                               target=GPUTarget("cuda", 90, 32), options={"num_warps": 8, "num_stages": 3, **options})


def _loop(ptx: str) -> str:
    """The pipelined loop's body: from the stage wait to the back edge."""
    start = ptx.index("mbarrier.try_wait.parity")
    return ptx[start:ptx.index("wgmma.wait_group.sync.aligned 0", start)]


@pytest.mark.parametrize("ctas", [2, 4])
def test_a_is_multicast(isolated_tritium, ctas):
    k = _compile(num_ctas=ctas)
    ptx = k.asm["ptx"]
    # the prologue's S - 1 = 2 stages and the loop's refill each multicast A's part once
    assert len(MULTICAST.findall(ptx)) == 3, ptx
    assert re.search(rf"mov\.[bu]16\s+%rs\d+, {(1 << ctas) - 1};", ptx)
    # A's part: a map of 128 / num_ctas rows, this CTA's rows starting rank * 128 / num_ctas further down
    maps = k.metadata_dict["tensor_map_params"]
    assert {"args": maps[0]["args"], "box": [64, 128 // ctas]} in [{"args": m["args"], "box": m["box"]}
                                                                  for m in maps[1:]]
    assert re.search(r"%cluster_ctarank", ptx)
    # B (split along N) is not multicast; each CTA copies its own part, as without multicast
    loop = _loop(ptx)
    assert len(re.findall(r"cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.mbarrier::complete_tx::bytes "
                          r"\[", loop)) == 256 // ctas // 64
    # a stage is refilled only after every CTA of the cluster is done with it
    arrive = loop.index("barrier.cluster.arrive.release.aligned")
    assert loop.index("wgmma.wait_group.sync.aligned 1") < arrive < loop.index("barrier.cluster.wait.acquire") \
        < MULTICAST.search(loop).start()
    # the barriers' init is fenced for the cluster and met at before the first copy; and once after the loop
    head = ptx[:ptx.index("mbarrier.try_wait.parity")]
    assert head.index("fence.mbarrier_init.release.cluster") < head.index("barrier.cluster.wait") \
        < MULTICAST.search(head).start()
    tail = ptx[ptx.index("wgmma.wait_group.sync.aligned 0"):]
    assert tail.index("barrier.cluster.wait.acquire") < tail.index("mbarrier.inval")
    assert ptx.count("barrier.cluster.wait.acquire") == 3


@pytest.mark.parametrize("case", ["knob off", "one CTA", "parts not whole swizzle patterns"])
def test_no_multicast(isolated_tritium, case):
    if case == "knob off":
        k = _compile(num_ctas=2, multicast=False)
    elif case == "one CTA":
        k = _compile(num_ctas=1)
    else:
        # 16 rows of A over 4 CTAs: 4-row parts of 128-byte rows, half a swizzle pattern
        k = _compile(BM=16, BN=256, num_ctas=4)
    ptx = k.asm["ptx"]
    assert "multicast::cluster" not in ptx and "barrier.cluster" not in ptx
    assert "cp.async.bulk.tensor.2d.shared::cluster.global" in ptx
    if case != "one CTA":
        assert "tritium.cluster_split" in k.asm["ttgir"]


def test_split_marks_the_shared_load(isolated_tritium):
    ttgir = _compile(num_ctas=2).asm["ttgir"]
    loads = [line for line in ttgir.splitlines() if "tt.descriptor_load" in line]
    assert len(loads) == 2
    assert sum("tritium.cluster_shared" in line for line in loads) == 1


@pytest.mark.parametrize("ctas", [2, 4])
def test_stages_handed_back_through_mbarriers(isolated_tritium, ctas):
    """multicast_release "mbarrier": no cluster barrier in the loop; after its CTA's barrier, the refilling thread
    arrives (release, cluster scope) on the stage's "empty" barrier of each CTA (mapa to ranks 0 .. n-1), then waits
    on its own (acquire, cluster scope), and only then copies."""
    ptx = _compile(num_ctas=ctas, release="mbarrier").asm["ptx"]
    assert len(MULTICAST.findall(ptx)) == 3
    loop = _loop(ptx)
    assert "barrier.cluster" not in loop
    assert len(re.findall(r"mapa\.shared::cluster\.u32", loop)) == ctas
    arrives = [m.start() for m in re.finditer(r"mbarrier\.arrive\.release\.cluster\.shared::cluster\.b64", loop)]
    assert len(arrives) == ctas
    wait = loop.index("mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64")
    assert loop.index("wgmma.wait_group.sync.aligned 1") < loop.index("bar.sync") < arrives[0] \
        and arrives[-1] < wait < MULTICAST.search(loop).start()
    # the empty barriers expect one arrival per CTA; the cluster meets after init and after the loop only
    counts = {m.group(1) for m in re.finditer(rf"mov\.[bu]32\s+(%r\d+), {ctas};", ptx)}
    inits = re.findall(r"mbarrier\.init\.shared::cta\.b64 \[%r\d+\], (%r\d+);", ptx)
    assert sum(r in counts for r in inits) == 3, (counts, inits)
    assert ptx.count("barrier.cluster.wait.acquire") == 2
    assert ptx.count("mbarrier.inval") == 6
