"""Whether LLVM's loop strength reduction (LSR, run by the NVPTX code generator) may rewrite a kernel's loops.

LSR re-expresses a loop's addresses as an induction variable plus loop-invariant offsets. In a pipelined loop
of three or more stages, the copies for iteration i + S - 1 read pointers the pipeline carries already advanced
(one 64-bit add per copy per iteration); LSR turns them into "a pointer one iteration behind, plus an invariant",
which costs a 64-bit add (IADD3 + IADD3.X) per copy more and the moves of the extra phis. In the attention
forward (examples/07, sm_90a, ptxas 13.0) that made the loop 523 SASS instructions at D64 and 551 at D128, 493 and
490 without LSR (Triton 3.6: 520 and 581). In single-dot matmul loops LSR's form is the shorter one (examples/03
128x256x64: 124 instructions with it, 135 without), and at two stages (the ahead pointer is the next iteration's)
it is mixed, so it stays on there. On the H200 the forward at the tutorial's configs gained 5-8% (D64) and 11%
(D128) without it; the causal forward and the backward moved within noise (PERF.md, seventh session, H3).

``auto`` (TRITIUM_NVIDIA_LSR, the default): off for kernels with num_stages >= 3 that run a wgmma reading A from
registers (a dot fed by an earlier dot's result in registers: attention's P @ V and the backward's dots), on
elsewhere. ``1``: on everywhere (LLVM's default); ``0``: off everywhere.
"""
from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Iterator

from .knobs import nvidia as nv_knobs

#: a wgmma whose A operand is a register list (``{$32, $33, $34, $35}``) rather than a descriptor
_REGISTER_A = re.compile(r"wgmma\.mma_async[^\"]*\}, \{\$")


def keeps_lsr(llvm_ir: str, num_stages: int) -> bool:
    mode = nv_knobs.lsr
    if mode != "auto":
        return mode == "1"
    return not (num_stages >= 3 and _REGISTER_A.search(llvm_ir) is not None)


@contextmanager
def scope(keep: bool) -> Iterator[None]:
    """LSR off for the block when ``keep`` is false (LLVM's options are process-wide: switched back after)."""
    if keep:
        yield
        return
    import llvmlite.binding as llvm
    llvm.set_option("tritium", "-disable-lsr")
    try:
        yield
    finally:
        llvm.set_option("tritium", "-disable-lsr=false")
