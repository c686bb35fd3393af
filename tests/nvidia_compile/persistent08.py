"""examples/08's persistent descriptor matmul compiled for sm_90a under chosen NVIDIA knobs, as the launch
specializes it at 8192^3: the PTX tests of its tile loop (test_persistent_*.py) share this instead of each
loading the example and spelling its signature."""
from __future__ import annotations

import re
from typing import Any, Optional

from example_modules import example

# C's rows end on 16 bytes (the descriptor's innermost extent, attrs path (2, 2)); M, N, K multiples of 16
ATTRS = {(2, 2): [["tt.divisibility", 16]], (3, ): [["tt.divisibility", 16]], (4, ): [["tt.divisibility", 16]],
         (5, ): [["tt.divisibility", 16]]}


def example08() -> Any:
    """The example's module (loaded once)."""
    return example("08-persistent-matmul-descriptors.py")


def compile08(dt: str = "fp16", bm: int = 128, bn: int = 256, bk: int = 64, stages: int = 3,
              attrs: Optional[dict] = None, c_dt: Optional[str] = None, ws: bool = False, **knobs: Any) -> Any:
    """The kernel with ``dt`` descriptors (C's ``c_dt`` when given: the example stores fp8's product as fp16)
    and ``bm`` x ``bn`` x ``bk`` blocks, 8 warps, ``WARP_SPECIALIZE=ws``, the NVIDIA ``knobs`` (names of tritium_nvidia.knobs.nvidia)
    set for this compile only."""
    import tritium
    from tritium import plugins
    from tritium.backends.compiler import GPUTarget
    from tritium.compiler import ASTSource
    from tritium_nvidia.knobs import nvidia
    sig = {"a_desc": f"tensordesc<{dt}[{bm}, {bk}]>", "b_desc": f"tensordesc<{dt}[{bn}, {bk}]>",
           "c_desc": f"tensordesc<{c_dt or dt}[{bm}, {bn}]>", "M": "i32", "N": "i32", "K": "i32", "BLOCK_M": "constexpr",
           "BLOCK_N": "constexpr", "BLOCK_K": "constexpr", "GROUP_M": "constexpr", "NUM_SMS": "constexpr",
           "WARP_SPECIALIZE": "constexpr"}
    consts = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, NUM_SMS=132, WARP_SPECIALIZE=ws)
    reg = plugins.PluginRegistry.from_objects({"core": "tritium.builtin_plugin", "nvidia": "tritium_nvidia.plugin"})
    with plugins.use(reg), nvidia.scope():
        for name, value in knobs.items():
            setattr(nvidia, name, value)
        return tritium.compile(ASTSource(example08().matmul_persistent, sig, consts, ATTRS if attrs is None else attrs),
                               target=GPUTarget("cuda", 90, 32), options={"num_warps": 8, "num_stages": stages})


def k_loop(ptx: str) -> str:
    """examples/08's K loop in ``ptx``: from the label its back edge jumps to (before its dots) to that back edge
    (after them)."""
    wait1 = ptx.index("wgmma.wait_group.sync.aligned 1")
    best = None
    for m in re.finditer(r"bra(?:\.uni)?\s+(\$L__BB\d+_\d+);", ptx):
        head = ptx.find("\n" + m.group(1) + ":")
        if head != -1 and head < wait1 < m.start() and (best is None or m.start() - head > best[1] - best[0]):
            if ptx.count("wgmma.wait_group.sync.aligned 0", head, m.start()) == 0:
                best = (head, m.end())
    assert best is not None
    return ptx[best[0]:best[1]]
